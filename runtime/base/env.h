// Reading the FT_* tuning variables (FT_GEMM_QR_X, FT_DECODE_WAVES...), each
// read once by its user and checked there against its range.
#pragma once

#include <cstdlib>

namespace ft {

// The integer value of environment variable `name` (std::atoi: 0 for text
// that is not a number), or 0 when it is unset.
inline int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : 0;
}

// True when variable `name` is set to "0": the switch that turns off a
// default-on feature (FT_PDL, FT_PINNED_HOST, FT_GEMM_QR).
inline bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v && v[0] == '0' && v[1] == '\0';
}

}  // namespace ft
