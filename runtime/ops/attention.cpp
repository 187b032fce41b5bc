#include "runtime/ops/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

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

}  // namespace

size_t attention_decode_workspace_bytes(const AttentionShape& s, const KvLayout& kv) {
  // Partial (max, sum, out[head_dim]) per sequence, head and context split of 256 tokens.
  const size_t splits = (static_cast<size_t>(std::max(s.max_context, 1)) + 255) / 256;
  return static_cast<size_t>(std::max(s.n_seqs, 1)) * s.n_heads * splits * (2 + kv.head_dim) * sizeof(float);
}

Status attention_decode(OpContext& ctx, DType dtype, const AttentionShape& s, const KvLayout& kv, DeviceBuffer q,
                        DeviceBuffer k_cache, DeviceBuffer v_cache, DeviceBuffer block_tables,
                        DeviceBuffer context_lens, DeviceBuffer workspace, DeviceBuffer out) {
  FT_RETURN_IF_ERROR(check_attention("attention_decode", dtype, s, kv, q, k_cache, v_cache, block_tables,
                                     context_lens, out));
  if (s.n_q_tokens != s.n_seqs)
    return FT_ERROR(ErrorCode::kInvalidArgument, "attention_decode: {} query tokens for {} sequences", s.n_q_tokens, s.n_seqs);
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("attention_decode", dtype));
    std::vector<int32_t> q_start(static_cast<size_t>(s.n_seqs) + 1);
    for (int i = 0; i <= s.n_seqs; ++i) q_start[i] = i;
    FT_RETURN_IF_ERROR(check_cpu_tables("attention_decode", s, kv, q_start.data(), host_ptr<const int32_t>(block_tables),
                                        host_ptr<const int32_t>(context_lens)));
    attention_reference(s, kv, host_ptr<const float>(q), q_start.data(), host_ptr<const float>(k_cache),
                        host_ptr<const float>(v_cache), host_ptr<const int32_t>(block_tables),
                        host_ptr<const int32_t>(context_lens), host_ptr<float>(out));
    return Status();
  }
  return FT_ERROR(ErrorCode::kUnsupported, "attention_decode: no GPU kernel yet");
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
  return FT_ERROR(ErrorCode::kUnsupported, "attention_prefill: no GPU kernel yet");
}

}  // namespace ft
