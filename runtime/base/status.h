// Errors as values across the runtime, JIT and cache boundaries.
//
// A Status is either ok or carries a code and a message. The FT_ERROR macro
// stamps the message with file:line so that a failure deep in a call chain
// still names where it came from. Result<T> holds a value or a non-ok Status.
// Library code returns these; it never exits the process.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace ft {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // bad input from a caller or a user
  kNotFound,         // a file, kernel, target or row that does not exist
  kIo,               // the operating system said no (open, read, write, disk full)
  kCorrupt,          // data failed validation (checksum, magic, bounds)
  kUnsupported,      // valid, but this build or target cannot do it
  kCompileError,     // a kernel failed to compile (or the compiler crashed)
  kDevice,           // a driver or device call failed
  kInternal,         // a broken invariant inside ft
  kUnavailable,      // busy or full for now (a full request queue); retry later
};

const char* error_code_name(ErrorCode code);

class Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The message without the " [file:line]" FT_ERROR appends: what a user or
  // an API client is shown.
  std::string user_message() const;

  // "compile_error: <message>"
  std::string to_string() const;

  // Prepends context ("while warming gfx1150: ...") and returns *this.
  Status& with_context(const std::string& context);

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(data_).ok() && "a Result is built from an error Status only");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

namespace detail {
std::string where(const char* file, int line);
}  // namespace detail

}  // namespace ft

// FT_ERROR(ErrorCode::kIo, "cannot open {}: {}", path, strerror(errno))
#define FT_ERROR(code, ...) \
  ::ft::Status((code), ::fmt::format(__VA_ARGS__) + ::ft::detail::where(__FILE__, __LINE__))

#define FT_CONCAT_INNER(a, b) a##b
#define FT_CONCAT(a, b) FT_CONCAT_INNER(a, b)

#define FT_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::ft::Status ft_status_ = (expr);         \
    if (!ft_status_.ok()) return ft_status_;  \
  } while (0)

#define FT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

// FT_ASSIGN_OR_RETURN(auto bytes, read_file(path));
#define FT_ASSIGN_OR_RETURN(lhs, expr) \
  FT_ASSIGN_OR_RETURN_IMPL(FT_CONCAT(ft_result_, __LINE__), lhs, expr)
