#include "runtime/text/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "runtime/text/jinja_strings.h"

namespace ft::jinja {

Value Value::list(std::vector<Value> items) {
  auto l = std::make_shared<List>();
  l->items = std::move(items);
  return Value(std::move(l));
}

Value Value::tuple(std::vector<Value> items) {
  auto l = std::make_shared<List>();
  l->items = std::move(items);
  l->is_tuple = true;
  return Value(std::move(l));
}

Value Value::dict() { return Value(std::make_shared<Dict>()); }

Value Value::namespace_object() {
  auto d = std::make_shared<Dict>();
  d->is_namespace = true;
  return Value(std::move(d));
}

Value Value::from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return none();
    case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return Value(static_cast<int64_t>(j.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(from_json(item));
      return list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Value d = dict();
      for (const auto& [key, item] : j.items()) d.as_dict().entries.emplace_back(key, from_json(item));
      return d;
    }
    default: return none();
  }
}

bool Value::is_namespace() const { return is_dict() && as_dict().is_namespace; }
bool Value::is_tuple() const { return is_list() && as_list().is_tuple; }

double Value::as_number() const {
  if (is_int()) return static_cast<double>(as_int());
  if (is_bool()) return as_bool() ? 1.0 : 0.0;
  return as_float();
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return as_bool();
    case Kind::kInt: return as_int() != 0;
    case Kind::kFloat: return as_float() != 0.0;
    case Kind::kString: return !as_string().empty();
    case Kind::kList: return !as_list().items.empty();
    case Kind::kDict: return is_namespace() || !as_dict().entries.empty();
    case Kind::kCallable: return true;
  }
  return false;
}

std::string format_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0.0) return std::signbit(v) ? "-0.0" : "0.0";
  // Shortest round-trip digits in scientific form ("1.2345e+02"), then laid out
  // the way Python's repr does: positional for exponents in [-4, 16).
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e = sci.find('e');
  int exponent = std::stoi(sci.substr(e + 1));
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    int point = exponent + 1;  // digits before the decimal point
    if (point <= 0) {
      out += "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    } else if (static_cast<size_t>(point) >= digits.size()) {
      out += digits + std::string(static_cast<size_t>(point) - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out;
}

std::string Value::str() const {
  switch (kind()) {
    case Kind::kUndefined: return "";
    case Kind::kString: return as_string();
    default: return repr();
  }
}

std::string Value::repr() const {
  switch (kind()) {
    case Kind::kUndefined: return "";
    case Kind::kNone: return "None";
    case Kind::kBool: return as_bool() ? "True" : "False";
    case Kind::kInt: return std::to_string(as_int());
    case Kind::kFloat: return format_float(as_float());
    case Kind::kString: return python_string_repr(as_string());
    case Kind::kList: {
      const List& l = as_list();
      std::string out = l.is_tuple ? "(" : "[";
      for (size_t i = 0; i < l.items.size(); ++i) {
        if (i) out += ", ";
        out += l.items[i].repr();
      }
      if (l.is_tuple && l.items.size() == 1) out += ",";
      out += l.is_tuple ? ")" : "]";
      return out;
    }
    case Kind::kDict: {
      const Dict& d = as_dict();
      std::string out = d.is_namespace ? "<Namespace {" : "{";
      for (size_t i = 0; i < d.entries.size(); ++i) {
        if (i) out += ", ";
        out += python_string_repr(d.entries[i].first) + ": " + d.entries[i].second.repr();
      }
      out += d.is_namespace ? "}>" : "}";
      return out;
    }
    case Kind::kCallable: return "<function " + as_callable().name + ">";
  }
  return "";
}

const char* Value::type_name() const {
  switch (kind()) {
    case Kind::kUndefined: return "undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return is_tuple() ? "tuple" : "list";
    case Kind::kDict: return is_namespace() ? "Namespace" : "dict";
    case Kind::kCallable: return "function";
  }
  return "?";
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Dict::set(const std::string& key, Value value) {
  for (auto& [k, v] : entries) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(key, std::move(value));
}

const Value* CallArgs::get(size_t index, std::string_view name) const {
  if (index < positional.size()) return &positional[index];
  for (const auto& [k, v] : keyword) {
    if (k == name) return &v;
  }
  return nullptr;
}

Value make_callable(std::string name, std::function<Result<Value>(CallArgs&)> fn) {
  auto c = std::make_shared<Callable>();
  c->name = std::move(name);
  c->fn = std::move(fn);
  return Value(CallablePtr(std::move(c)));
}

namespace {
bool numeric_like(const Value& v) { return v.is_int() || v.is_float() || v.is_bool(); }
}  // namespace

bool values_equal(const Value& a, const Value& b) {
  if (numeric_like(a) && numeric_like(b)) {
    if (a.is_float() || b.is_float()) return a.as_number() == b.as_number();
    auto as_i = [](const Value& v) { return v.is_bool() ? int64_t{v.as_bool()} : v.as_int(); };
    return as_i(a) == as_i(b);
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      const auto& x = a.as_list().items;
      const auto& y = b.as_list().items;
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!values_equal(x[i], y[i])) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      const Dict& x = a.as_dict();
      const Dict& y = b.as_dict();
      if (x.is_namespace || y.is_namespace) return &x == &y;
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x.entries) {
        const Value* other = y.find(k);
        if (!other || !values_equal(v, *other)) return false;
      }
      return true;
    }
    case Value::Kind::kCallable: return &a.as_callable() == &b.as_callable();
    default: return false;
  }
}

Result<int> compare_values(const Value& a, const Value& b) {
  if (numeric_like(a) && numeric_like(b)) {
    double x = a.as_number(), y = b.as_number();
    if (a.is_int() && b.is_int()) return a.as_int() < b.as_int() ? -1 : (a.as_int() > b.as_int() ? 1 : 0);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    // UTF-8 byte order is code point order, which is how Python orders str.
    int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_list() && b.is_list()) {
    const auto& x = a.as_list().items;
    const auto& y = b.as_list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      FT_ASSIGN_OR_RETURN(int c, compare_values(x[i], y[i]));
      if (c != 0) return c;
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  return Status(ErrorCode::kInvalidArgument,
                fmt::format("'<' not supported between instances of '{}' and '{}'", a.type_name(),
                            b.type_name()));
}

namespace {

Status write_json(std::string& out, const Value& v, const JsonOptions& o, int depth) {
  const std::string& item_sep = !o.item_separator.empty() ? o.item_separator : (o.indent >= 0 ? "," : ", ");
  auto newline = [&](int d) {
    if (o.indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(o.indent) * static_cast<size_t>(d), ' ');
  };
  switch (v.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: out += "null"; return {};
    case Value::Kind::kBool: out += v.as_bool() ? "true" : "false"; return {};
    case Value::Kind::kInt: out += std::to_string(v.as_int()); return {};
    case Value::Kind::kFloat: {
      double f = v.as_float();
      out += std::isnan(f) ? "NaN" : std::isinf(f) ? (f > 0 ? "Infinity" : "-Infinity") : format_float(f);
      return {};
    }
    case Value::Kind::kString: append_json_string(out, v.as_string(), o.ensure_ascii); return {};
    case Value::Kind::kList: {
      const auto& items = v.as_list().items;
      if (items.empty()) {
        out += "[]";
        return {};
      }
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += item_sep;
        newline(depth + 1);
        FT_RETURN_IF_ERROR(write_json(out, items[i], o, depth + 1));
      }
      newline(depth);
      out += ']';
      return {};
    }
    case Value::Kind::kDict: {
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& e : v.as_dict().entries) entries.push_back(&e);
      if (o.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto* a, const auto* b) { return a->first < b->first; });
      }
      if (entries.empty()) {
        out += "{}";
        return {};
      }
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += item_sep;
        newline(depth + 1);
        append_json_string(out, entries[i]->first, o.ensure_ascii);
        out += o.key_separator;
        FT_RETURN_IF_ERROR(write_json(out, entries[i]->second, o, depth + 1));
      }
      newline(depth);
      out += '}';
      return {};
    }
    case Value::Kind::kCallable:
      return Status(ErrorCode::kInvalidArgument, "Object of type function is not JSON serializable");
  }
  return {};
}

}  // namespace

Result<std::string> to_json(const Value& value, const JsonOptions& options) {
  std::string out;
  FT_RETURN_IF_ERROR(write_json(out, value, options, 0));
  return out;
}

}  // namespace ft::jinja
