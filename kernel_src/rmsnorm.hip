// RMSNorm (with the residual add and the quantized output of norm_ops.h):
// one block per row.
#include "norm_ops.h"

namespace ft {

template <typename T, int kHidden, int kThreads, int kLoadBytes, bool kAddResidual, bool kQ8Out = false>
FT_DEVICE void rmsnorm(const RmsNormArgs<T>& a) {
  __shared__ float scratch[(kThreads + FT_WAVE_SIZE - 1) / FT_WAVE_SIZE];
  const int row = block_x();
  if (row >= a.rows) return;
  rmsnorm_row<T, kHidden, kThreads, kLoadBytes, kAddResidual, kQ8Out>(a, row, scratch);
}

}  // namespace ft
