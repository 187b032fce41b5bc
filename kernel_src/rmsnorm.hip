// RMSNorm: out[r, :] = x[r, :] * rsqrt(mean(x[r, :]^2) + eps) * weight.
//
// One block per row. The row width is a template constant, so each thread
// keeps its slice in registers (hidden 8192 at 256 threads and 16-byte loads is
// 4 vectors of 8 bf16 per thread): one read of x, one write of out; the weight
// read is shared by all rows and stays in L2. Memory-bound: at 4096 x bf16 a row
// is 8 KiB in and 8 KiB out.
#include "ft_device.h"

namespace ft {

template <typename T>
struct RmsNormArgs {
  const T* x;       // [rows, hidden]
  const T* weight;  // [hidden]
  T* out;           // [rows, hidden]
  float eps;
  int rows;
};

template <typename T, int kHidden, int kThreads, int kLoadBytes>
FT_DEVICE void rmsnorm(const RmsNormArgs<T>& a) {
  using V = Vec<T, kLoadBytes>;
  constexpr int kPerVec = V::kCount;
  static_assert(kHidden % kPerVec == 0, "the row width must be a whole number of vectors");
  constexpr int kVecs = kHidden / kPerVec;
  constexpr int kVecsPerThread = (kVecs + kThreads - 1) / kThreads;

  __shared__ float scratch[(kThreads + FT_WAVE_SIZE - 1) / FT_WAVE_SIZE];
  const int row = block_x();
  if (row >= a.rows) return;
  const T* x = a.x + static_cast<long long>(row) * kHidden;
  T* out = a.out + static_cast<long long>(row) * kHidden;

  float vals[kVecsPerThread][kPerVec];
  float sum_sq = 0.0f;
#pragma unroll
  for (int i = 0; i < kVecsPerThread; ++i) {
    const int vi = thread_x() + i * kThreads;
    if (kVecs % kThreads == 0 || vi < kVecs) {
      V v = load_vec<T, kLoadBytes>(x + vi * kPerVec);
#pragma unroll
      for (int j = 0; j < kPerVec; ++j) {
        vals[i][j] = to_float(v.v[j]);
        sum_sq += vals[i][j] * vals[i][j];
      }
    }
  }
  const float scale = fast_rsqrt(block_sum<kThreads>(sum_sq, scratch) * (1.0f / kHidden) + a.eps);
#pragma unroll
  for (int i = 0; i < kVecsPerThread; ++i) {
    const int vi = thread_x() + i * kThreads;
    if (kVecs % kThreads == 0 || vi < kVecs) {
      V w = load_vec<T, kLoadBytes>(a.weight + vi * kPerVec);
      V o;
#pragma unroll
      for (int j = 0; j < kPerVec; ++j) o.v[j] = from_float<T>(vals[i][j] * scale * to_float(w.v[j]));
      store_vec<T, kLoadBytes>(out + vi * kPerVec, o);
    }
  }
}

}  // namespace ft
