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
// [rows, hidden] of `dtype`, weight is [hidden].
Status rmsnorm(OpContext& ctx, DType dtype, const RmsNormShape& shape, DeviceBuffer x, DeviceBuffer weight,
               DeviceBuffer out);

// The reference in f32 (accumulating in double).
void rmsnorm_reference(const RmsNormShape& shape, const float* x, const float* weight, float* out);

}  // namespace ft
