#include "runtime/ops/norm.h"

#include <cmath>

#include "jit/catalog.h"

namespace ft {

Status rmsnorm(OpContext& ctx, DType dtype, const RmsNormShape& s, DeviceBuffer x, DeviceBuffer weight,
               DeviceBuffer out) {
  const int per_vec = ctx.facts().tiles.norm.load_bytes / dtype_size(dtype);
  if (s.rows <= 0 || s.hidden <= 0 || s.hidden % per_vec != 0)
    return FT_ERROR(ErrorCode::kInvalidArgument, "rmsnorm: hidden {} must be a positive multiple of {} ({} rows)",
                    s.hidden, per_vec, s.rows);
  const size_t row_bytes = static_cast<size_t>(s.hidden) * dtype_size(dtype);
  if (x.bytes < row_bytes * s.rows || out.bytes < row_bytes * s.rows || weight.bytes < row_bytes)
    return FT_ERROR(ErrorCode::kInvalidArgument, "rmsnorm: buffers too small for [{}, {}] {}", s.rows, s.hidden,
                    dtype_name(dtype));
  FT_ASSIGN_OR_RETURN(KernelHandle k, ctx.kernel(rmsnorm_spec(ctx.facts(), dtype, s.hidden)));
  // Mirrors kernel_src/rmsnorm.hip's RmsNormArgs<T>: three pointers, eps, rows.
  struct {
    uint64_t x, weight, out;
    float eps;
    int rows;
  } args{x.ptr, weight.ptr, out.ptr, s.eps, s.rows};
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>(s.rows);
  dims.block[0] = static_cast<unsigned>(ctx.facts().tiles.norm.block_threads);
  return ctx.backend().launch(k, dims, &args, sizeof args);
}

void rmsnorm_reference(const RmsNormShape& s, const float* x, const float* w, float* out) {
  for (int r = 0; r < s.rows; ++r) {
    const float* xr = x + static_cast<size_t>(r) * s.hidden;
    double sum = 0;
    for (int i = 0; i < s.hidden; ++i) sum += static_cast<double>(xr[i]) * xr[i];
    const double scale = 1.0 / std::sqrt(sum / s.hidden + s.eps);
    for (int i = 0; i < s.hidden; ++i) out[static_cast<size_t>(r) * s.hidden + i] = static_cast<float>(xr[i] * scale * w[i]);
  }
}

}  // namespace ft
