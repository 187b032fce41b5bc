#include "runtime/ops/norm.h"

#include <cmath>
#include <vector>

#include "jit/catalog.h"

namespace ft {

namespace {

Status launch_rmsnorm(OpContext& ctx, DType dtype, const RmsNormShape& s, DeviceBuffer x, DeviceBuffer weight,
                      DeviceBuffer out, const DeviceBuffer* residual, const DeviceBuffer* residual_out,
                      DeviceBuffer q8) {
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("rmsnorm", dtype));
    const size_t bytes = static_cast<size_t>(s.hidden) * 4 * s.rows;
    bool bad = s.rows <= 0 || s.hidden <= 0 || x.bytes < bytes || out.bytes < bytes || weight.bytes < bytes / s.rows;
    if (residual) bad = bad || residual->bytes < bytes || residual_out->bytes < bytes;
    if (bad) return FT_ERROR(ErrorCode::kInvalidArgument, "rmsnorm: bad shape [{}, {}] or buffers too small", s.rows, s.hidden);
    rmsnorm_reference(s, host_ptr<const float>(x), host_ptr<const float>(weight), host_ptr<float>(out),
                      residual ? host_ptr<const float>(*residual) : nullptr,
                      residual_out ? host_ptr<float>(*residual_out) : nullptr);
    return Status();
  }
  const int per_vec = ctx.facts().tiles.norm.load_bytes / dtype_size(dtype);
  if (s.rows <= 0 || s.hidden <= 0 || s.hidden % per_vec != 0)
    return FT_ERROR(ErrorCode::kInvalidArgument, "rmsnorm: hidden {} must be a positive multiple of {} ({} rows)",
                    s.hidden, per_vec, s.rows);
  const size_t bytes = static_cast<size_t>(s.hidden) * dtype_size(dtype) * s.rows;
  bool too_small = x.bytes < bytes || out.bytes < bytes || weight.bytes < bytes / s.rows;
  if (residual) too_small = too_small || residual->bytes < bytes || residual_out->bytes < bytes;
  if (q8.ptr) {
    too_small = too_small || q8.bytes < gemv_quantized_x_bytes(s.rows, s.hidden);
    if (s.hidden % 32 != 0 || per_vec % 4 != 0)
      return FT_ERROR(ErrorCode::kInvalidArgument, "rmsnorm: no quantized output for hidden {} in {}", s.hidden,
                      dtype_name(dtype));
  }
  if (too_small)
    return FT_ERROR(ErrorCode::kInvalidArgument, "rmsnorm: buffers too small for [{}, {}] {}", s.rows, s.hidden,
                    dtype_name(dtype));
  const KernelSpec spec = rmsnorm_spec(ctx.facts(), dtype, s.hidden, residual != nullptr, q8.ptr != 0);
  FT_ASSIGN_OR_RETURN(KernelHandle k, ctx.kernel(spec));
  // Mirrors kernel_src/rmsnorm.hip's RmsNormArgs<T>.
  struct {
    uint64_t x, weight, out, residual, residual_out;
    float eps;
    int rows;
    uint64_t q8;
  } args{x.ptr, weight.ptr, out.ptr, residual ? residual->ptr : 0, residual_out ? residual_out->ptr : 0, s.eps,
         s.rows, q8.ptr};
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>(s.rows);
  dims.block[0] = static_cast<unsigned>(spec.block_threads);
  return ctx.backend().launch(k, dims, &args, sizeof args);
}

}  // namespace

Status rmsnorm(OpContext& ctx, DType dtype, const RmsNormShape& s, DeviceBuffer x, DeviceBuffer weight,
               DeviceBuffer out, DeviceBuffer q8) {
  return launch_rmsnorm(ctx, dtype, s, x, weight, out, nullptr, nullptr, q8);
}

Status add_rmsnorm(OpContext& ctx, DType dtype, const RmsNormShape& s, DeviceBuffer x, DeviceBuffer residual,
                   DeviceBuffer weight, DeviceBuffer out, DeviceBuffer residual_out, DeviceBuffer q8) {
  return launch_rmsnorm(ctx, dtype, s, x, weight, out, &residual, &residual_out, q8);
}

void rmsnorm_reference(const RmsNormShape& s, const float* x, const float* w, float* out, const float* residual,
                       float* residual_out) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < s.rows; ++r) {
    const size_t base = static_cast<size_t>(r) * s.hidden;
    const float* xr = x + base;
    std::vector<float> h;
    if (residual) {
      // residual_out may alias residual: read each element before writing it.
      h.resize(s.hidden);
      for (int i = 0; i < s.hidden; ++i) h[i] = residual_out[base + i] = x[base + i] + residual[base + i];
      xr = h.data();
    }
    double sum = 0;
    for (int i = 0; i < s.hidden; ++i) sum += static_cast<double>(xr[i]) * xr[i];
    const double scale = 1.0 / std::sqrt(sum / s.hidden + s.eps);
    for (int i = 0; i < s.hidden; ++i) out[static_cast<size_t>(r) * s.hidden + i] = static_cast<float>(xr[i] * scale * w[i]);
  }
}

}  // namespace ft
