// One head of one token under RoPE, on a group of 32 lanes (a wave on
// wave32, half of one on wave64): load, Qwen3's per-head RMSNorm, rotation,
// store. Shared by rope.hip's kernel and the decode attention that applies
// RoPE itself (attention.hip).
//
// Each lane holds head_dim / 32 elements: NEOX pairs x[i] with x[i + d/2],
// so a lane takes a slice of each half; NORM pairs neighbours, so a lane
// takes one contiguous slice. Either way two runs of kHalf elements.
#pragma once

#include "ft_device.h"

namespace ft {

constexpr int kRopeGroupLanes = 32;

// sin and cos of position * inv_freq, which reaches tens of thousands of
// radians: the product is kept exactly as hi + lo (an FMA gives the rounding
// error), reduced by 2 pi in two parts (Cody-Waite), and only the remainder in
// [-pi, pi] goes to the hardware approximation. A plain f32 product would be
// off by up to position * 2^-24 radians (2e-3 at 32k).
#if defined(FT_AMD)
FT_DEVICE float rope_fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
FT_DEVICE float rope_rint(float a) { return __builtin_rintf(a); }
#else
FT_DEVICE float rope_fma(float a, float b, float c) { return fmaf(a, b, c); }
FT_DEVICE float rope_rint(float a) { return rintf(a); }
#endif

FT_DEVICE void rope_sincos(float pos, float freq, float* s, float* c) {
  const float hi = pos * freq;
  const float lo = rope_fma(pos, freq, -hi);
  const float k = rope_rint(hi * 0.15915494309189535f);
  float r = rope_fma(-k, 6.28318548202514648f, hi);  // 2 pi rounded to f32
  r = rope_fma(-k, -1.7484555314695172e-7f, r) + lo;  // 2 pi - that
#if defined(FT_AMD)
  *s = __builtin_amdgcn_sinf(r * 0.15915494309189535f);  // v_sin_f32 / v_cos_f32 take revolutions
  *c = __builtin_amdgcn_cosf(r * 0.15915494309189535f);
#else
  __sincosf(r, s, c);  // accurate on [-pi, pi]
#endif
}

FT_DEVICE float group_sum32(float v) {
#pragma unroll
  for (int mask = kRopeGroupLanes / 2; mask > 0; mask >>= 1) v += shfl_xor(v, mask);
  return v;
}

template <typename T, int kHeadDim>
struct RopeHead {
  static_assert(kHeadDim % (2 * kRopeGroupLanes) == 0, "head_dim must be a multiple of 64");
  static constexpr int kPer = kHeadDim / kRopeGroupLanes;  // elements per lane
  static constexpr int kHalf = kPer / 2;
  static constexpr int kRunBytes = kHalf * static_cast<int>(sizeof(T));
  using Run = Vec<T, kRunBytes>;
  int run0, run1;  // the lane's two runs
  float x[kPer];

  FT_DEVICE RopeHead(bool neox, int lane)
      : run0(neox ? lane * kHalf : lane * kPer), run1(neox ? kHeadDim / 2 + lane * kHalf : lane * kPer + kHalf) {}

  FT_DEVICE void load(const T* src) {
    const Run r0 = load_vec<T, kRunBytes>(src + run0), r1 = load_vec<T, kRunBytes>(src + run1);
#pragma unroll
    for (int j = 0; j < kHalf; ++j) {
      x[j] = to_float(r0.v[j]);
      x[kHalf + j] = to_float(r1.v[j]);
    }
  }
  // x * rsqrt(mean(x^2) + eps) * w over the head.
  FT_DEVICE void norm(const T* w, float eps) {
    float ss = 0.0f;
#pragma unroll
    for (int j = 0; j < kPer; ++j) ss += x[j] * x[j];
    const float r = fast_rsqrt(group_sum32(ss) * (1.0f / kHeadDim) + eps);
    const Run w0 = load_vec<T, kRunBytes>(w + run0), w1 = load_vec<T, kRunBytes>(w + run1);
#pragma unroll
    for (int j = 0; j < kHalf; ++j) {
      x[j] = x[j] * r * to_float(w0.v[j]);
      x[kHalf + j] = x[kHalf + j] * r * to_float(w1.v[j]);
    }
  }
  // kStyle: 0 = NORM (adjacent pairs), 1 = NEOX (halves). Pair p of this
  // lane is frequency lane * kHalf + p in both styles: NEOX pairs
  // (p, p + kHalf), NORM pairs (2p, 2p + 1) of the lane's run.
  template <int kStyle>
  FT_DEVICE void rotate(int lane, int pos, const float* inv_freq, float mscale) {
#pragma unroll
    for (int p = 0; p < kHalf; ++p) {
      const int i0 = kStyle == 1 ? p : 2 * p, i1 = kStyle == 1 ? p + kHalf : 2 * p + 1;
      float s, c;
      rope_sincos(static_cast<float>(pos), inv_freq[lane * kHalf + p], &s, &c);
      const float x0 = x[i0], x1 = x[i1];
      x[i0] = (x0 * c - x1 * s) * mscale;
      x[i1] = (x0 * s + x1 * c) * mscale;
    }
  }
  FT_DEVICE void rotate(bool neox, int lane, int pos, const float* inv_freq, float mscale) {
    if (neox) rotate<1>(lane, pos, inv_freq, mscale);
    else rotate<0>(lane, pos, inv_freq, mscale);
  }
  // The values as stored in T.
  FT_DEVICE void round() {
#pragma unroll
    for (int j = 0; j < kPer; ++j) x[j] = to_float(from_float<T>(x[j]));
  }
  FT_DEVICE void store_f32(float* dst) const {
#pragma unroll
    for (int j = 0; j < kHalf; ++j) {
      dst[run0 + j] = x[j];
      dst[run1 + j] = x[kHalf + j];
    }
  }
  FT_DEVICE void store(T* dst) const {
    Run r0, r1;
#pragma unroll
    for (int j = 0; j < kHalf; ++j) {
      r0.v[j] = from_float<T>(x[j]);
      r1.v[j] = from_float<T>(x[kHalf + j]);
    }
    store_vec<T, kRunBytes>(dst + run0, r0);
    store_vec<T, kRunBytes>(dst + run1, r1);
  }
};

}  // namespace ft
