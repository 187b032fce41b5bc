// What the GPU benchmarks share: the roofline they report against.
#pragma once

#include "runtime/device/backend.h"

namespace ft::bench {

// Device copy bandwidth in GB/s (bytes read + written): one `bytes` buffer
// copied to another, once to warm up, then timed over `repeats` copies.
inline Result<double> copy_bandwidth_gbs(Backend& b, size_t bytes = 512ull << 20, int repeats = 20) {
  FT_ASSIGN_OR_RETURN(DeviceBuffer src, b.alloc(bytes));
  auto dst = b.alloc(bytes);
  if (!dst.ok()) {
    b.free(src);
    return dst.status();
  }
  (void)b.copy_on_device(*dst, src, bytes);
  auto ms = b.time_ms([&] { return b.copy_on_device(*dst, src, bytes); }, repeats);
  b.free(src);
  b.free(*dst);
  if (!ms.ok()) return ms.status();
  return 2.0 * bytes / (*ms * 1e-3) / 1e9;
}

}  // namespace ft::bench
