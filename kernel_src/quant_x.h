// The int8 x of the quantized GEMV: the 4-way int8 dot per vendor and the
// quantization of activations to int8 with one scale per 32 elements. Shared
// by quantize_x_q8 (gemv.hip) and the kernels that write x already quantized
// (rmsnorm.hip's q8 output), so every producer rounds the same way.
//
// The buffer for m rows of K elements (matmul_q8_bytes): int8 q [m][K], then
// the scales d [m][K / 32] as f32 (amax / 127; 0 for an all-zero block), then
// s [m][K / 32] = d * (the sum of the block's int8 values): the K-quants'
// mins term needs the sum of the same x the scales term sees.
#pragma once

#include "ft_device.h"

namespace ft {

// c + the 4-way dot product of the bytes of a and b, b's signed, a's signed
// or (kSignedA false) unsigned 0..255. One instruction where the target has
// it: dp4a on NVIDIA, sudot4 (either signedness) on gfx11/gfx12, sdot4 on
// gfx9 for signed a only; kDot4U8I8 says whether the unsigned form is one
// (callers keep to the signed form where it is not).
#if defined(FT_NVIDIA) || defined(FT_HAS_SUDOT4)
constexpr bool kDot4U8I8 = true;
#else
constexpr bool kDot4U8I8 = false;
#endif
template <bool kSignedA>
FT_DEVICE int dot4(int a, int b, int c) {
#if defined(FT_NVIDIA)
  int r;
  if constexpr (kSignedA)
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));  // FT_NVIDIA only
  else
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));  // FT_NVIDIA only
  return r;
#elif defined(FT_HAS_SUDOT4)
  return __builtin_amdgcn_sudot4(kSignedA, a, true, b, c, false);
#else
#if defined(FT_HAS_SDOT4)
  if constexpr (kSignedA) return __builtin_amdgcn_sdot4(a, b, c, false);
#endif
#pragma unroll
  for (int i = 0; i < 32; i += 8) {
    const int ai = kSignedA ? static_cast<int>(static_cast<signed char>(a >> i))
                            : static_cast<int>((static_cast<unsigned>(a) >> i) & 0xFFu);
    c += ai * static_cast<int>(static_cast<signed char>(b >> i));
  }
  return c;
#endif
}
FT_DEVICE int dot4_i8(int a, int b, int c) { return dot4<true>(a, b, c); }
FT_DEVICE int dot4_u8i8(int a, int b, int c) { return dot4<false>(a, b, c); }

FT_DEVICE float abs_max(float m, float v) {
#if defined(FT_AMD)
  return __builtin_fmaxf(m, __builtin_fabsf(v));
#else
  return fmaxf(m, fabsf(v));
#endif
}

// v + 1.5 * 2^23 rounds v to the nearest integer into the low mantissa bits;
// for |v| <= 127 the low byte is that integer as two's-complement int8.
FT_DEVICE ft_u32 round_i8(float v) { return float_bits(v + 12582912.0f) & 0xFFu; }
FT_DEVICE int pack_i8x4(float a, float b, float c, float d) {
  return static_cast<int>(round_i8(a) | (round_i8(b) << 8) | (round_i8(c) << 16) | (round_i8(d) << 24));
}

// Writes one 32-element block's scale and sum: block b of row `row` in a
// buffer of m rows of k elements (k a multiple of 32; a compile-time constant
// at most call sites, which folds it).
FT_DEVICE void store_q8_scales(ft_u8* buf, int m, int k, int row, int b, float amax, int qsum) {
  const int blocks = k / 32;
  float* d = reinterpret_cast<float*>(buf + static_cast<long long>(m) * k);
  const float scale = amax * (1.0f / 127.0f);
  d[row * blocks + b] = scale;
  d[m * blocks + row * blocks + b] = static_cast<float>(qsum) * scale;
}

// One lane's kPer values v (elements k0.. of row `row`, k0 a multiple of
// kPer) of a 32-element block held by 32 / kPer neighbouring lanes, into the
// buffer (m rows of k elements): the lanes meet by shuffles for the block's
// amax and sum, each stores its int8s, the block's first lane the scale and
// sum. Every lane of the wave calls it (the shuffles need them all); lanes
// with active == false hold no elements, and a block's lanes are all active
// or all not.
template <int kPer>
FT_DEVICE void quantize_q8_part(const float (&v)[kPer], bool active, ft_u8* buf, int m, int k, int row, int k0) {
  static_assert(32 % kPer == 0 && kPer % 4 == 0, "whole 32-element blocks of whole ints");
  constexpr int kLanes = 32 / kPer;
  float amax = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer; ++j) amax = abs_max(amax, v[j]);
#pragma unroll
  for (int mask = 1; mask < kLanes; mask <<= 1) amax = abs_max(amax, shfl_xor(amax, mask));
  const float inv = amax > 0.0f ? 127.0f * fast_rcp(amax) : 0.0f;
  Vec<int, kPer> q;
  int qsum = 0;
#pragma unroll
  for (int j = 0; j < kPer / 4; ++j) {
    q.v[j] = pack_i8x4(v[4 * j] * inv, v[4 * j + 1] * inv, v[4 * j + 2] * inv, v[4 * j + 3] * inv);
    qsum = dot4_i8(q.v[j], 0x01010101, qsum);
  }
  float sum = static_cast<float>(qsum);  // exact: |sum| <= 32 * 127
#pragma unroll
  for (int mask = 1; mask < kLanes; mask <<= 1) sum += shfl_xor(sum, mask);
  if (!active) return;
  store_vec<int, kPer>(reinterpret_cast<int*>(buf + static_cast<long long>(row) * k + k0), q);
  if (k0 % 32 == 0) store_q8_scales(buf, m, k, row, k0 / 32, amax, static_cast<int>(sum));
}

}  // namespace ft
