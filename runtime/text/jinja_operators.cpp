// Python semantics of Jinja's operators, attribute and item access.
#include <cmath>

#include "runtime/text/jinja_interpreter.h"
#include "runtime/text/jinja_strings.h"

namespace ft::jinja {
namespace {

Status type_error(std::string_view op, const Value& a, const Value& b) {
  return Status(ErrorCode::kInvalidArgument, fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op,
                                                         a.type_name(), b.type_name()));
}

bool int_like(const Value& v) { return v.is_int() || v.is_bool(); }
int64_t to_int(const Value& v) { return v.is_bool() ? int64_t{v.as_bool()} : v.as_int(); }
bool numeric(const Value& v) { return v.is_number() || v.is_bool(); }

Value repeat(const Value& seq, int64_t n) {
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < n; ++i) out += seq.as_string();
    return Value(std::move(out));
  }
  std::vector<Value> items;
  for (int64_t i = 0; i < n; ++i) {
    items.insert(items.end(), seq.as_list().items.begin(), seq.as_list().items.end());
  }
  return seq.is_tuple() ? Value::tuple(std::move(items)) : Value::list(std::move(items));
}

Result<Value> arithmetic(std::string_view op, const Value& a, const Value& b) {
  if (int_like(a) && int_like(b) && op != "/") {
    int64_t x = to_int(a), y = to_int(b);
    if ((op == "//" || op == "%") && y == 0) {
      return Status(ErrorCode::kInvalidArgument, "integer division or modulo by zero");
    }
    if (op == "+") return Value(x + y);
    if (op == "-") return Value(x - y);
    if (op == "*") return Value(x * y);
    if (op == "//") return Value(x / y - ((x % y != 0 && ((x < 0) != (y < 0))) ? 1 : 0));
    if (op == "%") return Value(((x % y) + y) % y);
    if (op == "**") {
      if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
      int64_t r = 1;
      for (int64_t i = 0; i < y; ++i) r *= x;
      return Value(r);
    }
  }
  double x = a.as_number(), y = b.as_number();
  if ((op == "/" || op == "//" || op == "%") && y == 0.0) {
    return Status(ErrorCode::kInvalidArgument, "division by zero");
  }
  if (op == "+") return Value(x + y);
  if (op == "-") return Value(x - y);
  if (op == "*") return Value(x * y);
  if (op == "/") return Value(x / y);
  if (op == "//") return Value(std::floor(x / y));
  if (op == "%") return Value(x - y * std::floor(x / y));
  return Value(std::pow(x, y));
}

}  // namespace

Result<Value> binary_op(std::string_view op, const Value& a, const Value& b) {
  if (op == "~") return Value(a.str() + b.str());
  if (op == "==") return Value(values_equal(a, b));
  if (op == "!=") return Value(!values_equal(a, b));
  if (op == "in" || op == "not in") {
    FT_ASSIGN_OR_RETURN(bool hit, contains(b, a));
    return Value(op == "in" ? hit : !hit);
  }
  if (op == "<" || op == ">" || op == "<=" || op == ">=") {
    FT_ASSIGN_OR_RETURN(int c, compare_values(a, b));
    if (op == "<") return Value(c < 0);
    if (op == ">") return Value(c > 0);
    if (op == "<=") return Value(c <= 0);
    return Value(c >= 0);
  }
  for (const Value* v : {&a, &b}) {
    if (v->is_undefined()) {
      std::string msg = v->undefined_name().empty() ? "value is undefined" : v->undefined_name();
      return Status(ErrorCode::kInvalidArgument, msg);
    }
  }
  if (numeric(a) && numeric(b)) return arithmetic(op, a, b);
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      std::vector<Value> items = a.as_list().items;
      items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
      return a.is_tuple() ? Value::tuple(std::move(items)) : Value::list(std::move(items));
    }
    if (a.is_string()) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("can only concatenate str (not \"{}\") to str", b.type_name()));
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && int_like(b)) return repeat(a, to_int(b));
    if ((b.is_string() || b.is_list()) && int_like(a)) return repeat(b, to_int(a));
  }
  return type_error(op, a, b);
}

Result<bool> contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined: return false;
    case Value::Kind::kString:
      if (!item.is_string()) {
        return Status(ErrorCode::kInvalidArgument,
                      fmt::format("'in <string>' requires string as left operand, not {}", item.type_name()));
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      for (const Value& v : container.as_list().items) {
        if (values_equal(v, item)) return true;
      }
      return false;
    case Value::Kind::kDict:
      return item.is_string() && !container.is_namespace() && container.as_dict().find(item.as_string());
    default:
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("argument of type '{}' is not iterable", container.type_name()));
  }
}

namespace {

// Python's Jinja2 resolves `obj.name` as an attribute first (so `d.items` is the
// method even when d has an "items" key) and `obj[name]` as an item first.
Value lookup_member(const Value& object, const std::string& name, bool method_first) {
  if (object.is_undefined()) return object;
  if (method_first) {
    Value method = get_method(object, name);
    if (!method.is_undefined()) return method;
  }
  if (object.is_dict()) {
    if (const Value* v = object.as_dict().find(name)) return *v;
  }
  if (!method_first) {
    Value method = get_method(object, name);
    if (!method.is_undefined()) return method;
  }
  return Value::undefined(fmt::format("'{}' has no attribute '{}'", object.type_name(), name));
}

}  // namespace

Value get_attribute(const Value& object, const std::string& name) { return lookup_member(object, name, true); }

Value get_item(const Value& object, const Value& key) {
  if (key.is_string()) return lookup_member(object, key.as_string(), false);
  if (object.is_undefined()) return object;
  if (key.is_int() && (object.is_list() || object.is_string())) {
    int64_t i = key.as_int();
    if (object.is_list()) {
      const auto& items = object.as_list().items;
      int64_t n = static_cast<int64_t>(items.size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return items[static_cast<size_t>(i)];
    } else {
      auto cps = split_code_points(object.as_string());
      int64_t n = static_cast<int64_t>(cps.size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return Value(std::string(cps[static_cast<size_t>(i)]));
    }
    return Value::undefined(fmt::format("{} index out of range", object.type_name()));
  }
  return Value::undefined(fmt::format("'{}' has no item {}", object.type_name(), key.repr()));
}

Result<std::vector<Value>> iterate(const Value& v) {
  std::vector<Value> out;
  switch (v.kind()) {
    case Value::Kind::kUndefined: return out;
    case Value::Kind::kList: return v.as_list().items;
    case Value::Kind::kDict:
      if (v.is_namespace()) break;
      for (const auto& [k, _] : v.as_dict().entries) out.emplace_back(k);
      return out;
    case Value::Kind::kString:
      for (std::string_view cp : split_code_points(v.as_string())) out.emplace_back(std::string(cp));
      return out;
    default: break;
  }
  return Status(ErrorCode::kInvalidArgument, fmt::format("'{}' object is not iterable", v.type_name()));
}

}  // namespace ft::jinja
