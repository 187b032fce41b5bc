// Jinja2's builtin filters, with Python semantics (plus transformers' tojson).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "runtime/text/jinja_args.h"
#include "runtime/text/jinja_interpreter.h"
#include "runtime/text/jinja_strings.h"

namespace ft::jinja {
namespace {

using FilterFn = Result<Value> (*)(Interpreter&, const Value&, CallArgs&);

Status bad_operand(std::string_view filter, const Value& v) {
  return Status(ErrorCode::kInvalidArgument,
                fmt::format("filter '{}' cannot be applied to a value of type {}", filter, v.type_name()));
}

// "a.b.0": dict keys or list indices, as Jinja2's attribute arguments allow.
Value attribute_path(const Value& item, const std::string& path) {
  Value v = item;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const std::optional<int64_t> index = parse_decimal_digits(part);
    v = index && v.is_list() ? get_item(v, Value(*index)) : get_item(v, Value(part));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return v;
}

// Sort and uniqueness keys: strings fold case unless asked not to.
Value fold_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(ascii_lower(v.as_string()));
  return v;
}

Result<std::vector<Value>> sorted_items(std::vector<Value> items, bool reverse, bool case_sensitive,
                                        const std::string* attribute) {
  Status failure;
  auto key = [&](const Value& v) { return fold_key(attribute ? attribute_path(v, *attribute) : v, case_sensitive); };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    auto c = compare_values(key(a), key(b));
    if (!c.ok()) {
      failure = c.status();
      return false;
    }
    return reverse ? *c > 0 : *c < 0;
  });
  if (!failure.ok()) return failure;
  return items;
}

Result<Value> f_abs(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_int()) return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
  if (v.is_float()) return Value(std::fabs(v.as_float()));
  if (v.is_bool()) return Value(int64_t{v.as_bool()});
  return bad_operand("abs", v);
}

Result<Value> f_attr(Interpreter&, const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(std::string name, str_arg(args, 0, "name", "attr"));
  return get_attribute(v, name);
}

Result<Value> f_capitalize(Interpreter&, const Value& v, CallArgs&) { return Value(python_capitalize(v.str())); }
Result<Value> f_lower(Interpreter&, const Value& v, CallArgs&) { return Value(ascii_lower(v.str())); }
Result<Value> f_upper(Interpreter&, const Value& v, CallArgs&) { return Value(ascii_upper(v.str())); }
Result<Value> f_title(Interpreter&, const Value& v, CallArgs&) { return Value(python_title(v.str())); }
Result<Value> f_safe(Interpreter&, const Value& v, CallArgs&) { return v; }
Result<Value> f_string(Interpreter&, const Value& v, CallArgs&) { return Value(v.str()); }

Result<Value> f_trim(Interpreter&, const Value& v, CallArgs& args) {
  bool has_chars = false;
  FT_ASSIGN_OR_RETURN(std::string chars, str_arg(args, 0, "chars", "trim", &has_chars));
  return Value(python_strip(v.str(), has_chars ? &chars : nullptr, StripSide::kBoth));
}

Result<Value> f_length(Interpreter&, const Value& v, CallArgs&) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return Value(int64_t{0});
    case Value::Kind::kString: return Value(static_cast<int64_t>(code_point_count(v.as_string())));
    case Value::Kind::kList: return Value(static_cast<int64_t>(v.as_list().items.size()));
    case Value::Kind::kDict: return Value(static_cast<int64_t>(v.as_dict().entries.size()));
    default:
      return Status(ErrorCode::kInvalidArgument, fmt::format("object of type '{}' has no len()", v.type_name()));
  }
}

Result<Value> f_default(Interpreter&, const Value& v, CallArgs& args) {
  const Value* fallback = args.get(0, "default_value");
  FT_ASSIGN_OR_RETURN(bool boolean, bool_arg(args, 1, "boolean", false, "default"));
  if (v.is_undefined() || (boolean && !v.truthy())) return fallback ? *fallback : Value(std::string());
  return v;
}

Result<Value> f_escape(Interpreter&, const Value& v, CallArgs&) {
  std::string out;
  for (char c : v.str()) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return Value(std::move(out));
}

Result<Value> f_first(Interpreter&, const Value& v, CallArgs&) {
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Result<Value> f_last(Interpreter&, const Value& v, CallArgs&) {
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Result<Value> f_list(Interpreter&, const Value& v, CallArgs&) {
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  return Value::list(std::move(items));
}

Result<Value> f_reverse(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_string()) {
    auto cps = split_code_points(v.as_string());
    std::string out;
    for (auto it = cps.rbegin(); it != cps.rend(); ++it) out.append(*it);
    return Value(std::move(out));
  }
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}

Result<Value> f_items(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_undefined()) return Value::list();
  if (!v.is_dict() || v.is_namespace()) return bad_operand("items", v);
  std::vector<Value> out;
  for (const auto& [k, val] : v.as_dict().entries) out.push_back(Value::tuple({Value(k), val}));
  return Value::list(std::move(out));
}

Result<Value> f_join(Interpreter&, const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(std::string sep, str_arg(args, 0, "d", "join"));
  bool has_attr = false;
  FT_ASSIGN_OR_RETURN(std::string attr, str_arg(args, 1, "attribute", "join", &has_attr));
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += (has_attr ? attribute_path(items[i], attr) : items[i]).str();
  }
  return Value(std::move(out));
}

Result<Value> f_int(Interpreter&, const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(int64_t def, int_arg(args, 0, "default", 0, "int"));
  if (v.is_int()) return v;
  if (v.is_bool()) return Value(int64_t{v.as_bool()});
  if (v.is_float()) return std::isfinite(v.as_float()) ? Value(static_cast<int64_t>(v.as_float())) : Value(def);
  if (!v.is_string()) return Value(def);
  std::string s = python_strip(v.as_string(), nullptr, StripSide::kBoth);
  // Python's int()/float() take decimal text only (strtod would also read hex).
  if (s.find_first_not_of("0123456789+-._eE") != std::string::npos) return Value(def);
  try {
    size_t used = 0;
    int64_t n = std::stoll(s, &used, 10);
    if (used == s.size()) return Value(n);
    double d = std::stod(s, &used);
    if (used == s.size() && std::isfinite(d)) return Value(static_cast<int64_t>(d));
  } catch (const std::exception&) {
  }
  return Value(def);
}

Result<Value> f_float(Interpreter&, const Value& v, CallArgs& args) {
  const Value* def_arg = args.get(0, "default");
  Value def = def_arg ? *def_arg : Value(0.0);
  if (v.is_number() || v.is_bool()) return Value(v.as_number());
  if (!v.is_string()) return def;
  std::string s = python_strip(v.as_string(), nullptr, StripSide::kBoth);
  try {
    size_t used = 0;
    double d = std::stod(s, &used);
    if (used == s.size()) return Value(d);
  } catch (const std::exception&) {
  }
  return def;
}

Result<Value> f_replace(Interpreter&, const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(std::string from, str_arg(args, 0, "old", "replace"));
  FT_ASSIGN_OR_RETURN(std::string to, str_arg(args, 1, "new", "replace"));
  FT_ASSIGN_OR_RETURN(int64_t count, int_arg(args, 2, "count", -1, "replace"));
  return Value(python_replace(v.str(), from, to, count));
}

Result<Value> f_round(Interpreter&, const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(int64_t precision, int_arg(args, 0, "precision", 0, "round"));
  FT_ASSIGN_OR_RETURN(std::string method, str_arg(args, 1, "method", "round"));
  if (!v.is_number() && !v.is_bool()) return bad_operand("round", v);
  double scale = std::pow(10.0, static_cast<double>(precision));
  if (method == "ceil") return Value(std::ceil(v.as_number() * scale) / scale);
  if (method == "floor") return Value(std::floor(v.as_number() * scale) / scale);
  if (!method.empty() && method != "common") {
    return Status(ErrorCode::kInvalidArgument, "round(): method must be common, ceil or floor");
  }
  if (precision < 0 || precision > 300) return Value(std::nearbyint(v.as_number() * scale) / scale);
  // Python rounds the exact binary value half to even (round(2.675, 2) is 2.67);
  // printf does the same, where scaling first would round 267.49999... up.
  char buf[400];
  std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), v.as_number());
  return Value(std::strtod(buf, nullptr));
}

Result<Value> f_indent(Interpreter&, const Value& v, CallArgs& args) {
  const Value* width = args.get(0, "width");
  std::string pad = width && width->is_string() ? width->as_string()
                                                : std::string(width && width->is_int() ? width->as_int() : 4, ' ');
  FT_ASSIGN_OR_RETURN(bool first, bool_arg(args, 1, "first", false, "indent"));
  FT_ASSIGN_OR_RETURN(bool blank, bool_arg(args, 2, "blank", false, "indent"));
  // Python's do_indent appends a newline and uses splitlines(), so a trailing
  // newline survives and an empty string still yields one (empty) line.
  std::vector<std::string> lines;
  std::string s = v.str() + "\n";
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find_first_of("\r\n", start);
    if (nl == std::string::npos) {
      lines.push_back(s.substr(start));
      break;
    }
    lines.push_back(s.substr(start, nl - start));
    start = nl + (s.compare(nl, 2, "\r\n") == 0 ? 2 : 1);
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    bool indent_it = i == 0 ? first : (blank || !lines[i].empty());
    if (indent_it) out += pad;
    out += lines[i];
  }
  return Value(std::move(out));
}

Result<Value> f_sort(Interpreter&, const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(bool reverse, bool_arg(args, 0, "reverse", false, "sort"));
  FT_ASSIGN_OR_RETURN(bool case_sensitive, bool_arg(args, 1, "case_sensitive", false, "sort"));
  bool has_attr = false;
  FT_ASSIGN_OR_RETURN(std::string attr, str_arg(args, 2, "attribute", "sort", &has_attr));
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  FT_ASSIGN_OR_RETURN(items, sorted_items(std::move(items), reverse, case_sensitive, has_attr ? &attr : nullptr));
  return Value::list(std::move(items));
}

Result<Value> f_dictsort(Interpreter&, const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(bool case_sensitive, bool_arg(args, 0, "case_sensitive", false, "dictsort"));
  FT_ASSIGN_OR_RETURN(std::string by, str_arg(args, 1, "by", "dictsort"));
  FT_ASSIGN_OR_RETURN(bool reverse, bool_arg(args, 2, "reverse", false, "dictsort"));
  if (!v.is_dict()) return bad_operand("dictsort", v);
  std::vector<Value> pairs;
  for (const auto& [k, val] : v.as_dict().entries) pairs.push_back(Value::tuple({Value(k), val}));
  std::string attr = by == "value" ? "1" : "0";
  FT_ASSIGN_OR_RETURN(pairs, sorted_items(std::move(pairs), reverse, case_sensitive, &attr));
  return Value::list(std::move(pairs));
}

Result<Value> f_unique(Interpreter&, const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(bool case_sensitive, bool_arg(args, 0, "case_sensitive", false, "unique"));
  bool has_attr = false;
  FT_ASSIGN_OR_RETURN(std::string attr, str_arg(args, 1, "attribute", "unique", &has_attr));
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  std::vector<Value> out, seen;
  for (const Value& item : items) {
    Value key = fold_key(has_attr ? attribute_path(item, attr) : item, case_sensitive);
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return values_equal(s, key); })) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return Value::list(std::move(out));
}

Result<Value> min_max(const Value& v, CallArgs& args, bool want_max) {
  FT_ASSIGN_OR_RETURN(bool case_sensitive, bool_arg(args, 0, "case_sensitive", false, "min"));
  bool has_attr = false;
  FT_ASSIGN_OR_RETURN(std::string attr, str_arg(args, 1, "attribute", "min", &has_attr));
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  FT_ASSIGN_OR_RETURN(items, sorted_items(std::move(items), false, case_sensitive, has_attr ? &attr : nullptr));
  return want_max ? items.back() : items.front();
}
Result<Value> f_max(Interpreter&, const Value& v, CallArgs& args) { return min_max(v, args, true); }
Result<Value> f_min(Interpreter&, const Value& v, CallArgs& args) { return min_max(v, args, false); }

Result<Value> f_sum(Interpreter&, const Value& v, CallArgs& args) {
  bool has_attr = false;
  FT_ASSIGN_OR_RETURN(std::string attr, str_arg(args, 0, "attribute", "sum", &has_attr));
  const Value* start = args.get(1, "start");
  Value total = start ? *start : Value(int64_t{0});
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  for (const Value& item : items) {
    FT_ASSIGN_OR_RETURN(total, binary_op("+", total, has_attr ? attribute_path(item, attr) : item));
  }
  return total;
}

Result<Value> f_wordcount(Interpreter&, const Value& v, CallArgs&) {
  int64_t words = 0;
  bool in_word = false;
  for (char c : v.str()) {
    bool word_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                     static_cast<unsigned char>(c) >= 0x80;
    if (word_char && !in_word) ++words;
    in_word = word_char;
  }
  return Value(words);
}

Result<Value> f_tojson(Interpreter&, const Value& v, CallArgs& args) {
  JsonOptions o;
  FT_ASSIGN_OR_RETURN(o.indent, int_arg(args, 0, "indent", -1, "tojson"));
  FT_ASSIGN_OR_RETURN(o.ensure_ascii, bool_arg(args, 1, "ensure_ascii", false, "tojson"));
  FT_ASSIGN_OR_RETURN(o.sort_keys, bool_arg(args, 3, "sort_keys", false, "tojson"));
  if (const Value* sep = args.get(2, "separators"); sep && !sep->is_none()) {
    if (!sep->is_list() || sep->as_list().items.size() != 2 || !sep->as_list().items[0].is_string() ||
        !sep->as_list().items[1].is_string()) {
      return Status(ErrorCode::kInvalidArgument, "tojson(): separators must be a pair of strings");
    }
    o.item_separator = sep->as_list().items[0].as_string();
    o.key_separator = sep->as_list().items[1].as_string();
  }
  FT_ASSIGN_OR_RETURN(std::string text, to_json(v, o));
  return Value(std::move(text));
}

// map(attribute='x', default=d) or map('filter', args...).
Result<Value> f_map(Interpreter& interp, const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  std::vector<Value> out;
  if (const Value* attr = args.get(SIZE_MAX, "attribute")) {
    const Value* def = args.get(SIZE_MAX, "default");
    for (const Value& item : items) {
      Value got = attribute_path(item, attr->str());
      out.push_back(got.is_undefined() && def ? *def : got);
    }
    return Value::list(std::move(out));
  }
  if (args.positional.empty() || !args.positional[0].is_string()) {
    return Status(ErrorCode::kInvalidArgument, "map(): give a filter name or attribute=");
  }
  std::string name = args.positional[0].as_string();
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const Value& item : items) {
    FT_ASSIGN_OR_RETURN(Value mapped, apply_filter(interp, name, item, rest));
    out.push_back(std::move(mapped));
  }
  return Value::list(std::move(out));
}

// select/reject('test', args...) and selectattr/rejectattr('attr', 'test', args...).
Result<Value> select_items(const Value& v, CallArgs& args, bool by_attr, bool keep_matches) {
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  size_t next = 0;
  std::string attr;
  if (by_attr) {
    if (args.positional.empty() || !args.positional[0].is_string()) {
      return Status(ErrorCode::kInvalidArgument, "selectattr/rejectattr need an attribute name");
    }
    attr = args.positional[next++].as_string();
  }
  std::string test;
  if (next < args.positional.size()) {
    if (!args.positional[next].is_string()) return Status(ErrorCode::kInvalidArgument, "the test name must be a string");
    test = args.positional[next++].as_string();
  }
  CallArgs test_args;
  test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(next), args.positional.end());
  std::vector<Value> out;
  for (const Value& item : items) {
    Value subject = by_attr ? attribute_path(item, attr) : item;
    bool match = subject.truthy();
    if (!test.empty()) {
      FT_ASSIGN_OR_RETURN(match, apply_test(test, subject, test_args));
    }
    if (match == keep_matches) out.push_back(item);
  }
  return Value::list(std::move(out));
}
Result<Value> f_select(Interpreter&, const Value& v, CallArgs& a) { return select_items(v, a, false, true); }
Result<Value> f_reject(Interpreter&, const Value& v, CallArgs& a) { return select_items(v, a, false, false); }
Result<Value> f_selectattr(Interpreter&, const Value& v, CallArgs& a) { return select_items(v, a, true, true); }
Result<Value> f_rejectattr(Interpreter&, const Value& v, CallArgs& a) { return select_items(v, a, true, false); }

const std::unordered_map<std::string, FilterFn>& filters() {
  static const std::unordered_map<std::string, FilterFn> kFilters = {
      {"abs", f_abs},         {"attr", f_attr},
      {"capitalize", f_capitalize}, {"count", f_length},
      {"d", f_default},       {"default", f_default},
      {"dictsort", f_dictsort}, {"e", f_escape},
      {"escape", f_escape},   {"first", f_first},
      {"float", f_float},     {"indent", f_indent},
      {"int", f_int},         {"items", f_items},
      {"join", f_join},       {"last", f_last},
      {"length", f_length},   {"list", f_list},
      {"lower", f_lower},     {"map", f_map},
      {"max", f_max},         {"min", f_min},
      {"reject", f_reject},   {"rejectattr", f_rejectattr},
      {"replace", f_replace}, {"reverse", f_reverse},
      {"round", f_round},     {"safe", f_safe},
      {"select", f_select},   {"selectattr", f_selectattr},
      {"sort", f_sort},       {"string", f_string},
      {"sum", f_sum},         {"title", f_title},
      {"tojson", f_tojson},   {"trim", f_trim},
      {"unique", f_unique},   {"upper", f_upper},
      {"wordcount", f_wordcount},
  };
  return kFilters;
}

}  // namespace

Result<Value> apply_filter(Interpreter& interp, const std::string& name, const Value& operand, CallArgs& args) {
  auto it = filters().find(name);
  if (it == filters().end()) return Status(ErrorCode::kInvalidArgument, fmt::format("no filter named '{}'", name));
  return it->second(interp, operand, args);
}

}  // namespace ft::jinja
