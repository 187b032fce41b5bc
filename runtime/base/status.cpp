#include "runtime/base/status.h"

#include <cstring>

namespace ft {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kIo: return "io_error";
    case ErrorCode::kCorrupt: return "corrupt";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kCompileError: return "compile_error";
    case ErrorCode::kDevice: return "device_error";
    case ErrorCode::kInternal: return "internal";
    case ErrorCode::kUnavailable: return "unavailable";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(error_code_name(code_)) + ": " + message_;
}

Status& Status::with_context(const std::string& context) {
  if (!ok()) message_ = context + ": " + message_;
  return *this;
}

std::string Status::user_message() const {
  const size_t open = message_.rfind(" [");
  if (open == std::string::npos || message_.back() != ']' || message_.find(':', open) == std::string::npos) return message_;
  return message_.substr(0, open);
}

namespace detail {
std::string where(const char* file, int line) {
  // Keep the path from the project root: "jit/toolchain_clang.cpp:42".
  const char* p = file;
  for (const char* root : {"/runtime/", "/jit/", "/cache/", "/gfx_targets/", "/tools/", "/tests/"}) {
    if (const char* hit = std::strstr(file, root)) { p = hit + 1; break; }
  }
  return fmt::format(" [{}:{}]", p, line);
}
}  // namespace detail

}  // namespace ft
