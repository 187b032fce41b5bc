// The kernel catalog: every instantiation ft ships for a target, so that
// `ft-jit warm --arch A` can build them all ahead of time. Each op family
// contributes a spec builder that reads its tile from gfx_targets.
#pragma once

#include <optional>
#include <vector>

#include "gfx_targets/targets.h"
#include "jit/kernel_spec.h"
#include "runtime/base/dtype.h"
#include "runtime/model/ggml_types.h"

namespace ft {

enum class GatedAct { kSilu, kGeluTanh };

// RMSNorm over rows of width `hidden`; with `add_residual`, fused with the
// residual add that precedes it.
// q8_out: also writes the row quantized for the quantized GEMV (kernel_src/quant_x.h).
KernelSpec rmsnorm_spec(const TargetFacts& target, DType dtype, int hidden, bool add_residual = false,
                        bool q8_out = false);
// act(gate) * up over [rows, 2 * inter].
KernelSpec gated_act_spec(const TargetFacts& target, DType dtype, GatedAct act, int inter);

// RoPE fused with the optional q/k RMSNorm and the paged K/V write
// (kernel_src/rope.hip). neox: NEOX pairs (halves), else NORM (neighbours).
// lanes_per_head: 0 for the tile's; either way rope_lanes_per_head's.
// Launch: block_threads = lanes * tile.heads_per_block.
KernelSpec rope_spec(const TargetFacts& target, DType dtype, int head_dim, bool neox, bool qk_norm,
                     int lanes_per_head = 0);
// The lanes per head the RoPE kernel runs with: `lanes` (8, 16 or 32),
// doubled while a lane's two runs of head_dim / (2 lanes) elements would be
// wider than 16 bytes each (one vector load), at most 32.
int rope_lanes_per_head(int lanes, DType dtype, int head_dim);
// Paged attention (kernel_src/attention.hip). group = n_heads / n_kv_heads.
// Decode launch: grid (partitions, n_seqs * n_kv_heads), block_threads.
// waves: per block; 0 is the tile's (runtime/ops/attention.cpp takes
// attention_decode_wide_waves for launches of few (sequence, KV head) pairs).
KernelSpec attention_decode_spec(const TargetFacts& target, DType dtype, int head_dim, int group, int block_size,
                                 int waves = 0);
// The decode block's waves for launches of few pairs: twice the tile's for
// groups of 2 or more query heads; the tile's for group 1 (sm_90 spilled a
// few bytes there with 8 waves), which then has no wider kernel.
int attention_decode_wide_waves(const TargetFacts& target, int group);
// Prefill / extend: mma.sync on NVIDIA for f16/bf16, the f32-FMA kernel
// otherwise. Grid (row tiles, n_seqs * n_kv_heads); rows per tile below.
KernelSpec attention_prefill_spec(const TargetFacts& target, DType dtype, int head_dim, int group, int block_size);
int attention_prefill_rows(const TargetFacts& target, DType dtype);
// (head_dim, group) pairs of real models: Llama-3-8B / Qwen3-8B / Mistral-7B
// 128/4, Qwen2.5-7B 128/7, Qwen3-0.6B / 1.7B 128/2, Qwen2.5-14B / Qwen3-14B
// 128/5, Qwen2.5-3B 128/8, Qwen2.5-1.5B 128/6, Llama-3.2-3B 128/3, MHA 128/1,
// Llama-3.2-1B 64/4, Qwen2.5-0.5B 64/7, and 64 with groups 1, 2, 5, 8.
std::vector<std::pair<int, int>> catalog_attention_shapes();

// Prefill GEMM y[m, n] = x[m, k] W[n, k]^T with k a template constant (m, n
// at run time): the matrix-core kernel for f16/bf16, a plain tiled FMA
// kernel for f32. Launch: gemm_launch_dims().
// small: the target's few-rows tile (tiles.gemm_small, which must exist),
// always the per-warp matrix-core kernel.
KernelSpec gemm_spec(const TargetFacts& target, DType dtype, int k, bool small = false);
// Threads per block and the M x N tile one block covers, for `dtype`.
struct GemmLaunchShape {
  int threads;
  int block_m;
  int block_n;
  int block_k;
};
GemmLaunchShape gemm_launch_shape(const TargetFacts& target, DType dtype, bool small = false);
// Whether the few-rows tile takes an m x k product (f16/bf16, a target that
// has one, m up to two of its row tiles, k a multiple of its K tile).
bool gemm_small_fits(const TargetFacts& target, DType dtype, int m, int k);
// Expands a GGUF weight of `type` (F32, F16, BF16, Q4_0, Q8_0, Q4_K, Q5_K,
// Q6_K) into `dtype`, 32 elements per thread, 256 threads per block: the
// GEMM's first step for weights not already of the activation type.
KernelSpec gemm_dequant_spec(const TargetFacts& target, DType dtype, GgmlType type);
// The weight types gemm_dequant_spec accepts.
bool gemm_dequant_supported(GgmlType type);
// Few rows of x (f16/bf16) against a quantized weight (Q4_0, Q8_0, Q4_K,
// Q5_K, Q6_K), the weight decoded into the matrix-core tile:
// kernel_src/gemm.hip's gemm_q, kGemmQWaves waves per block, grid (m /
// 32, n / (32 waves), K splits). With K split, gemm_q_reduce_spec adds the
// partial sums.
KernelSpec gemm_q_spec(const TargetFacts& target, DType dtype, GgmlType type);
KernelSpec gemm_q_reduce_spec(DType dtype);
bool gemm_q_supported(GgmlType type);
constexpr int kGemmQRows = 32, kGemmQCols = 32, kGemmQStep = 64, kGemmQWaves = 4;  // mirror kernel_src/gemm.hip
// The same product on NVIDIA matrix cores (mma.sync, sm_80 on) for Q4_K,
// Q5_K, Q6_K and Q8_0 with x rows in tiles of 8 * x_tiles (2 or 4):
// kernel_src/gemm.hip's gemm_qr, each warp decoding its 16 rows of W straight
// into its mma fragments, x shared by the block's warps through LDS (one
// barrier a K step). Grid (m / (8 x_tiles), n /
// (16 kGemmQrWaves), K splits), the partial sums as gemm_q's.
bool gemm_qr_supported(const TargetFacts& target, GgmlType type);
KernelSpec gemm_qr_spec(const TargetFacts& target, DType dtype, GgmlType type, int x_tiles);
constexpr int kGemmQrWaves = 4, kGemmQrStep = 256;  // mirror kernel_src/gemm.hip
// K dimensions of the dense 8B models' projections (hidden 4096, Llama-3 /
// Qwen3 intermediate 12288 and 14336) that the catalog prebuilds.
std::vector<int> catalog_gemm_k_sizes();

// Decode GEMV y[m, n] = x[m, k] W[n, k]^T for m <= m_bucket (1, 2, 4 or 8),
// k a template constant, n and m at run time; x and y of `act`, W of `weight`
// (F32/F16/BF16 or Q8_0/Q4_0/Q4_K/Q5_K/Q6_K). Launch: one block per
// gemv_rows_per_block() rows, target.tiles.gemv.block_threads threads.
// With `gate`, x is the [m, 2k] gate_up output and the kernel multiplies
// gate(x[:, :k]) * x[:, k:] (the gated activation fused into its x load).
// For quantized weights the GEMV reads x quantized by the
// gemv_quantize_x_spec kernel (which then takes the gate), into
// gemv_quantized_x_bytes(m, k) of scratch; one 16-byte load of x per
// thread, grid ceil(m * k / (16 / element bytes) / kGemvQuantizeThreads).
KernelSpec gemv_spec(const TargetFacts& target, DType act, GgmlType weight, int k, int m_bucket,
                     std::optional<GatedAct> gate = std::nullopt);
// Two quantized weights of different types on one quantized x in one
// launch (gemv.hip's gemv_quant2; both must be gemv_quantized): the
// first's blocks, then the second's, each sized as for gemv_spec.
KernelSpec gemv2_spec(const TargetFacts& target, DType act, GgmlType first, GgmlType second, int k, int m_bucket);
constexpr int kGemvQuantizeThreads = 128;
KernelSpec gemv_quantize_x_spec(DType act, int k, std::optional<GatedAct> gate = std::nullopt);
size_t gemv_quantized_x_bytes(int m, int k);
bool gemv_quantized(GgmlType weight);  // the GEMV reads quantized x
int gemv_m_bucket(int m);  // 1, 2, 4 or 8 for m in 1..8
int gemv_rows_per_block(const TargetFacts& target, int m_bucket);
// Steps of K per wave of the quantized GEMV (gemv.hip's kStepsPerWave; 0 for
// dense weights). At 1 the kernel is persistent: its grid may be smaller
// than the row groups, each block taking every grid-th group; otherwise the
// grid must have one block per group.
int gemv_steps_per_wave(const TargetFacts& target, GgmlType weight, int k);
bool gemv_supports(GgmlType weight);
// K dimensions of the catalog models' projections (hidden, intermediate and
// attention-output widths of Llama-3-8B, Qwen3-8B, Qwen2.5-7B, Llama-3.2-1B, Qwen3-0.6B).
std::vector<int> catalog_gemv_k_sizes();

// Row widths of the dense Llama / Qwen2 / Qwen3 / Mistral / Gemma families.
std::vector<int> catalog_hidden_sizes();
std::vector<int> catalog_intermediate_sizes();

// Embedding gather from a GGUF token table of `type` into `dtype` rows
// (kernel_src/embedding.hip). Launch: grid (ceil(hidden / 32 / threads), n_tokens).
KernelSpec embedding_spec(const TargetFacts& target, DType dtype, GgmlType type);
bool embedding_supports(GgmlType type);

// Argmax and the seeded sampler over rows of logits (kernel_src/sampling.hip):
// one block of block_threads per row.
KernelSpec argmax_spec(const TargetFacts& target, DType dtype);
KernelSpec sample_spec(const TargetFacts& target, DType dtype);

std::vector<KernelSpec> kernel_catalog(const TargetFacts& target);

}  // namespace ft
