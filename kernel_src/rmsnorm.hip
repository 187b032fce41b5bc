// RMSNorm: out[r, :] = x[r, :] * rsqrt(mean(x[r, :]^2) + eps) * weight.
// With kAddResidual, the skip connection is fused in: h = x + residual is
// rounded to T (as a framework computing in T would), written to
// residual_out for the next layer, and normalized. That saves a separate add
// kernel's full read and write of the hidden state per norm.
//
// With kQ8Out the normalized row is also written quantized for the quantized
// GEMV that reads it (quant_x.h's buffer of `rows` rows), from the values as
// rounded to T, so the result is what quantize_x_q8 would make of `out`: the
// GEMV then starts without that kernel. A 32-element block spans
// 32 / (elements per vector) neighbouring threads; they meet by shuffles.
//
// One block per row. The row width is a template constant, so each thread
// keeps its slice in registers (hidden 8192 at 256 threads and 16-byte loads is
// 4 vectors of 8 bf16 per thread; wider rows get more threads, see
// jit/catalog.cpp's norm_block_threads): one read of x, one write of out; the weight
// read is shared by all rows and stays in L2. Memory-bound: at 4096 x bf16 a row
// is 8 KiB in and 8 KiB out.
#include "quant_x.h"

namespace ft {

template <typename T>
struct RmsNormArgs {
  const T* x;       // [rows, hidden]
  const T* weight;  // [hidden]
  T* out;           // [rows, hidden]
  const T* residual;  // [rows, hidden], read only with kAddResidual
  T* residual_out;    // [rows, hidden] = x + residual, written only with kAddResidual
  float eps;
  int rows;
  ft_u8* q8;  // the quantized out, written only with kQ8Out
};

template <typename T, int kHidden, int kThreads, int kLoadBytes, bool kAddResidual, bool kQ8Out = false>
FT_DEVICE void rmsnorm(const RmsNormArgs<T>& a) {
  using V = Vec<T, kLoadBytes>;
  constexpr int kPerVec = V::kCount;
  static_assert(kHidden % kPerVec == 0, "the row width must be a whole number of vectors");
  constexpr int kVecs = kHidden / kPerVec;
  constexpr int kVecsPerThread = (kVecs + kThreads - 1) / kThreads;

  __shared__ float scratch[(kThreads + FT_WAVE_SIZE - 1) / FT_WAVE_SIZE];
  const int row = block_x();
  if (row >= a.rows) return;
  const long long offset = static_cast<long long>(row) * kHidden;
  const T* x = a.x + offset;
  T* out = a.out + offset;

  // The row is held as T (what the sum rounds to anyway), half the registers
  // of floats for 16-bit types. The weight is requested before the wait for
  // the kernel before (no kernel writes weights; jit/catalog.cpp's spec lets
  // this kernel wait itself): it comes from DRAM, the layer's GEMVs having
  // streamed it out of L2, while that kernel finishes, so no global load
  // waits behind the block sum. Unless a thread holds more than 4 vectors
  // (rows wider than 8192 bf16): then it comes after the sum, from L2 (every
  // row reads it), and the registers it frees keep a second row resident.
  constexpr bool kWeightEarly = kVecsPerThread <= 4;
  V xs[kVecsPerThread];
  V w[kVecsPerThread];
  if constexpr (kWeightEarly) {
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const int vi = thread_x() + i * kThreads;
      if (kVecs % kThreads == 0 || vi < kVecs) w[i] = load_vec<T, kLoadBytes>(a.weight + vi * kPerVec);
    }
  }
  grid_dependency_begin();
  float sum_sq = 0.0f;
#pragma unroll
  for (int i = 0; i < kVecsPerThread; ++i) {
    const int vi = thread_x() + i * kThreads;
    if (kVecs % kThreads == 0 || vi < kVecs) {
      xs[i] = load_vec<T, kLoadBytes>(x + vi * kPerVec);
      if constexpr (kAddResidual) {
        V r = load_vec<T, kLoadBytes>(a.residual + offset + vi * kPerVec);
#pragma unroll
        for (int j = 0; j < kPerVec; ++j) xs[i].v[j] = from_float<T>(to_float(xs[i].v[j]) + to_float(r.v[j]));
        store_vec<T, kLoadBytes>(a.residual_out + offset + vi * kPerVec, xs[i]);
      }
#pragma unroll
      for (int j = 0; j < kPerVec; ++j) {
        const float f = to_float(xs[i].v[j]);
        sum_sq += f * f;
      }
    }
  }
  const float scale = fast_rsqrt(block_sum<kThreads>(sum_sq, scratch) * (1.0f / kHidden) + a.eps);
  if constexpr (!kWeightEarly) {
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const int vi = thread_x() + i * kThreads;
      if (kVecs % kThreads == 0 || vi < kVecs) w[i] = load_vec<T, kLoadBytes>(a.weight + vi * kPerVec);
    }
  }
#pragma unroll
  for (int i = 0; i < kVecsPerThread; ++i) {
    const int vi = thread_x() + i * kThreads;
    const bool active = kVecs % kThreads == 0 || vi < kVecs;
    V o;
    if (active) {
#pragma unroll
      for (int j = 0; j < kPerVec; ++j) o.v[j] = from_float<T>(to_float(xs[i].v[j]) * scale * to_float(w[i].v[j]));
      store_vec<T, kLoadBytes>(out + vi * kPerVec, o);
    }
    if constexpr (kQ8Out) {
      // The values as rounded to T; every thread takes part (shuffles).
      float v[kPerVec];
#pragma unroll
      for (int j = 0; j < kPerVec; ++j) v[j] = active ? to_float(o.v[j]) : 0.0f;
      quantize_q8_part<kPerVec>(v, active, a.q8, a.rows, kHidden, row, vi * kPerVec);
    }
  }
}

}  // namespace ft
