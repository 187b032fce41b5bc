// Argument helpers shared by filters, tests and methods: read positional-or-
// keyword arguments with a type check and a default, the way Python binds them.
#pragma once

#include <string>
#include <string_view>

#include "runtime/base/status.h"
#include "runtime/text/jinja_value.h"

namespace ft::jinja {

inline Status arg_type_error(std::string_view fn, std::string_view name, const char* wanted, const Value& got) {
  return Status(ErrorCode::kInvalidArgument,
                fmt::format("{}(): argument '{}' must be {}, not {}", fn, name, wanted, got.type_name()));
}

inline Result<int64_t> int_arg(const CallArgs& args, size_t index, std::string_view name, int64_t def,
                               std::string_view fn) {
  const Value* v = args.get(index, name);
  if (!v || v->is_none()) return def;
  if (v->is_bool()) return int64_t{v->as_bool()};
  if (!v->is_int()) return arg_type_error(fn, name, "an int", *v);
  return v->as_int();
}

inline Result<bool> bool_arg(const CallArgs& args, size_t index, std::string_view name, bool def,
                             std::string_view fn) {
  const Value* v = args.get(index, name);
  if (!v) return def;
  return v->truthy();
}

// Returns false in `present` when the argument is absent or None.
inline Result<std::string> str_arg(const CallArgs& args, size_t index, std::string_view name, std::string_view fn,
                                   bool* present = nullptr) {
  const Value* v = args.get(index, name);
  if (present) *present = v && !v->is_none();
  if (!v || v->is_none()) return std::string();
  if (!v->is_string()) return arg_type_error(fn, name, "a string", *v);
  return v->as_string();
}

}  // namespace ft::jinja
