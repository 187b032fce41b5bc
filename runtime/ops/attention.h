// Attention over the paged KV cache (layout in kv_cache_layout.h), causal,
// with grouped-query heads (n_heads a multiple of n_kv_heads).
//
// A batch holds n_seqs sequences. Sequence s has q_len[s] new query tokens,
// packed in q at rows q_start[s] .. q_start[s+1] (int32 [n_seqs + 1]), and
// context_lens[s] tokens in the cache, the new ones included (their K/V were
// written by rope_qk_norm_kv_write first). New token i of sequence s sits at
// position context_lens[s] - q_len[s] + i and attends to cache positions
// 0 ..= that position. block_tables is int32 [n_seqs, max_blocks_per_seq].
//
// q is [n_q_tokens, n_heads, head_dim]; out is [n_q_tokens, n_heads * head_dim].
// softmax scale is `scale` (1/sqrt(head_dim) for these models).
#pragma once

#include "runtime/ops/kv_cache_layout.h"
#include "runtime/ops/op_context.h"

namespace ft {

struct AttentionShape {
  int n_seqs = 0;
  int n_q_tokens = 0;       // q_start[n_seqs]
  int n_heads = 0;
  int max_q_len = 0;        // max over sequences of q_len (1 for pure decode)
  int max_context = 0;      // max over sequences of context_lens
  int max_blocks_per_seq = 0;
  float scale = 0.0f;
};

// Decode: every sequence has exactly one query token (q_start[s] = s).
// Splits the context across blocks, and the last block of each (sequence, KV
// head) to finish merges the partitions. `workspace` must hold
// attention_decode_workspace_bytes(), and its last
// attention_decode_counter_bytes() (the arrival counters, for this batch or
// any smaller one) must be zero before the first call: the kernels leave them
// zero. With out_q8 (GPUs), `out` is also
// written quantized for the quantized GEMV of the o projection (matmul_q8_bytes(
// n_seqs, n_heads * head_dim) bytes), so that matmul needs no quantization kernel.
size_t attention_decode_workspace_bytes(const AttentionShape& shape, const KvLayout& kv);
size_t attention_decode_counter_bytes(const AttentionShape& shape, const KvLayout& kv);
// The partitions each context splits into (the decode grid's x) for a tile
// partition of `partition` tokens (>= kMinDecodePartition) when
// `resident_blocks` decode blocks fit the GPU at once.
int attention_decode_parts(const AttentionShape& shape, const KvLayout& kv, int partition, int resident_blocks);
Status attention_decode(OpContext& ctx, DType dtype, const AttentionShape& shape, const KvLayout& kv, DeviceBuffer q,
                        DeviceBuffer k_cache, DeviceBuffer v_cache, DeviceBuffer block_tables,
                        DeviceBuffer context_lens, DeviceBuffer workspace, DeviceBuffer out,
                        DeviceBuffer out_q8 = {});

// Prefill / extend: any q_len per sequence (flash-style online softmax).
Status attention_prefill(OpContext& ctx, DType dtype, const AttentionShape& shape, const KvLayout& kv, DeviceBuffer q,
                         DeviceBuffer q_start, DeviceBuffer k_cache, DeviceBuffer v_cache, DeviceBuffer block_tables,
                         DeviceBuffer context_lens, DeviceBuffer out);

// f32 reference for both (double accumulation), multithreaded over heads.
void attention_reference(const AttentionShape& shape, const KvLayout& kv, const float* q, const int32_t* q_start,
                         const float* k_cache, const float* v_cache, const int32_t* block_tables,
                         const int32_t* context_lens, float* out);

}  // namespace ft
