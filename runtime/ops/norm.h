// RMSNorm: host launcher and CPU reference.
#pragma once

#include "runtime/base/dtype.h"
#include "runtime/ops/op_context.h"

namespace ft {

struct RmsNormShape {
  int rows = 0;
  int hidden = 0;
  float eps = 1e-6f;
};

// out = x * rsqrt(mean(x^2) + eps) * weight, row by row; x and out are
// [rows, hidden] of `dtype`, weight is [hidden]. With q8 (GPU only; ignored on
// the CPU), out is also written quantized for the quantized GEMV that reads
// it: matmul's x_q8, matmul_q8_bytes(rows, hidden) bytes (see matmul_reads_q8).
Status rmsnorm(OpContext& ctx, DType dtype, const RmsNormShape& shape, DeviceBuffer x, DeviceBuffer weight,
               DeviceBuffer out, DeviceBuffer q8 = {});

// The same on h = x + residual, which is also written to residual_out (the
// skip connection the next layer adds to); residual_out may alias residual.
Status add_rmsnorm(OpContext& ctx, DType dtype, const RmsNormShape& shape, DeviceBuffer x, DeviceBuffer residual,
                   DeviceBuffer weight, DeviceBuffer out, DeviceBuffer residual_out, DeviceBuffer q8 = {});

// The reference in f32 (accumulating in double). With `residual` non-null,
// normalizes x + residual and stores that sum in residual_out.
void rmsnorm_reference(const RmsNormShape& shape, const float* x, const float* weight, float* out,
                       const float* residual = nullptr, float* residual_out = nullptr);

}  // namespace ft
