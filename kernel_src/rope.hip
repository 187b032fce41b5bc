// RoPE on q and k, fused with Qwen3's per-head q/k RMSNorm and the write of
// k and v into the paged KV cache (contract: runtime/ops/rope.h).
//
// One group of 32 lanes per head (rope_head.h), so the per-head norm is a
// 5-step shuffle sum and no LDS is needed. A block covers kHeadsPerBlock
// heads of one token: grid = (tokens, head groups), heads counted over q,
// then k, then v. (Decode attention does this op's work itself in decode
// steps: attention.hip.)
//
// Bytes: the qkv row is read once, q_out and the K/V slots written once; at
// Qwen3-8B shapes (48 heads x 128 x bf16) that is 12 KiB in and 12 KiB out
// per token, so the op is memory-bound and the sin/cos per pair is free.
#include "rope_head.h"

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
};

// kStyle: 0 = NORM (adjacent pairs), 1 = NEOX (halves).
template <typename T, int kHeadDim, int kStyle, bool kHasNorm, int kHeadsPerBlock>
FT_DEVICE void rope_qk_norm_kv_write(const RopeArgs<T>& a) {
  const int token = block_x();
  const int lane = thread_x() % kRopeGroupLanes;
  const int head = block_y() * kHeadsPerBlock + thread_x() / kRopeGroupLanes;
  const int n_q = a.n_heads, n_kv = a.n_kv_heads;
  if (token >= a.n_tokens || head >= n_q + 2 * n_kv) return;
  const int slot = a.slots[token];
  const int row = n_q + 2 * n_kv;
  RopeHead<T, kHeadDim> h(kStyle == 1, lane);
  h.load(a.qkv + (static_cast<long long>(token) * row + head) * kHeadDim);

  if (head >= n_q + n_kv) {  // v: straight into the cache
    if (slot < 0) return;
    h.store(a.v_cache + (static_cast<long long>(slot) * n_kv + (head - n_q - n_kv)) * kHeadDim);
    return;
  }
  const bool is_q = head < n_q;
  if constexpr (kHasNorm) h.norm(is_q ? a.q_norm : a.k_norm, a.norm_eps);
  h.template rotate<kStyle>(lane, a.positions[token], a.inv_freq, a.mscale);
  if (is_q) {
    h.store(a.q_out + (static_cast<long long>(token) * n_q + head) * kHeadDim);
  } else if (slot >= 0) {
    h.store(a.k_cache + (static_cast<long long>(slot) * n_kv + (head - n_q)) * kHeadDim);
  }
}

}  // namespace ft
