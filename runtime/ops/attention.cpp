#include "runtime/ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "jit/catalog.h"
#include "runtime/base/env.h"

namespace ft {

void attention_reference(const AttentionShape& s, const KvLayout& kv, const float* q, const int32_t* q_start,
                         const float* k_cache, const float* v_cache, const int32_t* block_tables,
                         const int32_t* context_lens, float* out) {
  const int d = kv.head_dim;
  const int group = s.n_heads / kv.n_kv_heads;
  // Rows of q belong to sequences by q_start; flatten (row, head) pairs.
  std::vector<int> seq_of(static_cast<size_t>(s.n_q_tokens));
  for (int sq = 0; sq < s.n_seqs; ++sq)
    for (int r = q_start[sq]; r < q_start[sq + 1]; ++r) seq_of[r] = sq;
  const int64_t pairs = static_cast<int64_t>(s.n_q_tokens) * s.n_heads;
#pragma omp parallel for schedule(dynamic, 4)
  for (int64_t p = 0; p < pairs; ++p) {
    const int r = static_cast<int>(p / s.n_heads), h = static_cast<int>(p % s.n_heads);
    const int sq = seq_of[r];
    const int q_len = q_start[sq + 1] - q_start[sq];
    const int pos = context_lens[sq] - q_len + (r - q_start[sq]);
    const int kvh = h / group;
    const float* qv = q + (static_cast<size_t>(r) * s.n_heads + h) * d;
    std::vector<double> score(static_cast<size_t>(pos) + 1);
    double max_score = -INFINITY;
    auto slot_of = [&](int t) {
      const int block = block_tables[static_cast<size_t>(sq) * s.max_blocks_per_seq + t / kv.block_size];
      return static_cast<size_t>(block) * kv.block_size + t % kv.block_size;
    };
    for (int t = 0; t <= pos; ++t) {
      const float* kt = k_cache + (slot_of(t) * kv.n_kv_heads + kvh) * d;
      double dot = 0;
      for (int i = 0; i < d; ++i) dot += static_cast<double>(qv[i]) * kt[i];
      score[t] = dot * s.scale;
      max_score = std::max(max_score, score[t]);
    }
    double sum = 0;
    for (double& x : score) sum += (x = std::exp(x - max_score));
    std::vector<double> acc(d, 0.0);
    for (int t = 0; t <= pos; ++t) {
      const float* vt = v_cache + (slot_of(t) * kv.n_kv_heads + kvh) * d;
      for (int i = 0; i < d; ++i) acc[i] += score[t] * vt[i];
    }
    float* o = out + (static_cast<size_t>(r) * s.n_heads + h) * d;
    for (int i = 0; i < d; ++i) o[i] = static_cast<float>(acc[i] / sum);
  }
}

namespace {

// Checks what every attention launcher shares; `q_start` null for decode.
Status check_attention(const char* op, DType dtype, const AttentionShape& s, const KvLayout& kv, DeviceBuffer q,
                       DeviceBuffer k_cache, DeviceBuffer v_cache, DeviceBuffer block_tables,
                       DeviceBuffer context_lens, DeviceBuffer out) {
  const size_t es = dtype_size(dtype);
  if (s.n_seqs <= 0 || s.n_q_tokens < s.n_seqs || s.n_heads <= 0 || kv.n_kv_heads <= 0 ||
      s.n_heads % kv.n_kv_heads != 0 || kv.head_dim <= 0 || kv.block_size <= 0 || s.max_blocks_per_seq <= 0 ||
      s.max_context > s.max_blocks_per_seq * kv.block_size)
    return FT_ERROR(ErrorCode::kInvalidArgument,
                    "{}: bad shape ({} seqs, {} query tokens, {}/{} heads, head_dim {}, {} blocks of {} per seq, max context {})",
                    op, s.n_seqs, s.n_q_tokens, s.n_heads, kv.n_kv_heads, kv.head_dim, s.max_blocks_per_seq,
                    kv.block_size, s.max_context);
  const size_t qn = static_cast<size_t>(s.n_q_tokens) * s.n_heads * kv.head_dim * es;
  if (q.bytes < qn || out.bytes < qn || k_cache.bytes < kv.elements() * es || v_cache.bytes < kv.elements() * es ||
      block_tables.bytes < static_cast<size_t>(s.n_seqs) * s.max_blocks_per_seq * 4 ||
      context_lens.bytes < static_cast<size_t>(s.n_seqs) * 4)
    return FT_ERROR(ErrorCode::kInvalidArgument, "{}: buffers too small", op);
  return Status();
}

// The CPU path checks what the kernels trust: contexts within the table and
// block ids within the cache.
Status check_cpu_tables(const char* op, const AttentionShape& s, const KvLayout& kv, const int32_t* q_start,
                        const int32_t* block_tables, const int32_t* context_lens) {
  for (int sq = 0; sq < s.n_seqs; ++sq) {
    const int q_len = q_start[sq + 1] - q_start[sq];
    const int ctx_len = context_lens[sq];
    if (q_len < 1 || ctx_len < q_len || ctx_len > s.max_blocks_per_seq * kv.block_size || q_start[sq + 1] > s.n_q_tokens)
      return FT_ERROR(ErrorCode::kInvalidArgument, "{}: sequence {} has {} new of {} tokens (table holds {})", op, sq,
                      q_len, ctx_len, s.max_blocks_per_seq * kv.block_size);
    for (int b = 0; b < (ctx_len + kv.block_size - 1) / kv.block_size; ++b) {
      const int block = block_tables[static_cast<size_t>(sq) * s.max_blocks_per_seq + b];
      if (block < 0 || block >= kv.num_blocks)
        return FT_ERROR(ErrorCode::kInvalidArgument, "{}: sequence {} maps block {} to {} (cache has {})", op, sq, b,
                        block, kv.num_blocks);
    }
  }
  return Status();
}

// ---- GPU launchers ----------------------------------------------------------------

constexpr float kLog2e = 1.4426950408889634f;

// Decode split-K (kernel_src/attention.hip's decode_span): a partition holds
// at least decode_min_span() context tokens (below that a block is mostly
// fixed cost), and filling the GPU never launches more than kDecodeFillBlocks
// blocks. 64 tokens; FT_DECODE_MIN_SPAN (16 to 4096, at most the target's
// partition at launch) sets another, for tuning: a longer span leaves short
// contexts to one block, which skips the merge.
int decode_min_span() {
  static const int span = [] {
    const int v = env_int("FT_DECODE_MIN_SPAN", [](int n) { return n >= 16 && n <= 4096; }, "16 to 4096");
    return v ? v : 64;
  }();
  return span;
}
constexpr int kDecodeFillBlocks = 1024;

// Waves per decode block. A launch of at most 16 (sequence, KV head) pairs
// (batch 1 and 2 of 8 KV heads) takes attention_decode_wide_waves (twice the
// tile's for groups of 2 or more), which spread a partition's keys over
// more lanes (kernel_src/attention.hip): fewer dependent instructions per
// wave where the blocks' latency sets the time. H100, 32 q / 8 kv heads x
// 128, attention_bench: batch 1 at 4,096 tokens 14.83 -> 12.02 us. Larger
// launches are bound by memory and keep the tile's: forced to 8 waves,
// batch 32 at 4,096 and batch 8 at 16,384 fell from 88-90% to 73-75% of copy
// (a block's loads in flight are split over twice the lanes, and half as
// many blocks fit an SM). The rule does not ask the device, so a kernel plan
// made without one (ft-jit warm) holds the kernel each batch uses.
// FT_DECODE_WAVES (4, 8 or 16) sets every launch's, for tuning.
int attention_decode_waves(const TargetFacts& t, int pairs, int group) {
  static const int forced =
      env_int("FT_DECODE_WAVES", [](int v) { return v == 4 || v == 8 || v == 16; }, "4, 8 or 16");
  if (forced) return forced;
  return pairs <= 16 ? attention_decode_wide_waves(t, group) : t.tiles.attn.decode_waves;
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Partials of `seq_parts` (sequence, partition) pairs: out[head_dim], then
// the running max and sum, per head.
size_t decode_partial_bytes(size_t seq_parts, int n_heads, int head_dim) {
  return seq_parts * n_heads * (static_cast<size_t>(head_dim) + 2) * sizeof(float);
}

// The most partitions per context that filling the GPU may ask for.
int decode_fill_parts(const AttentionShape& s, const KvLayout& kv) {
  return std::min(ceil_div(std::max(s.max_context, 1), decode_min_span()),
                  ceil_div(kDecodeFillBlocks, std::max(s.n_seqs, 1) * kv.n_kv_heads));
}

// What the kernels take: head_dim a multiple of the 16-byte vector up to 256
// (f32: 128, so one V row fits a wave's lanes), groups up to 8 (the decode
// kernel keeps q for the whole group in registers).
Status check_gpu_attention(const char* op, DType dtype, const AttentionShape& s, const KvLayout& kv) {
  const int group = s.n_heads / kv.n_kv_heads;
  const int max_dim = dtype == DType::kF32 ? 128 : 256;
  if (kv.head_dim % 64 != 0 || kv.head_dim > max_dim || group > 8 || 256 % kv.block_size != 0)
    return FT_ERROR(ErrorCode::kUnsupported,
                    "{}: head_dim {} ({}), group {} or block size {}: the kernels take head_dim 64..{} in steps of 64, "
                    "groups up to 8, block sizes dividing 256",
                    op, kv.head_dim, dtype_name(dtype), group, kv.block_size, max_dim);
  return Status();
}

Status launch_decode(OpContext& ctx, DType dtype, const AttentionShape& s, const KvLayout& kv, DeviceBuffer q,
                     DeviceBuffer k_cache, DeviceBuffer v_cache, DeviceBuffer block_tables, DeviceBuffer context_lens,
                     DeviceBuffer workspace, DeviceBuffer out, DeviceBuffer out_q8) {
  FT_RETURN_IF_ERROR(check_gpu_attention("attention_decode", dtype, s, kv));
  const size_t q8_bytes = gemv_quantized_x_bytes(s.n_seqs, s.n_heads * kv.head_dim);
  if (out_q8.ptr && out_q8.bytes < q8_bytes)
    return FT_ERROR(ErrorCode::kInvalidArgument, "attention_decode: the quantized output needs {} bytes, has {}",
                    q8_bytes, out_q8.bytes);
  const TargetFacts& t = ctx.facts();
  const int group = s.n_heads / kv.n_kv_heads;
  const KernelSpec spec =
      attention_decode_spec(t, dtype, kv.head_dim, group, kv.block_size,
                            attention_decode_waves(t, s.n_seqs * kv.n_kv_heads, group));
  FT_ASSIGN_OR_RETURN(KernelHandle k, ctx.kernel(spec));
  FT_ASSIGN_OR_RETURN(const int resident, ctx.resident_blocks(spec));
  const int parts = attention_decode_parts(s, kv, t.tiles.attn.decode_partition, resident);
  // Partials from the start of the workspace, one counter per (sequence, KV
  // head) at its end (the last counter bytes of any batch's workspace).
  const size_t counter_bytes = attention_decode_counter_bytes(s, kv);
  const size_t out_floats = static_cast<size_t>(s.n_seqs) * s.n_heads * parts * kv.head_dim;
  const size_t need =
      counter_bytes + decode_partial_bytes(static_cast<size_t>(s.n_seqs) * parts, s.n_heads, kv.head_dim);
  if (parts > 1 && workspace.bytes < need)
    return FT_ERROR(ErrorCode::kInvalidArgument, "attention_decode: workspace of {} bytes, needs {}", workspace.bytes,
                    need);
  const uint64_t partials = workspace.ptr, counters = workspace.ptr + workspace.bytes - counter_bytes;
  // Mirrors kernel_src/attention.hip's DecodeArgs<T>.
  struct {
    uint64_t q, k_cache, v_cache, block_tables, context_lens, part_out, part_ml, out;
    float scale_log2;
    int n_heads, n_kv_heads, max_blocks, max_parts, direct, n_seqs, min_span;
    uint64_t q8, counters;
  } args{q.ptr,          k_cache.ptr,
         v_cache.ptr,    block_tables.ptr,
         context_lens.ptr, partials,
         partials + out_floats * sizeof(float), out.ptr,
         s.scale * kLog2e, s.n_heads,
         kv.n_kv_heads,  s.max_blocks_per_seq,
         parts,          parts == 1 ? 1 : 0,
         s.n_seqs,       std::min(decode_min_span(), t.tiles.attn.decode_partition),  // a span fits the LDS
         out_q8.ptr,     counters};
  static_assert(sizeof args == 112, "the layout of DecodeArgs<T>");
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>(parts);
  dims.grid[1] = static_cast<unsigned>(s.n_seqs * kv.n_kv_heads);
  dims.block[0] = static_cast<unsigned>(spec.block_threads);
  return ctx.backend().launch(k, dims, &args, sizeof args);
}

Status launch_prefill(OpContext& ctx, DType dtype, const AttentionShape& s, const KvLayout& kv, DeviceBuffer q,
                      DeviceBuffer q_start, DeviceBuffer k_cache, DeviceBuffer v_cache, DeviceBuffer block_tables,
                      DeviceBuffer context_lens, DeviceBuffer out) {
  FT_RETURN_IF_ERROR(check_gpu_attention("attention_prefill", dtype, s, kv));
  if (s.max_q_len <= 0)
    return FT_ERROR(ErrorCode::kInvalidArgument, "attention_prefill: max_q_len {}", s.max_q_len);
  const TargetFacts& t = ctx.facts();
  const int group = s.n_heads / kv.n_kv_heads;
  const KernelSpec spec = attention_prefill_spec(t, dtype, kv.head_dim, group, kv.block_size);
  FT_ASSIGN_OR_RETURN(KernelHandle k, ctx.kernel(spec));
  const int rows = attention_prefill_rows(t, dtype);
  const int row_tiles = (s.max_q_len * group + rows - 1) / rows;
  // Mirrors kernel_src/attention.hip's PrefillArgs<T>.
  struct {
    uint64_t q, q_start, k_cache, v_cache, block_tables, context_lens, out;
    float scale_log2;
    int n_heads, n_kv_heads, max_blocks, row_tiles;
  } args{q.ptr,   q_start.ptr,      k_cache.ptr, v_cache.ptr,   block_tables.ptr,     context_lens.ptr,
         out.ptr, s.scale * kLog2e, s.n_heads,   kv.n_kv_heads, s.max_blocks_per_seq, row_tiles};
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>(row_tiles);
  dims.grid[1] = static_cast<unsigned>(s.n_seqs * kv.n_kv_heads);
  dims.block[0] = static_cast<unsigned>(spec.block_threads);
  return ctx.backend().launch(k, dims, &args, sizeof args);
}

}  // namespace

int attention_decode_parts(const AttentionShape& s, const KvLayout& kv, int partition, int resident_blocks) {
  // As many partitions as the LDS partition needs at max_context, or more
  // when the batch's (sequence, KV head) blocks alone leave resident slots
  // empty: a short batch then reads its contexts with the whole GPU.
  const int pairs = std::max(s.n_seqs, 1) * kv.n_kv_heads;
  return std::max(ceil_div(std::max(s.max_context, 1), partition),
                  std::min(decode_fill_parts(s, kv), ceil_div(std::max(resident_blocks, 1), pairs)));
}

size_t attention_decode_counter_bytes(const AttentionShape& s, const KvLayout& kv) {
  return static_cast<size_t>(std::max(s.n_seqs, 1)) * kv.n_kv_heads * sizeof(int32_t);
}

size_t attention_decode_workspace_bytes(const AttentionShape& s, const KvLayout& kv) {
  // Partial (max, sum, out[head_dim]) per sequence, head and partition, for
  // the most partitions attention_decode_parts may choose (the smallest LDS
  // partition any target's tile may use, or filling the GPU) at any batch up
  // to n_seqs, so one workspace serves every smaller batch too; then the
  // counters.
  size_t most = 0;
  for (int n = 1; n <= std::max(s.n_seqs, 1); ++n) {
    AttentionShape b = s;
    b.n_seqs = n;
    const int splits = std::max(ceil_div(std::max(s.max_context, 1), kMinDecodePartition), decode_fill_parts(b, kv));
    most = std::max(most, static_cast<size_t>(n) * splits);
  }
  return attention_decode_counter_bytes(s, kv) + decode_partial_bytes(most, s.n_heads, kv.head_dim);
}

Status attention_decode(OpContext& ctx, DType dtype, const AttentionShape& s, const KvLayout& kv, DeviceBuffer q,
                        DeviceBuffer k_cache, DeviceBuffer v_cache, DeviceBuffer block_tables,
                        DeviceBuffer context_lens, DeviceBuffer workspace, DeviceBuffer out, DeviceBuffer out_q8) {
  FT_RETURN_IF_ERROR(check_attention("attention_decode", dtype, s, kv, q, k_cache, v_cache, block_tables,
                                     context_lens, out));
  if (s.n_q_tokens != s.n_seqs)
    return FT_ERROR(ErrorCode::kInvalidArgument, "attention_decode: {} query tokens for {} sequences", s.n_q_tokens, s.n_seqs);
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("attention_decode", dtype));
    if (out_q8.ptr)
      return FT_ERROR(ErrorCode::kUnsupported, "attention_decode: the quantized output is for GPU GEMVs only");
    std::vector<int32_t> q_start(static_cast<size_t>(s.n_seqs) + 1);
    for (int i = 0; i <= s.n_seqs; ++i) q_start[i] = i;
    FT_RETURN_IF_ERROR(check_cpu_tables("attention_decode", s, kv, q_start.data(), host_ptr<const int32_t>(block_tables),
                                        host_ptr<const int32_t>(context_lens)));
    attention_reference(s, kv, host_ptr<const float>(q), q_start.data(), host_ptr<const float>(k_cache),
                        host_ptr<const float>(v_cache), host_ptr<const int32_t>(block_tables),
                        host_ptr<const int32_t>(context_lens), host_ptr<float>(out));
    return Status();
  }
  return launch_decode(ctx, dtype, s, kv, q, k_cache, v_cache, block_tables, context_lens, workspace, out, out_q8);
}

Status attention_prefill(OpContext& ctx, DType dtype, const AttentionShape& s, const KvLayout& kv, DeviceBuffer q,
                         DeviceBuffer q_start, DeviceBuffer k_cache, DeviceBuffer v_cache, DeviceBuffer block_tables,
                         DeviceBuffer context_lens, DeviceBuffer out) {
  FT_RETURN_IF_ERROR(check_attention("attention_prefill", dtype, s, kv, q, k_cache, v_cache, block_tables,
                                     context_lens, out));
  if (q_start.bytes < (static_cast<size_t>(s.n_seqs) + 1) * 4)
    return FT_ERROR(ErrorCode::kInvalidArgument, "attention_prefill: q_start needs {} entries", s.n_seqs + 1);
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("attention_prefill", dtype));
    FT_RETURN_IF_ERROR(check_cpu_tables("attention_prefill", s, kv, host_ptr<const int32_t>(q_start),
                                        host_ptr<const int32_t>(block_tables), host_ptr<const int32_t>(context_lens)));
    attention_reference(s, kv, host_ptr<const float>(q), host_ptr<const int32_t>(q_start),
                        host_ptr<const float>(k_cache), host_ptr<const float>(v_cache),
                        host_ptr<const int32_t>(block_tables), host_ptr<const int32_t>(context_lens),
                        host_ptr<float>(out));
    return Status();
  }
  return launch_prefill(ctx, dtype, s, kv, q, q_start, k_cache, v_cache, block_tables, context_lens, out);
}

}  // namespace ft
