// RoPE on q and k, fused with Qwen3's per-head q/k RMSNorm and the write of
// k and v into the paged KV cache (contract: runtime/ops/rope.h).
//
// A group of kLanes lanes (8, 16 or 32) per head, inside one wave, so the
// per-head norm is a shuffle sum and no LDS is needed. A block has
// kHeadsPerBlock lane groups on one token: grid = (tokens, head groups), heads
// counted over q, then k, then v. On few tokens a group takes one head (as
// many blocks as possible for a latency-bound launch); on many, several, so
// each lane has more bytes in flight: one 4-byte pair of loads per lane cannot
// cover the memory latency (RoPE ran at 57% of copy so). Fewer lanes per head
// means wider loads and fewer instructions per byte (the shuffles, the
// conversions and the address arithmetic are per lane), which a GPU whose
// memory outruns its issue rate needs. Each lane holds head_dim / kLanes
// elements: NEOX pairs x[i] with x[i + d/2], so a lane takes a slice of each
// half; NORM pairs neighbours, so a lane takes one contiguous slice.
//
// Bytes: the qkv row is read once, q_out and the K/V slots written once; at
// Qwen3-8B shapes (48 heads x 128 x bf16) that is 12 KiB in and 12 KiB out
// per token, so the op is memory-bound and the sin/cos per pair is free.
#include "ft_device.h"

namespace ft {

template <typename T>
struct RopeArgs {
  const T* qkv;             // [n_tokens, (n_heads + 2 * n_kv_heads) * head_dim]
  const int* positions;     // [n_tokens]
  const int* slots;         // [n_tokens], -1 = no cache write
  const float* inv_freq;    // [head_dim / 2]
  const T* q_norm;          // [head_dim], read only with kHasNorm
  const T* k_norm;          // [head_dim], read only with kHasNorm
  T* q_out;                 // [n_tokens, n_heads, head_dim]
  T* k_cache;               // [slots, n_kv_heads, head_dim]
  T* v_cache;
  float mscale;
  float norm_eps;
  int n_tokens;
  int n_heads;
  int n_kv_heads;
  int heads_per_group;  // 1 .. kMaxHeadsPerGroup
};

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

// The sum over a lane group. Groups of one wave may differ in their path (a
// v head beside a k head, or a group past the last head that returned).
template <int kLanes>
FT_DEVICE float group_sum(float v) {
#pragma unroll
  for (int mask = kLanes / 2; mask > 0; mask >>= 1) v += shfl_xor_in<kLanes>(v, mask);
  return v;
}

// kStyle: 0 = NORM (adjacent pairs), 1 = NEOX (halves). A lane group takes
// a.heads_per_group (at most kMaxHeadsPerGroup) consecutive heads of its
// token: all of their loads are issued before any is used, and the q and k
// heads among them share this lane's sin/cos.
template <typename T, int kHeadDim, int kStyle, bool kHasNorm, int kLanes, int kHeadsPerBlock, int kMaxHeadsPerGroup>
FT_DEVICE void rope_qk_norm_kv_write(const RopeArgs<T>& a) {
  static_assert(kLanes == 8 || kLanes == 16 || kLanes == 32, "8, 16 or 32 lanes per head");
  static_assert(kHeadDim % (2 * kLanes) == 0, "head_dim must be a multiple of 2 x lanes");
  constexpr int kPer = kHeadDim / kLanes;  // elements per lane
  constexpr int kHalf = kPer / 2;
  const int token = block_x();
  const int lane = thread_x() % kLanes;
  const int per_group = a.heads_per_group;
  const int first = (block_y() * kHeadsPerBlock + thread_x() / kLanes) * per_group;
  const int n_q = a.n_heads, n_kv = a.n_kv_heads, row = n_q + 2 * n_kv;
  if (token >= a.n_tokens || first >= row) return;
  constexpr int kRunBytes = kHalf * static_cast<int>(sizeof(T));
  using Run = Vec<T, kRunBytes>;
  const int run0 = kStyle == 1 ? lane * kHalf : lane * kPer;
  const int run1 = kStyle == 1 ? kHeadDim / 2 + lane * kHalf : lane * kPer + kHalf;

  // The constants are requested before the wait for the kernel before (no
  // kernel writes them; jit/catalog.cpp's spec lets this kernel wait itself):
  // the frequencies and the q/k norm weights come from DRAM while that kernel
  // finishes, not after the norm's sum. Pair p of this lane is frequency
  // lane * kHalf + p in both styles.
  const bool has_rope = first < n_q + n_kv;  // some head of the group is q or k
  float freq[kHalf];
  if (has_rope) {
#pragma unroll
    for (int p = 0; p < kHalf; ++p) freq[p] = a.inv_freq[lane * kHalf + p];
  }
  Run wq0, wq1, wk0, wk1;
  if constexpr (kHasNorm) {
    if (first < n_q) {
      wq0 = load_vec<T, kRunBytes>(a.q_norm + run0);
      wq1 = load_vec<T, kRunBytes>(a.q_norm + run1);
    }
    if (first + per_group > n_q && has_rope) {
      wk0 = load_vec<T, kRunBytes>(a.k_norm + run0);
      wk1 = load_vec<T, kRunBytes>(a.k_norm + run1);
    }
  }
  grid_dependency_begin();
  const int slot = a.slots[token];
  const T* src = a.qkv + (static_cast<long long>(token) * row + first) * kHeadDim;

  // NEOX: elements [0, kHalf) of this lane sit in the first half of the head,
  // [kHalf, kPer) at the same offsets in the second; NORM: one contiguous run.
  // Either way two runs of kHalf elements (run0, run1), loaded as vectors.
  Run in0[kMaxHeadsPerGroup], in1[kMaxHeadsPerGroup];
#pragma unroll
  for (int h = 0; h < kMaxHeadsPerGroup; ++h) {
    if (h < per_group && first + h < row) {
      in0[h] = load_vec<T, kRunBytes>(src + h * kHeadDim + run0);
      in1[h] = load_vec<T, kRunBytes>(src + h * kHeadDim + run1);
    }
  }

  // NEOX pairs (p, p + kHalf), NORM pairs (2p, 2p + 1) of the lane's run.
  float sn[kHalf], cs[kHalf];
  if (has_rope) {
    const int pos = a.positions[token];
#pragma unroll
    for (int p = 0; p < kHalf; ++p) rope_sincos(static_cast<float>(pos), freq[p], &sn[p], &cs[p]);
  }

#pragma unroll
  for (int h = 0; h < kMaxHeadsPerGroup; ++h) {
    const int head = first + h;
    if (h >= per_group || head >= row) break;
    float x[kPer];
#pragma unroll
    for (int j = 0; j < kHalf; ++j) {
      x[j] = to_float(in0[h].v[j]);
      x[kHalf + j] = to_float(in1[h].v[j]);
    }
    T* dst = nullptr;
    if (head >= n_q + n_kv) {  // v: straight into the cache
      if (slot >= 0) dst = a.v_cache + (static_cast<long long>(slot) * n_kv + (head - n_q - n_kv)) * kHeadDim;
    } else {
      const bool is_q = head < n_q;
      if constexpr (kHasNorm) {
        float ss = 0.0f;
#pragma unroll
        for (int j = 0; j < kPer; ++j) ss += x[j] * x[j];
        const float r = fast_rsqrt(group_sum<kLanes>(ss) * (1.0f / kHeadDim) + a.norm_eps);
        // Chosen element by element: a reference to either array would put
        // them in local memory (f16 on sm_90: a 16-byte stack frame).
#pragma unroll
        for (int j = 0; j < kHalf; ++j) {
          x[j] = x[j] * r * to_float(is_q ? wq0.v[j] : wk0.v[j]);
          x[kHalf + j] = x[kHalf + j] * r * to_float(is_q ? wq1.v[j] : wk1.v[j]);
        }
      }
#pragma unroll
      for (int p = 0; p < kHalf; ++p) {
        const int i0 = kStyle == 1 ? p : 2 * p, i1 = kStyle == 1 ? p + kHalf : 2 * p + 1;
        const float x0 = x[i0], x1 = x[i1];
        x[i0] = (x0 * cs[p] - x1 * sn[p]) * a.mscale;
        x[i1] = (x0 * sn[p] + x1 * cs[p]) * a.mscale;
      }
      if (is_q) dst = a.q_out + (static_cast<long long>(token) * n_q + head) * kHeadDim;
      else if (slot >= 0) dst = a.k_cache + (static_cast<long long>(slot) * n_kv + (head - n_q)) * kHeadDim;
    }
    if (dst) {
      Run r0, r1;
#pragma unroll
      for (int j = 0; j < kHalf; ++j) {
        r0.v[j] = from_float<T>(x[j]);
        r1.v[j] = from_float<T>(x[kHalf + j]);
      }
      store_vec<T, kRunBytes>(dst + run0, r0);
      store_vec<T, kRunBytes>(dst + run1, r1);
    }
  }
}

}  // namespace ft
