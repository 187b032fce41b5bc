// What the GPU benchmarks share: the roofline they report against.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

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

// Runs `fn` three times (which also compiles and loads its kernels), then
// times `repeats` runs; the first error ends it.
inline Result<double> warm_and_time(Backend& b, const std::function<Status()>& fn, int repeats) {
  for (int i = 0; i < 3; ++i) FT_RETURN_IF_ERROR(fn());
  return b.time_ms(fn, repeats);
}

// One timed op: bytes moved (for GB/s against copy) and/or FLOPs.
struct Row {
  std::string name;
  double bytes = 0, flops = 0, ms = 0;
};

// Runs `fn` three times (which also compiles and loads its kernels; an error
// is printed and the row left out), then `before` (if any: e.g. a long copy
// that the timed launches queue behind), then times `repeats` runs.
inline void measure(Backend& b, std::vector<Row>& rows, int repeats, const std::string& name, double bytes,
                    double flops, const std::function<Status()>& fn, const std::function<void()>& before = {}) {
  for (int i = 0; i < 3; ++i)
    if (Status s = fn(); !s.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), s.to_string().c_str());
      return;
    }
  if (before) before();
  auto ms = b.time_ms(fn, repeats);
  if (ms.ok()) rows.push_back({name, bytes, flops, *ms});
  else std::fprintf(stderr, "%s: %s\n", name.c_str(), ms.status().to_string().c_str());
}

// The table every GPU benchmark prints: time, then GB/s and the share of the
// copy bandwidth for rows that count bytes, TFLOP/s for rows that count FLOPs.
inline void print_rows(const char* first_column, const std::vector<Row>& rows, double copy_gbs) {
  std::printf("%-30s %10s %10s %9s %8s %10s\n", first_column, "MB moved", "us", "GB/s", "of copy", "TFLOP/s");
  for (const auto& r : rows) {
    const double s = r.ms * 1e-3;
    char mb[32] = "", gbs[32] = "", share[32] = "", tflops[32] = "";
    if (r.bytes > 0) {
      std::snprintf(mb, sizeof mb, "%.1f", r.bytes / 1e6);
      std::snprintf(gbs, sizeof gbs, "%.0f", r.bytes / s / 1e9);
      std::snprintf(share, sizeof share, "%.0f%%", 100.0 * r.bytes / s / 1e9 / copy_gbs);
    }
    if (r.flops > 0) std::snprintf(tflops, sizeof tflops, "%.1f", r.flops / s / 1e12);
    std::printf("%-30s %10s %10.2f %9s %8s %10s\n", r.name.c_str(), mb, r.ms * 1e3, gbs, share, tflops);
  }
}

}  // namespace ft::bench
