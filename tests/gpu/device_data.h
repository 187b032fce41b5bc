// Host-side helpers for the GPU checks and benchmarks: random data in a dtype,
// and reading a device buffer back as f32.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "runtime/base/dtype.h"
#include "runtime/device/backend.h"
#include "runtime/model/ggml_types.h"
#include "runtime/model/quantize.h"

namespace ft::gpu {

// Values already rounded to `dtype`, so the reference sees what the kernel sees.
inline std::vector<float> random_values(size_t n, DType dtype, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) {
    x = dist(rng);
    if (dtype == DType::kBF16) x = bf16_to_f32(f32_to_bf16(x));
    if (dtype == DType::kF16) x = fp16_to_f32(f32_to_fp16(x));
  }
  return v;
}

inline std::vector<uint8_t> encode(const std::vector<float>& v, DType dtype) {
  std::vector<uint8_t> out(v.size() * dtype_size(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::kF32) std::memcpy(&out[i * 4], &v[i], 4);
    else {
      uint16_t h = dtype == DType::kBF16 ? f32_to_bf16(v[i]) : f32_to_fp16(v[i]);
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

inline std::vector<float> decode(const std::vector<uint8_t>& bytes, DType dtype) {
  size_t n = bytes.size() / dtype_size(dtype);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    if (dtype == DType::kF32) std::memcpy(&v[i], &bytes[i * 4], 4);
    else {
      uint16_t h;
      std::memcpy(&h, &bytes[i * 2], 2);
      v[i] = dtype == DType::kBF16 ? bf16_to_f32(h) : fp16_to_f32(h);
    }
  }
  return v;
}

inline Result<DeviceBuffer> upload(Backend& b, const std::vector<float>& v, DType dtype) {
  auto bytes = encode(v, dtype);
  FT_ASSIGN_OR_RETURN(DeviceBuffer buf, b.alloc(bytes.size()));
  FT_RETURN_IF_ERROR(b.copy_to_device(buf, bytes.data(), bytes.size()));
  return buf;
}

inline Result<std::vector<float>> download(Backend& b, DeviceBuffer buf, DType dtype) {
  std::vector<uint8_t> bytes(buf.bytes);
  FT_RETURN_IF_ERROR(b.copy_to_host(bytes.data(), buf, bytes.size()));
  return decode(bytes, dtype);
}

// The GGUF bytes of a random [n, k] weight (normal, sd 0.05), row by row.
// With `distinct_rows` > 0 only that many rows are drawn and encoded, then
// tiled (the benchmarks' large weights, where encoding every row would take
// minutes on the host).
inline Result<std::vector<uint8_t>> random_weight(GgmlType type, int n, int k, std::mt19937& rng,
                                                  int distinct_rows = 0) {
  const uint64_t row_bytes = *ggml_bytes(type, k);
  const int drawn = distinct_rows > 0 ? std::min(distinct_rows, n) : n;
  std::vector<uint8_t> bytes(row_bytes * n);
  std::normal_distribution<float> dist(0.0f, 0.05f);
  std::vector<float> row(k);
  for (int j = 0; j < drawn; ++j) {
    for (auto& v : row) v = dist(rng);
    FT_RETURN_IF_ERROR(encode_row(type, row.data(), k, {bytes.data() + row_bytes * j, row_bytes}));
  }
  for (int j = drawn; j < n; ++j)
    std::memcpy(bytes.data() + row_bytes * j, bytes.data() + row_bytes * (j % drawn), row_bytes);
  return bytes;
}

// ||a - b|| / ||b||; a NaN anywhere makes it infinite.
inline double rel_l2(std::span<const float> a, std::span<const float> b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i])) return INFINITY;
    double d = static_cast<double>(a[i]) - b[i];
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

}  // namespace ft::gpu
