// RoPE on q and k, fused with the optional per-head q/k RMSNorm (Qwen3) and
// the write of k and v into the paged KV cache.
//
// qkv is [n_tokens, (n_heads + 2 * n_kv_heads) * head_dim] of `dtype`: q heads,
// then k heads, then v heads (the order of the fused projection). For each
// token t at position positions[t]:
//   q_h = rope(norm_q(q_h)); k_h = rope(norm_k(k_h))   (norm only when weights given)
//   q_out[t, h, :] = q_h;  cache K/V at slot slots[t] <- k_h, v_h
// A slot of -1 skips the cache write (padding tokens).
//
// rope: for pair i in [0, head_dim / 2) with angle a = position * inv_freq[i],
//   NEOX rotates (x[i], x[i + d/2]); NORM rotates (x[2i], x[2i+1]):
//   (x0, x1) -> (x0 cos a - x1 sin a, x0 sin a + x1 cos a), then both times
//   `mscale` (YaRN's attention factor; 1 otherwise).
// inv_freq (f32 [head_dim / 2]) holds every scaling (linear, llama3, YaRN);
// rope_inv_freq() computes it from the model config on the host.
#pragma once

#include <vector>

#include "runtime/model/model_config.h"
#include "runtime/ops/kv_cache_layout.h"
#include "runtime/ops/op_context.h"

namespace ft {

struct RopeShape {
  int n_tokens = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  RopeStyle style = RopeStyle::kNeox;
  float mscale = 1.0f;
  float norm_eps = 1e-6f;  // for the q/k norm
};

struct RopeTables {
  std::vector<float> inv_freq;  // head_dim / 2
  float mscale = 1.0f;
};
// From rope_theta and rope_scaling (linear, llama3 freq factors, YaRN ramp).
RopeTables rope_inv_freq(const ModelConfig& config);

// q_norm / k_norm: [head_dim] weights, or a null buffer (ptr 0) for none.
// k_cache / v_cache: this layer's cache, laid out as `kv`.
Status rope_qk_norm_kv_write(OpContext& ctx, DType dtype, const RopeShape& shape, DeviceBuffer qkv,
                             DeviceBuffer positions, DeviceBuffer slots, DeviceBuffer inv_freq, DeviceBuffer q_norm,
                             DeviceBuffer k_norm, DeviceBuffer q_out, const KvLayout& kv, DeviceBuffer k_cache,
                             DeviceBuffer v_cache);

// Heads per lane group for a launch over n_tokens x heads: the largest of
// tile.heads_per_group, halved, ... 1 whose grid still has resident_blocks
// blocks, so decode keeps one head per group and long prompts take several.
int rope_heads_per_group(const RopeTile& tile, int n_tokens, int heads, int resident_blocks);

// f32 reference of the same.
void rope_qk_norm_kv_write_reference(const RopeShape& shape, const float* qkv, const int32_t* positions,
                                     const int32_t* slots, const float* inv_freq, const float* q_norm,
                                     const float* k_norm, float* q_out, const KvLayout& kv, float* k_cache,
                                     float* v_cache);

}  // namespace ft
