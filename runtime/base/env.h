// Reading the FT_* tuning variables (FT_GEMM_QR_X, FT_DECODE_WAVES...), each
// read once by its user.
#pragma once

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string_view>

#include "runtime/base/log.h"

namespace ft {

// The whole number in environment variable `name` where `takes(value)` is
// true; 0 when the variable is unset. A value that is not a whole number, or
// that `takes` refuses, is ignored (0) with a warning that says what the
// variable takes (`what`), so a mistyped setting is never silently dropped.
template <typename Takes>
int env_int(const char* name, Takes takes, std::string_view what) {
  const char* v = std::getenv(name);
  if (!v) return 0;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  if (end != v && *end == '\0' && errno == 0 && n >= INT_MIN && n <= INT_MAX && takes(static_cast<int>(n)))
    return static_cast<int>(n);
  log::warn("{}={} is ignored: it takes {}", name, v, what);
  return 0;
}

// True when variable `name` is set to "0": the switch that turns off a
// default-on feature (FT_PDL, FT_PINNED_HOST, FT_GEMM_QR).
inline bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v && v[0] == '0' && v[1] == '\0';
}

}  // namespace ft
