// Methods of str, dict and list values that templates call (`s.startswith(...)`,
// `d.items()`), and the global functions transformers provides.
#include <chrono>
#include <ctime>

#include "runtime/text/jinja_args.h"
#include "runtime/text/jinja_interpreter.h"
#include "runtime/text/jinja_strings.h"

namespace ft::jinja {
namespace {

// Most ranges in templates are a few items; this bounds a hostile template.
constexpr int64_t kMaxRange = 1 << 20;

using Method = Result<Value> (*)(const Value& self, CallArgs& args);

Result<bool> affix_match(const Value& self, CallArgs& args, bool prefix) {
  const char* fn = prefix ? "startswith" : "endswith";
  const Value* arg = args.get(0, "prefix");
  if (!arg) return Status(ErrorCode::kInvalidArgument, fmt::format("{}() takes at least 1 argument", fn));
  std::vector<Value> options = arg->is_list() ? arg->as_list().items : std::vector<Value>{*arg};
  const std::string& s = self.as_string();
  for (const Value& o : options) {
    if (!o.is_string()) return arg_type_error(fn, "prefix", "a str or a tuple of str", o);
    const std::string& a = o.as_string();
    if (a.size() > s.size()) continue;
    if (prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0) return true;
  }
  return false;
}

Result<Value> m_startswith(const Value& self, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(bool hit, affix_match(self, args, true));
  return Value(hit);
}
Result<Value> m_endswith(const Value& self, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(bool hit, affix_match(self, args, false));
  return Value(hit);
}

Result<Value> split_impl(const Value& self, CallArgs& args, bool from_right) {
  bool has_sep = false;
  FT_ASSIGN_OR_RETURN(std::string sep, str_arg(args, 0, "sep", "split", &has_sep));
  if (has_sep && sep.empty()) return Status(ErrorCode::kInvalidArgument, "split(): empty separator");
  FT_ASSIGN_OR_RETURN(int64_t maxsplit, int_arg(args, 1, "maxsplit", -1, "split"));
  std::vector<Value> out;
  for (std::string& part : python_split(self.as_string(), has_sep ? &sep : nullptr, maxsplit, from_right)) {
    out.emplace_back(std::move(part));
  }
  return Value::list(std::move(out));
}
Result<Value> m_split(const Value& self, CallArgs& args) { return split_impl(self, args, false); }
Result<Value> m_rsplit(const Value& self, CallArgs& args) { return split_impl(self, args, true); }

Result<Value> strip_impl(const Value& self, CallArgs& args, StripSide side) {
  bool has_chars = false;
  FT_ASSIGN_OR_RETURN(std::string chars, str_arg(args, 0, "chars", "strip", &has_chars));
  return Value(python_strip(self.as_string(), has_chars ? &chars : nullptr, side));
}
Result<Value> m_strip(const Value& s, CallArgs& a) { return strip_impl(s, a, StripSide::kBoth); }
Result<Value> m_lstrip(const Value& s, CallArgs& a) { return strip_impl(s, a, StripSide::kLeft); }
Result<Value> m_rstrip(const Value& s, CallArgs& a) { return strip_impl(s, a, StripSide::kRight); }
Result<Value> m_upper(const Value& s, CallArgs&) { return Value(ascii_upper(s.as_string())); }
Result<Value> m_lower(const Value& s, CallArgs&) { return Value(ascii_lower(s.as_string())); }
Result<Value> m_title(const Value& s, CallArgs&) { return Value(python_title(s.as_string())); }
Result<Value> m_capitalize(const Value& s, CallArgs&) { return Value(python_capitalize(s.as_string())); }

Result<Value> m_replace(const Value& self, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(std::string from, str_arg(args, 0, "old", "replace"));
  FT_ASSIGN_OR_RETURN(std::string to, str_arg(args, 1, "new", "replace"));
  FT_ASSIGN_OR_RETURN(int64_t count, int_arg(args, 2, "count", -1, "replace"));
  return Value(python_replace(self.as_string(), from, to, count));
}

Result<Value> find_impl(const Value& self, CallArgs& args, bool from_right) {
  FT_ASSIGN_OR_RETURN(std::string sub, str_arg(args, 0, "sub", "find"));
  const std::string& s = self.as_string();
  size_t at = from_right ? s.rfind(sub) : s.find(sub);
  if (at == std::string::npos) return Value(int64_t{-1});
  return Value(static_cast<int64_t>(code_point_count(std::string_view(s).substr(0, at))));
}
Result<Value> m_find(const Value& s, CallArgs& a) { return find_impl(s, a, false); }
Result<Value> m_rfind(const Value& s, CallArgs& a) { return find_impl(s, a, true); }

Result<Value> m_str_count(const Value& self, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(std::string sub, str_arg(args, 0, "sub", "count"));
  const std::string& s = self.as_string();
  if (sub.empty()) return Value(static_cast<int64_t>(code_point_count(s) + 1));
  int64_t n = 0;
  for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
  return Value(n);
}

Result<Value> m_join(const Value& self, CallArgs& args) {
  const Value* items = args.get(0, "iterable");
  if (!items) return Status(ErrorCode::kInvalidArgument, "join() takes exactly one argument");
  FT_ASSIGN_OR_RETURN(std::vector<Value> parts, iterate(*items));
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!parts[i].is_string()) return arg_type_error("join", "iterable", "a sequence of str", parts[i]);
    if (i) out += self.as_string();
    out += parts[i].as_string();
  }
  return Value(std::move(out));
}

// str.format with "{}", "{0}" and "{name}" fields; format specs are not supported.
Result<Value> m_format(const Value& self, CallArgs& args) {
  const std::string& s = self.as_string();
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if ((c == '{' || c == '}') && i + 1 < s.size() && s[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    size_t close = s.find('}', i);
    if (close == std::string::npos) return Status(ErrorCode::kInvalidArgument, "format(): unmatched '{'");
    std::string field = s.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!") != std::string::npos) {
      return Status(ErrorCode::kUnsupported, "format(): format specs and conversions are not supported");
    }
    const Value* v = nullptr;
    if (field.empty()) {
      v = args.get(auto_index++, "");
    } else if (field.find_first_not_of("0123456789") == std::string::npos) {
      const std::optional<int64_t> index = parse_decimal_digits(field);
      v = index ? args.get(static_cast<size_t>(*index), "") : nullptr;
    } else {
      v = args.get(SIZE_MAX, field);
    }
    if (!v) return Status(ErrorCode::kInvalidArgument, fmt::format("format(): no argument for '{{{}}}'", field));
    out += v->str();
    i = close;
  }
  return Value(std::move(out));
}

Result<Value> m_items(const Value& self, CallArgs&) {
  std::vector<Value> out;
  for (const auto& [k, v] : self.as_dict().entries) out.push_back(Value::tuple({Value(k), v}));
  return Value::list(std::move(out));
}
Result<Value> m_keys(const Value& self, CallArgs&) {
  std::vector<Value> out;
  for (const auto& [k, v] : self.as_dict().entries) out.emplace_back(k);
  return Value::list(std::move(out));
}
Result<Value> m_values(const Value& self, CallArgs&) {
  std::vector<Value> out;
  for (const auto& [k, v] : self.as_dict().entries) out.push_back(v);
  return Value::list(std::move(out));
}
Result<Value> m_get(const Value& self, CallArgs& args) {
  const Value* key = args.get(0, "key");
  if (!key) return Status(ErrorCode::kInvalidArgument, "get() takes at least 1 argument");
  if (key->is_string()) {
    if (const Value* v = self.as_dict().find(key->as_string())) return *v;
  }
  const Value* def = args.get(1, "default");
  return def ? *def : Value::none();
}

Result<Value> m_append(const Value& self, CallArgs& args) {
  const Value* item = args.get(0, "object");
  if (!item) return Status(ErrorCode::kInvalidArgument, "append() takes exactly one argument");
  self.as_list().items.push_back(*item);
  return Value::none();
}
Result<Value> m_extend(const Value& self, CallArgs& args) {
  const Value* more = args.get(0, "iterable");
  if (!more) return Status(ErrorCode::kInvalidArgument, "extend() takes exactly one argument");
  FT_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(*more));
  auto& dst = self.as_list().items;
  dst.insert(dst.end(), items.begin(), items.end());
  return Value::none();
}
Result<Value> m_pop(const Value& self, CallArgs& args) {
  auto& items = self.as_list().items;
  FT_ASSIGN_OR_RETURN(int64_t i, int_arg(args, 0, "index", -1, "pop"));
  int64_t n = static_cast<int64_t>(items.size());
  if (i < 0) i += n;
  if (i < 0 || i >= n) return Status(ErrorCode::kInvalidArgument, "pop index out of range");
  Value v = items[static_cast<size_t>(i)];
  items.erase(items.begin() + i);
  return v;
}
Result<Value> m_index(const Value& self, CallArgs& args) {
  const Value* item = args.get(0, "value");
  const auto& items = self.as_list().items;
  for (size_t i = 0; item && i < items.size(); ++i) {
    if (values_equal(items[i], *item)) return Value(static_cast<int64_t>(i));
  }
  return Status(ErrorCode::kInvalidArgument, "list.index(x): x not in list");
}
Result<Value> m_list_count(const Value& self, CallArgs& args) {
  const Value* item = args.get(0, "value");
  int64_t n = 0;
  for (const Value& v : self.as_list().items) n += item && values_equal(v, *item);
  return Value(n);
}

Method find_method(const Value& object, const std::string& name) {
  struct Entry {
    const char* name;
    Method fn;
  };
  static const Entry kStr[] = {{"startswith", m_startswith}, {"endswith", m_endswith}, {"split", m_split},
                               {"rsplit", m_rsplit},         {"strip", m_strip},       {"lstrip", m_lstrip},
                               {"rstrip", m_rstrip},         {"upper", m_upper},       {"lower", m_lower},
                               {"title", m_title},           {"capitalize", m_capitalize},
                               {"replace", m_replace},       {"find", m_find},         {"rfind", m_rfind},
                               {"count", m_str_count},       {"join", m_join},         {"format", m_format}};
  static const Entry kDict[] = {{"items", m_items}, {"keys", m_keys}, {"values", m_values}, {"get", m_get}};
  static const Entry kList[] = {{"append", m_append}, {"extend", m_extend}, {"pop", m_pop},
                                {"index", m_index},   {"count", m_list_count}};
  auto search = [&](const auto& table) -> Method {
    for (const Entry& e : table) {
      if (name == e.name) return e.fn;
    }
    return nullptr;
  };
  if (object.is_string()) return search(kStr);
  if (object.is_dict() && !object.is_namespace()) return search(kDict);
  if (object.is_list()) return search(kList);
  return nullptr;
}

Result<Value> g_range(CallArgs& args) {
  std::vector<int64_t> n;
  for (const Value& v : args.positional) {
    if (!v.is_int() && !v.is_bool()) return arg_type_error("range", "stop", "an int", v);
    n.push_back(v.is_bool() ? int64_t{v.as_bool()} : v.as_int());
  }
  if (n.empty() || n.size() > 3) return Status(ErrorCode::kInvalidArgument, "range() takes 1 to 3 arguments");
  int64_t start = n.size() > 1 ? n[0] : 0;
  int64_t stop = n.size() > 1 ? n[1] : n[0];
  int64_t step = n.size() > 2 ? n[2] : 1;
  if (step == 0) return Status(ErrorCode::kInvalidArgument, "range() arg 3 must not be zero");
  std::vector<Value> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (static_cast<int64_t>(out.size()) >= kMaxRange) {
      return Status(ErrorCode::kInvalidArgument, fmt::format("range() longer than {} items", kMaxRange));
    }
    out.emplace_back(i);
  }
  return Value::list(std::move(out));
}

// namespace(mapping?, **attrs) and dict(mapping?, **items) build the same way.
Result<Value> build_mapping(CallArgs& args, Value target) {
  if (!args.positional.empty()) {
    const Value& init = args.positional[0];
    if (!init.is_dict()) return arg_type_error(target.is_namespace() ? "namespace" : "dict", "mapping", "a dict", init);
    for (const auto& [k, v] : init.as_dict().entries) target.as_dict().set(k, v);
  }
  for (const auto& [k, v] : args.keyword) target.as_dict().set(k, v);
  return target;
}

Result<Value> g_strftime_now(CallArgs& args) {
  FT_ASSIGN_OR_RETURN(std::string format, str_arg(args, 0, "format", "strftime_now"));
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char buf[256];
  size_t n = format.empty() ? 0 : std::strftime(buf, sizeof(buf), format.c_str(), &local);
  return Value(std::string(buf, n));
}

}  // namespace

Value get_method(const Value& object, const std::string& name) {
  Method m = find_method(object, name);
  if (!m) return Value::undefined();
  return make_callable(name, [object, m](CallArgs& args) { return m(object, args); });
}

void add_globals(Scope& scope) {
  scope.set("range", make_callable("range", g_range));
  scope.set("namespace", make_callable("namespace", [](CallArgs& a) { return build_mapping(a, Value::namespace_object()); }));
  scope.set("dict", make_callable("dict", [](CallArgs& a) { return build_mapping(a, Value::dict()); }));
  scope.set("strftime_now", make_callable("strftime_now", g_strftime_now));
  scope.set("raise_exception", make_callable("raise_exception", [](CallArgs& a) -> Result<Value> {
              const Value* msg = a.get(0, "message");
              return Status(ErrorCode::kInvalidArgument,
                            fmt::format("raise_exception: {}", msg ? msg->str() : std::string()));
            }));
}

}  // namespace ft::jinja
