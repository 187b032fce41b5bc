#include "runtime/ops/matmul.h"

#include <cstring>
#include <vector>

namespace ft {

namespace {

Status check_weight(const char* op, const WeightView& w) {
  if (w.n <= 0 || w.k <= 0) return FT_ERROR(ErrorCode::kInvalidArgument, "{}: weight shape [{}, {}]", op, w.n, w.k);
  const auto row_bytes = ggml_bytes(w.type, static_cast<uint64_t>(w.k));
  if (!row_bytes)
    return FT_ERROR(ErrorCode::kInvalidArgument, "{}: k = {} is not a whole number of {} blocks", op, w.k,
                    ggml_type_name(w.type));
  if (w.data.bytes < *row_bytes * static_cast<uint64_t>(w.n))
    return FT_ERROR(ErrorCode::kInvalidArgument, "{}: weight buffer of {} bytes is too small for [{}, {}] {}", op,
                    w.data.bytes, w.n, w.k, ggml_type_name(w.type));
  return Status();
}

}  // namespace

Status matmul_reference(GgmlType type, const uint8_t* w, int n, int k, const float* x, int m, float* y,
                        const float* bias) {
  const auto row_bytes = ggml_bytes(type, static_cast<uint64_t>(k));
  if (!row_bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "matmul: k = {} does not fit {} blocks", k, ggml_type_name(type));
  Status first_error;
  // Each output column j is computed by one thread, so results do not depend
  // on the thread count.
#pragma omp parallel
  {
    std::vector<float> row(static_cast<size_t>(k));
    Status local;
#pragma omp for schedule(static)
    for (int j = 0; j < n; ++j) {
      if (!local.ok()) continue;
      if (type == GgmlType::kF32) {
        std::memcpy(row.data(), w + static_cast<size_t>(j) * k * 4, static_cast<size_t>(k) * 4);
      } else {
        local = dequantize_row(type, {w + *row_bytes * j, *row_bytes}, row.data(), static_cast<size_t>(k));
        if (!local.ok()) continue;
      }
      for (int i = 0; i < m; ++i) {
        const float* xi = x + static_cast<size_t>(i) * k;
        double acc = 0;
        for (int t = 0; t < k; ++t) acc += static_cast<double>(xi[t]) * row[t];
        if (bias) acc += bias[j];
        y[static_cast<size_t>(i) * n + j] = static_cast<float>(acc);
      }
    }
#pragma omp critical
    if (!local.ok() && first_error.ok()) first_error = local;
  }
  return first_error;
}

Status matmul(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y,
              DeviceBuffer bias) {
  FT_RETURN_IF_ERROR(check_weight("matmul", w));
  const size_t es = dtype_size(act);
  if (m <= 0 || x.bytes < static_cast<size_t>(m) * w.k * es || y.bytes < static_cast<size_t>(m) * w.n * es ||
      (bias.ptr && bias.bytes < static_cast<size_t>(w.n) * es))
    return FT_ERROR(ErrorCode::kInvalidArgument, "matmul: buffers too small for [{}, {}] x [{}, {}]^T", m, w.k, w.n, w.k);
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("matmul", act));
    return matmul_reference(w.type, host_ptr<const uint8_t>(w.data), w.n, w.k, host_ptr<const float>(x), m,
                            host_ptr<float>(y), bias.ptr ? host_ptr<const float>(bias) : nullptr);
  }
  return FT_ERROR(ErrorCode::kUnsupported, "matmul: no GPU kernel for {} weights yet", ggml_type_name(w.type));
}

}  // namespace ft
