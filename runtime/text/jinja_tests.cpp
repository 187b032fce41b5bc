// Jinja2's builtin tests (`x is defined`, `x is string`, ...), Python semantics:
// bool counts as a number, undefined is iterable (and empty).
#include <cmath>
#include <unordered_map>

#include "runtime/text/jinja_interpreter.h"

namespace ft::jinja {
namespace {

using TestFn = Result<bool> (*)(const Value&, CallArgs&);

Result<const Value*> operand_arg(const CallArgs& args, const char* test) {
  const Value* other = args.get(0, "other");
  if (!other) return Status(ErrorCode::kInvalidArgument, fmt::format("test '{}' needs an argument", test));
  return other;
}

Result<bool> compare_test(const Value& v, CallArgs& args, const char* test, bool (*accept)(int)) {
  FT_ASSIGN_OR_RETURN(const Value* other, operand_arg(args, test));
  FT_ASSIGN_OR_RETURN(int c, compare_values(v, *other));
  return accept(c);
}

Result<bool> integer_test(const Value& v, const char* test, bool want_odd) {
  if (!v.is_int() && !v.is_bool()) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("test '{}' needs an integer, not {}", test, v.type_name()));
  }
  int64_t n = v.is_bool() ? int64_t{v.as_bool()} : v.as_int();
  return (n % 2 != 0) == want_odd;
}

Result<bool> t_defined(const Value& v, CallArgs&) { return !v.is_undefined(); }
Result<bool> t_undefined(const Value& v, CallArgs&) { return v.is_undefined(); }
Result<bool> t_none(const Value& v, CallArgs&) { return v.is_none(); }
Result<bool> t_boolean(const Value& v, CallArgs&) { return v.is_bool(); }
Result<bool> t_true(const Value& v, CallArgs&) { return v.is_bool() && v.as_bool(); }
Result<bool> t_false(const Value& v, CallArgs&) { return v.is_bool() && !v.as_bool(); }
Result<bool> t_integer(const Value& v, CallArgs&) { return v.is_int(); }
Result<bool> t_float(const Value& v, CallArgs&) { return v.is_float(); }
Result<bool> t_number(const Value& v, CallArgs&) { return v.is_number() || v.is_bool(); }
Result<bool> t_string(const Value& v, CallArgs&) { return v.is_string(); }
Result<bool> t_mapping(const Value& v, CallArgs&) { return v.is_dict() && !v.is_namespace(); }
Result<bool> t_callable(const Value& v, CallArgs&) { return v.is_callable(); }
Result<bool> t_escaped(const Value&, CallArgs&) { return false; }
Result<bool> t_iterable(const Value& v, CallArgs&) {
  return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.is_namespace());
}
Result<bool> t_sequence(const Value& v, CallArgs& a) { return t_iterable(v, a); }
Result<bool> t_odd(const Value& v, CallArgs&) { return integer_test(v, "odd", true); }
Result<bool> t_even(const Value& v, CallArgs&) { return integer_test(v, "even", false); }
Result<bool> t_lower(const Value& v, CallArgs&) {
  if (!v.is_string()) return false;
  for (char c : v.as_string()) {
    if (c >= 'A' && c <= 'Z') return false;
  }
  return true;
}
Result<bool> t_upper(const Value& v, CallArgs&) {
  if (!v.is_string()) return false;
  for (char c : v.as_string()) {
    if (c >= 'a' && c <= 'z') return false;
  }
  return true;
}
Result<bool> t_divisibleby(const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(const Value* other, operand_arg(args, "divisibleby"));
  if (!(v.is_number() || v.is_bool()) || !(other->is_number() || other->is_bool()) || other->as_number() == 0) {
    return Status(ErrorCode::kInvalidArgument, "divisibleby needs two numbers, the divisor not zero");
  }
  return std::fmod(v.as_number(), other->as_number()) == 0.0;
}
Result<bool> t_eq(const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(const Value* other, operand_arg(args, "=="));
  return values_equal(v, *other);
}
Result<bool> t_ne(const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(const Value* other, operand_arg(args, "!="));
  return !values_equal(v, *other);
}
Result<bool> t_sameas(const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(const Value* other, operand_arg(args, "sameas"));
  // Identity in Python: singletons compare by kind, containers by address.
  if (v.is_list() && other->is_list()) return &v.as_list() == &other->as_list();
  if (v.is_dict() && other->is_dict()) return &v.as_dict() == &other->as_dict();
  return v.kind() == other->kind() && values_equal(v, *other);
}
Result<bool> t_in(const Value& v, CallArgs& args) {
  FT_ASSIGN_OR_RETURN(const Value* other, operand_arg(args, "in"));
  return contains(*other, v);
}
Result<bool> t_lt(const Value& v, CallArgs& a) { return compare_test(v, a, "<", [](int c) { return c < 0; }); }
Result<bool> t_le(const Value& v, CallArgs& a) { return compare_test(v, a, "<=", [](int c) { return c <= 0; }); }
Result<bool> t_gt(const Value& v, CallArgs& a) { return compare_test(v, a, ">", [](int c) { return c > 0; }); }
Result<bool> t_ge(const Value& v, CallArgs& a) { return compare_test(v, a, ">=", [](int c) { return c >= 0; }); }

const std::unordered_map<std::string, TestFn>& tests() {
  static const std::unordered_map<std::string, TestFn> kTests = {
      {"defined", t_defined},   {"undefined", t_undefined}, {"none", t_none},
      {"boolean", t_boolean},   {"true", t_true},           {"false", t_false},
      {"integer", t_integer},   {"float", t_float},         {"number", t_number},
      {"string", t_string},     {"mapping", t_mapping},     {"callable", t_callable},
      {"escaped", t_escaped},   {"iterable", t_iterable},   {"sequence", t_sequence},
      {"odd", t_odd},           {"even", t_even},           {"lower", t_lower},
      {"upper", t_upper},       {"divisibleby", t_divisibleby}, {"sameas", t_sameas},
      {"in", t_in},             {"eq", t_eq},               {"equalto", t_eq},
      {"==", t_eq},             {"ne", t_ne},               {"!=", t_ne},
      {"lt", t_lt},             {"lessthan", t_lt},         {"<", t_lt},
      {"le", t_le},             {"<=", t_le},               {"gt", t_gt},
      {"greaterthan", t_gt},    {">", t_gt},                {"ge", t_ge},
      {">=", t_ge},
  };
  return kTests;
}

}  // namespace

Result<bool> apply_test(const std::string& name, const Value& v, CallArgs& args) {
  auto it = tests().find(name);
  if (it == tests().end()) return Status(ErrorCode::kInvalidArgument, fmt::format("no test named '{}'", name));
  return it->second(v, args);
}

}  // namespace ft::jinja
