#include "runtime/engine/executor.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <span>
#include <vector>

#include <fmt/ranges.h>

#include "runtime/ops/activation.h"
#include "runtime/ops/attention.h"
#include "runtime/ops/embedding.h"
#include "runtime/ops/gemm.h"
#include "runtime/ops/matmul.h"
#include "runtime/ops/norm.h"
#include "runtime/ops/rope.h"

namespace ft {

size_t kv_block_bytes(const ModelConfig& c, int block_size, DType dtype) {
  return static_cast<size_t>(2) * c.num_layers * block_size * c.num_kv_heads * c.head_dim * dtype_size(dtype);
}

namespace {

constexpr int kMaxOverlapRows = 8;  // decode buckets that run on the GEMV path

// A projection (q|k|v or gate|up): its weights stacked by rows into as few
// parts as their types allow (one when they share a type; q|k and v when v
// has more bits), run by matmul_stacked into one output.
struct Projection {
  std::vector<WeightView> parts;
  DeviceBuffer bias;  // [n] of the activation dtype, or none
};

struct Layer {
  DeviceBuffer attn_norm, ffn_norm, q_norm, k_norm;
  Projection qkv, gate_up;
  WeightView o, down;
  DeviceBuffer k_cache, v_cache;
};

class ExecutorImpl final : public Executor {
 public:
  ExecutorImpl(Backend* backend, OpContext* ops, const WeightSet& weights, const ExecutorOptions& options)
      : b_(*backend), ops_(*ops), w_(weights), c_(weights.config()), opt_(options),
        act_(backend->kind() == DeviceKind::kCpu ? DType::kF32 : DType::kBF16) {}
  ~ExecutorImpl() override {
    (void)b_.synchronize();  // no queued copy may still read or write the host buffers
    drop_graphs();
    for (DeviceBuffer buf : owned_) b_.free(buf);
    for (HostBuffer buf : {staging_, drawn_}) if (buf.ptr) b_.free_host(buf);
  }

  const KvLayout& kv_layout() const override { return kv_; }
  DType activation_dtype() const override { return act_; }

  Status init() {
    for (const std::string& name : opt_.skip_ops) {
      const auto it = std::find(std::begin(kLayerOpNames), std::end(kLayerOpNames), std::string_view(name));
      if (it == std::end(kLayerOpNames))
        return FT_ERROR(ErrorCode::kInvalidArgument, "skip_ops: unknown op '{}' (the ops: {})", name,
                        fmt::join(kLayerOpNames, ", "));
      skip_mask_ |= 1u << (it - std::begin(kLayerOpNames));
    }
    // The vocabulary rows are padded with zeros to a multiple of 32 on GPUs
    // (the GEMM's N granule; Qwen3's tokenizer has 151669 entries): the LM
    // head computes the padded width and the extra logits are dropped.
    const int vocab = static_cast<int>(c_.vocab_size);
    padded_vocab_ = act_ == DType::kF32 ? vocab : (vocab + 31) / 32 * 32;
    FT_ASSIGN_OR_RETURN(embed_, weight("token_embd.weight", padded_vocab_));
    FT_ASSIGN_OR_RETURN(output_norm_, vector("output_norm.weight"));
    if (w_.find("output.weight")) {
      FT_ASSIGN_OR_RETURN(lm_head_, weight("output.weight", padded_vocab_));
    } else {
      lm_head_ = embed_;  // tied: the same (padded) rows
    }
    lm_head_.n = padded_vocab_;
    const int q_dim = c_.num_heads * c_.head_dim, kv_dim = c_.num_kv_heads * c_.head_dim;
    // KV cache first: its size decides how many sequences fit.
    kv_.block_size = opt_.kv_block_size;
    kv_.n_kv_heads = static_cast<int>(c_.num_kv_heads);
    kv_.head_dim = static_cast<int>(c_.head_dim);
    const size_t per_block = kv_block_bytes(c_, kv_.block_size, act_);
    kv_.num_blocks = static_cast<int>(opt_.kv_cache_bytes / static_cast<int64_t>(per_block));
    if (kv_.num_blocks < 1)
      return FT_ERROR(ErrorCode::kInvalidArgument, "KV cache of {} bytes holds no block of {} bytes", opt_.kv_cache_bytes,
                      per_block);
    for (uint32_t i = 0; i < c_.num_layers; ++i) {
      auto name = [i](const char* s) { return fmt::format("blk.{}.{}", i, s); };
      Layer l;
      FT_ASSIGN_OR_RETURN(l.attn_norm, vector(name("attn_norm.weight")));
      FT_ASSIGN_OR_RETURN(l.ffn_norm, vector(name("ffn_norm.weight")));
      if (c_.qk_norm) {
        FT_ASSIGN_OR_RETURN(l.q_norm, vector(name("attn_q_norm.weight")));
        FT_ASSIGN_OR_RETURN(l.k_norm, vector(name("attn_k_norm.weight")));
      }
      FT_ASSIGN_OR_RETURN(l.qkv, projection({name("attn_q.weight"), name("attn_k.weight"), name("attn_v.weight")}));
      if (c_.qkv_bias) {
        FT_ASSIGN_OR_RETURN(l.qkv.bias, vector_concat({name("attn_q.bias"), name("attn_k.bias"), name("attn_v.bias")}));
      }
      FT_ASSIGN_OR_RETURN(l.o, weight(name("attn_output.weight")));
      FT_ASSIGN_OR_RETURN(l.gate_up, projection({name("ffn_gate.weight"), name("ffn_up.weight")}));
      FT_ASSIGN_OR_RETURN(l.down, weight(name("ffn_down.weight")));
      FT_ASSIGN_OR_RETURN(l.k_cache, alloc(kv_.elements() * dtype_size(act_)));
      FT_ASSIGN_OR_RETURN(l.v_cache, alloc(kv_.elements() * dtype_size(act_)));
      layers_.push_back(l);
    }
    RopeTables rope = rope_inv_freq(c_);
    mscale_ = rope.mscale;
    FT_ASSIGN_OR_RETURN(inv_freq_, alloc(rope.inv_freq.size() * 4));
    FT_RETURN_IF_ERROR(b_.copy_to_device(inv_freq_, rope.inv_freq.data(), rope.inv_freq.size() * 4));

    const size_t T = opt_.max_tokens_per_step, S = opt_.max_seqs_per_step, es = dtype_size(act_);
    const size_t H = c_.hidden_size, I = c_.intermediate_size;
    FT_ASSIGN_OR_RETURN(x_, alloc(T * H * es));
    FT_ASSIGN_OR_RETURN(residual_, alloc(T * H * es));
    FT_ASSIGN_OR_RETURN(h_, alloc(T * H * es));
    FT_ASSIGN_OR_RETURN(qkv_, alloc(T * (q_dim + 2 * kv_dim) * es));
    FT_ASSIGN_OR_RETURN(q_, alloc(T * q_dim * es));
    FT_ASSIGN_OR_RETURN(attn_, alloc(T * q_dim * es));
    FT_ASSIGN_OR_RETURN(gate_up_, alloc(T * 2 * I * es));
    FT_ASSIGN_OR_RETURN(act_out_, alloc(T * I * es));
    // One part of a projection whose weights could not all be stacked, on the
    // paths that compute parts apart (matmul_stacked's tmp): its widest part.
    size_t widest = 0;
    for (const Layer& l : layers_)
      for (const auto* p : {&l.qkv, &l.gate_up})
        if (p->parts.size() > 1)
          for (const WeightView& w : p->parts) widest = std::max<size_t>(widest, w.n);
    if (widest > 0) {
      FT_ASSIGN_OR_RETURN(part_, alloc(T * widest * es));
    }
    // x quantized by the kernel that writes it, for quantized GEMVs in decode
    // steps of up to kMaxOverlapRows rows: the normed hidden state for
    // q|k|v and gate|up (by the norm), the attention output for o.
    bool reads_q8 = false;
    for (const Layer& l : layers_)
      reads_q8 = reads_q8 || matmul_reads_q8(ops_, l.qkv.parts, 1) || matmul_reads_q8(ops_, l.gate_up.parts, 1) ||
                 matmul_reads_q8(ops_, std::span(&l.o, 1), 1);
    if (reads_q8) {
      const int rows = static_cast<int>(std::min<size_t>(T, kMaxOverlapRows));
      FT_ASSIGN_OR_RETURN(q8_, alloc(std::max(matmul_q8_bytes(rows, static_cast<int>(H)),
                                              matmul_q8_bytes(rows, static_cast<int>(c_.num_heads * c_.head_dim)))));
    }
    FT_ASSIGN_OR_RETURN(last_, alloc(S * H * es));
    FT_ASSIGN_OR_RETURN(logits_, alloc(S * padded_vocab_ * es));
    FT_RETURN_IF_ERROR(plan_step_inputs());
    FT_ASSIGN_OR_RETURN(step_in_, alloc(in_.total * 4));
    FT_ASSIGN_OR_RETURN(ids_out_, alloc(S * 4));
    sample_vocab_ = opt_.sample_vocab > 0 ? std::min(opt_.sample_vocab, vocab) : vocab;
    AttentionShape worst{static_cast<int>(S), static_cast<int>(S), static_cast<int>(c_.num_heads), 1,
                         opt_.max_blocks_per_seq * kv_.block_size, opt_.max_blocks_per_seq, 0};
    FT_ASSIGN_OR_RETURN(workspace_, alloc(attention_decode_workspace_bytes(worst, kv_)));
    FT_RETURN_IF_ERROR(b_.fill_bytes(workspace_, 0));  // decode attention's counters start at zero
    if (b_.kind() != DeviceKind::kCpu) {
      // The dequantizing GEMM's scratch at its largest now, so it never moves
      // under a captured graph.
      size_t need = gemm_scratch_bytes(act_, lm_head_);
      for (const Layer& l : layers_) {
        for (const WeightView* w : {&l.o, &l.down}) need = std::max(need, gemm_scratch_bytes(act_, *w));
        for (const auto* p : {&l.qkv, &l.gate_up})
          for (const WeightView& w : p->parts) need = std::max(need, gemm_scratch_bytes(act_, w));
      }
      if (need > 0) FT_RETURN_IF_ERROR(ops_.scratch(need).status());
    }
    if (skip_mask_) {
      // What a skipped op would have written is read as it is: zeros, not
      // whatever the allocation held (NaNs could take other paths).
      for (DeviceBuffer buf : {x_, residual_, h_, qkv_, q_, attn_, gate_up_, act_out_, q8_, logits_})
        if (buf.ptr) FT_RETURN_IF_ERROR(b_.fill_bytes(buf, 0));
      for (const Layer& l : layers_)
        for (DeviceBuffer buf : {l.k_cache, l.v_cache}) FT_RETURN_IF_ERROR(b_.fill_bytes(buf, 0));
    }
    if (opt_.decode_graphs && b_.kind() != DeviceKind::kCpu) {
      graphs_on_ = graphs_allowed_ = true;
      for (int n = 1; n < opt_.max_seqs_per_step; n *= 2) buckets_.push_back(n);
      buckets_.push_back(opt_.max_seqs_per_step);
      stats_.batch_buckets = buckets_;
    }
    return Status();
  }

  Status forward(const Batch& batch, StepOutput& out) override {
    out = StepOutput{};
    const int T = static_cast<int>(batch.tokens.size()), S = static_cast<int>(batch.seqs.size());
    if (T < 1 || T > opt_.max_tokens_per_step || S < 1 || S > opt_.max_seqs_per_step ||
        batch.positions.size() != batch.tokens.size() || batch.slots.size() != batch.tokens.size())
      return FT_ERROR(ErrorCode::kInvalidArgument, "forward: batch of {} tokens in {} sequences (limits {} and {})", T,
                      S, opt_.max_tokens_per_step, opt_.max_seqs_per_step);
    bool decode_only = true, any_all = false;
    int max_q = 0, max_ctx = 0, n_tokens = 0;
    for (const BatchSeq& q : batch.seqs) {
      if (q.n_tokens < 1 || q.n_blocks > opt_.max_blocks_per_seq || q.context_len < q.n_tokens ||
          q.context_len > q.n_blocks * kv_.block_size)
        return FT_ERROR(ErrorCode::kInvalidArgument, "forward: a sequence of {} tokens (context {}) in {} blocks",
                        q.n_tokens, q.context_len, q.n_blocks);
      n_tokens += q.n_tokens;
      max_q = std::max(max_q, q.n_tokens);
      max_ctx = std::max(max_ctx, q.context_len);
      decode_only = decode_only && q.n_tokens == 1;
      any_all = any_all || q.all_logits;
    }
    if (n_tokens != T) return FT_ERROR(ErrorCode::kInvalidArgument, "forward: sequences hold {} of {} tokens", n_tokens, T);

    // Decode steps on GPUs run padded to a batch bucket, as a graph.
    const bool graph = graphs_on_ && decode_only && !any_all;
    const int S_run = graph ? bucket_for(S) : S;
    std::vector<int> sample_rows;  // the row of h_ each drawn token comes from
    // Queued, as are the step and the read of its tokens: one wait per step.
    FT_RETURN_IF_ERROR(stage_and_upload(batch, S_run, graph, sample_rows));
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c_.head_dim)));
    if (graph) {
      const int ctx_bucket = std::clamp(std::bit_ceil(static_cast<unsigned>(max_ctx)), 256u,
                                        static_cast<unsigned>(opt_.max_blocks_per_seq * kv_.block_size));
      FT_RETURN_IF_ERROR(run_decode_graph(S_run, ctx_bucket));
      out.graph = true;
    } else {
      const AttentionShape attn{S, T, static_cast<int>(c_.num_heads), max_q, max_ctx, opt_.max_blocks_per_seq, scale};
      FT_RETURN_IF_ERROR(run_layers(T, attn, decode_only));
      if (!sample_rows.empty()) FT_RETURN_IF_ERROR(head_and_sample(sample_rows));
    }
    const int n_sampled = graph ? S_run : static_cast<int>(sample_rows.size());
    if (n_sampled > 0) FT_RETURN_IF_ERROR(b_.download(drawn_, ids_out_, n_sampled * 4));
    FT_RETURN_IF_ERROR(wait_for_step());
    const int32_t* drawn = static_cast<const int32_t*>(drawn_.ptr);

    // Tokens and host logits rows, in batch order. Rows of host_logits
    // sequences are read before all_logits rows reuse the logits buffer.
    const size_t vocab = c_.vocab_size;
    std::vector<std::vector<float>> host_rows(S);
    int sampled = 0, row0 = 0;
    for (int s = 0; s < S; ++s) {
      const BatchSeq& q = batch.seqs[s];
      if (q.want_logits) {
        const int r = graph ? s : sampled;
        out.tokens.push_back(drawn[r]);
        if (q.host_logits && !q.all_logits) {
          host_rows[s].resize(vocab);
          FT_RETURN_IF_ERROR(logits_to_host(r, 1, host_rows[s].data()));
        }
        ++sampled;
      }
    }
    for (int s = 0; s < S; ++s) {
      const BatchSeq& q = batch.seqs[s];
      if (q.all_logits) {
        const size_t at = out.logits.size();
        out.logits.resize(at + static_cast<size_t>(q.n_tokens) * vocab);
        for (int i = 0; i < q.n_tokens; i += opt_.max_seqs_per_step) {
          const int n = std::min(opt_.max_seqs_per_step, q.n_tokens - i);
          std::vector<int> rows(n);
          for (int j = 0; j < n; ++j) rows[j] = row0 + i + j;
          FT_RETURN_IF_ERROR(head(rows));
          FT_RETURN_IF_ERROR(logits_to_host(0, n, out.logits.data() + at + static_cast<size_t>(i) * vocab));
        }
      } else if (!host_rows[s].empty()) {
        out.logits.insert(out.logits.end(), host_rows[s].begin(), host_rows[s].end());
      }
      row0 += q.n_tokens;
    }
    return Status();
  }

  Status warm_up_graphs() override {
    if (!graphs_on_) return Status();
    for (int bucket : buckets_) {
      Batch empty;  // padding only: context 0, no KV writes
      std::vector<int> rows;
      FT_RETURN_IF_ERROR(stage_and_upload(empty, bucket, true, rows));
      FT_RETURN_IF_ERROR(run_decode_graph(bucket, std::min(256, opt_.max_blocks_per_seq * kv_.block_size)));
      FT_RETURN_IF_ERROR(wait_for_step());  // before the staging is written again
    }
    return Status();
  }

  GraphStats graph_stats() const override { return stats_; }

  void set_trace(Trace trace, int op_layers) override {
    trace_ = std::move(trace);
    trace_op_layers_ = op_layers;
    graphs_on_ = graphs_allowed_ && !trace_;  // the trace copies to the host between ops
  }

 private:
  // The step's inputs, laid out in one device buffer (one copy per step; the
  // graphs read them at fixed addresses): ids, positions and slots [T],
  // q_start [S + 1], context_lens [S], block tables [S, max_blocks], sampling
  // rows [S].
  struct StepLayout {
    size_t ids, positions, slots, q_start, context_lens, tables, params, total;  // in int32 units
  };

  Status plan_step_inputs() {
    const size_t T = opt_.max_tokens_per_step, S = opt_.max_seqs_per_step;
    size_t at = 0;
    auto take = [&](size_t n) { const size_t o = at; at += (n + 1) / 2 * 2; return o; };  // 8-byte aligned
    in_.ids = take(T);
    in_.positions = take(T);
    in_.slots = take(T);
    in_.q_start = take(S + 1);
    in_.context_lens = take(S);
    in_.tables = take(S * opt_.max_blocks_per_seq);
    in_.params = take(S * sizeof(SamplingRow) / 4);
    in_.total = at;
    FT_ASSIGN_OR_RETURN(staging_, b_.alloc_host(in_.total * 4));
    std::memset(staging_.ptr, 0, staging_.bytes);
    FT_ASSIGN_OR_RETURN(drawn_, b_.alloc_host(S * 4));
    return Status();
  }

  // Stages the step's inputs and queues their upload, first waiting for an
  // upload that a step which failed midway left queued (it reads staging_).
  Status stage_and_upload(const Batch& batch, int pad_to, bool graph, std::vector<int>& sample_rows) {
    if (upload_queued_) FT_RETURN_IF_ERROR(wait_for_step());
    stage_inputs(batch, pad_to, graph, sample_rows);
    FT_RETURN_IF_ERROR(b_.upload(step_in_, staging_, staging_.bytes));
    upload_queued_ = true;
    return Status();
  }
  Status wait_for_step() {
    FT_RETURN_IF_ERROR(b_.synchronize());
    upload_queued_ = false;
    return Status();
  }

  DeviceBuffer step_slice(size_t offset, size_t count) const { return slice(step_in_, offset * 4, count * 4); }

  // Fills the staging copy of the step inputs. With `pad_to` above the
  // batch's sequence count, empty sequences (one token, context 0, no KV
  // write, greedy) fill the batch up. sample_rows gets the h_ row of each
  // want_logits sequence (eager steps).
  void stage_inputs(const Batch& batch, int pad_to, bool graph, std::vector<int>& sample_rows) {
    const int S = static_cast<int>(batch.seqs.size()), MB = opt_.max_blocks_per_seq;
    int32_t* st = static_cast<int32_t*>(staging_.ptr);
    std::copy(batch.tokens.begin(), batch.tokens.end(), st + in_.ids);
    std::copy(batch.positions.begin(), batch.positions.end(), st + in_.positions);
    std::copy(batch.slots.begin(), batch.slots.end(), st + in_.slots);
    auto set_params = [&](int i, const SamplingRow& r) { std::memcpy(st + in_.params + i * sizeof r / 4, &r, sizeof r); };
    st[in_.q_start] = 0;
    int row = 0, drawn = 0;
    for (int s = 0; s < std::max(S, pad_to); ++s) {
      const bool pad = s >= S;
      const BatchSeq q = pad ? BatchSeq{.n_tokens = 1, .sampling = {}} : batch.seqs[s];
      if (pad) {
        st[in_.ids + row] = 0;
        st[in_.positions + row] = 0;
        st[in_.slots + row] = -1;
      }
      row += q.n_tokens;
      st[in_.q_start + s + 1] = row;
      st[in_.context_lens + s] = q.context_len;
      int32_t* table = st + in_.tables + static_cast<size_t>(s) * MB;
      std::fill(std::copy(q.block_table, q.block_table + q.n_blocks, table), table + MB, 0);
      if (graph) {
        set_params(s, pad ? SamplingRow{.temperature = 0} : q.sampling);
      } else if (q.want_logits) {
        set_params(drawn++, q.sampling);
        sample_rows.push_back(row - 1);
      }
    }
  }

  static int bucket_for(int n, const std::vector<int>& buckets) {
    for (int b : buckets)
      if (b >= n) return b;
    return buckets.back();
  }
  int bucket_for(int n) const { return bucket_for(n, buckets_); }

  // Where the kernel before these weights' matmul (the norm before q|k|v and
  // gate|up, the decode attention before o) writes its output quantized,
  // when that matmul at T rows reads it so; else none.
  DeviceBuffer x_q8_for(std::span<const WeightView> parts, int T) const {
    return q8_.ptr && T <= kMaxOverlapRows && matmul_reads_q8(ops_, parts, T) ? q8_ : DeviceBuffer{};
  }
  DeviceBuffer x_q8_for(const Projection& p, int T) const { return x_q8_for(p.parts, T); }

  // The transformer layers and the final norm over T staged tokens; h_ holds
  // the normed last hidden states.
  Status run_layers(int T, const AttentionShape& attn, bool decode_only) {
    const DeviceBuffer ids = step_slice(in_.ids, T), positions = step_slice(in_.positions, T),
                       slots = step_slice(in_.slots, T), q_start = step_slice(in_.q_start, attn.n_seqs + 1),
                       context_lens = step_slice(in_.context_lens, attn.n_seqs),
                       tables = step_slice(in_.tables, static_cast<size_t>(attn.n_seqs) * opt_.max_blocks_per_seq);
    const size_t es = dtype_size(act_), H = c_.hidden_size;
    const RmsNormShape norm{T, static_cast<int>(H), c_.rms_norm_eps};
    FT_RETURN_IF_ERROR(embedding(ops_, act_, embed_, ids, T, x_));
    FT_RETURN_IF_ERROR(b_.copy_on_device(residual_, x_, T * H * es));
    const RopeShape rope{T, static_cast<int>(c_.num_heads), static_cast<int>(c_.num_kv_heads),
                         static_cast<int>(c_.head_dim), c_.rope_style, mscale_, c_.rms_norm_eps};
    const size_t qkv_width = static_cast<size_t>(c_.num_heads + 2 * c_.num_kv_heads) * c_.head_dim,
                 q_width = static_cast<size_t>(c_.num_heads) * c_.head_dim;  // for the trace
    for (size_t i = 0; i < layers_.size(); ++i) {
      const Layer& l = layers_[i];
      const int layer = static_cast<int>(i);
      const DeviceBuffer qkv_q8 = x_q8_for(l.qkv, T), gate_up_q8 = x_q8_for(l.gate_up, T);
      if (run(kAttnNorm)) {
        if (i == 0) FT_RETURN_IF_ERROR(rmsnorm(ops_, act_, norm, x_, l.attn_norm, h_, qkv_q8));
        else FT_RETURN_IF_ERROR(add_rmsnorm(ops_, act_, norm, x_, residual_, l.attn_norm, h_, residual_, qkv_q8));
      }
      FT_RETURN_IF_ERROR(trace_op(layer, "attn_norm", h_, T, H));
      if (run(kQkv)) FT_RETURN_IF_ERROR(project(l.qkv, h_, T, qkv_, qkv_q8));
      FT_RETURN_IF_ERROR(trace_op(layer, "qkv", qkv_, T, qkv_width));
      if (run(kRope))
        FT_RETURN_IF_ERROR(rope_qk_norm_kv_write(ops_, act_, rope, qkv_, positions, slots, inv_freq_, l.q_norm,
                                                 l.k_norm, q_, kv_, l.k_cache, l.v_cache));
      FT_RETURN_IF_ERROR(trace_op(layer, "q", q_, T, q_width));
      // Decode attention writes its output quantized too when the o GEMV reads it so.
      const DeviceBuffer o_q8 = decode_only ? x_q8_for(std::span(&l.o, 1), T) : DeviceBuffer{};
      if (run(kAttn) && decode_only)
        FT_RETURN_IF_ERROR(attention_decode(ops_, act_, attn, kv_, q_, l.k_cache, l.v_cache, tables, context_lens,
                                            workspace_, attn_, o_q8));
      else if (run(kAttn))
        FT_RETURN_IF_ERROR(attention_prefill(ops_, act_, attn, kv_, q_, q_start, l.k_cache, l.v_cache, tables,
                                             context_lens, attn_));
      FT_RETURN_IF_ERROR(trace_op(layer, "attn", attn_, T, q_width));
      if (run(kO)) FT_RETURN_IF_ERROR(matmul(ops_, act_, l.o, attn_, T, x_, {}, o_q8));
      FT_RETURN_IF_ERROR(trace_op(layer, "o", x_, T, H));
      if (run(kFfnNorm))
        FT_RETURN_IF_ERROR(add_rmsnorm(ops_, act_, norm, x_, residual_, l.ffn_norm, h_, residual_, gate_up_q8));
      FT_RETURN_IF_ERROR(trace_op(layer, "resid", residual_, T, H));
      FT_RETURN_IF_ERROR(trace_op(layer, "ffn_norm", h_, T, H));
      if (run(kGateUp)) FT_RETURN_IF_ERROR(project(l.gate_up, h_, T, gate_up_, gate_up_q8));
      FT_RETURN_IF_ERROR(trace_op(layer, "gate_up", gate_up_, T, 2 * c_.intermediate_size));
      if (run(kDown)) FT_RETURN_IF_ERROR(matmul_gated(ops_, act_, GatedAct::kSilu, l.down, gate_up_, T, x_, act_out_));
      FT_RETURN_IF_ERROR(trace_op(layer, "down", x_, T, H));
      if (trace_) FT_RETURN_IF_ERROR(trace_out(layer, T));
    }
    return add_rmsnorm(ops_, act_, norm, x_, residual_, output_norm_, h_, residual_);
  }

  // logits_[i] = LM head of h_ row rows[i] (rows 0..n-1 in order are read in
  // place; others are gathered first).
  Status head(const std::vector<int>& rows) {
    const size_t es = dtype_size(act_), H = c_.hidden_size;
    const int n = static_cast<int>(rows.size());
    bool in_place = true;
    for (int i = 0; i < n; ++i) in_place = in_place && rows[i] == i;
    DeviceBuffer src = h_;
    if (!in_place) {
      for (int i = 0; i < n; ++i)
        FT_RETURN_IF_ERROR(b_.copy_on_device(slice(last_, i * H * es, H * es), slice(h_, rows[i] * H * es, H * es), H * es));
      src = last_;
    }
    return matmul(ops_, act_, lm_head_, src, n, logits_);
  }

  // The LM head on the given rows and the draw of one token per row (sampling
  // rows staged in the same order) into ids_out_.
  Status head_and_sample(const std::vector<int>& rows) {
    FT_RETURN_IF_ERROR(head(rows));
    const int n = static_cast<int>(rows.size());
    return sample(ops_, act_, n, sample_vocab_, padded_vocab_, logits_,
                  step_slice(in_.params, n * sizeof(SamplingRow) / 4), ids_out_);
  }

  // `rows` rows of `width` activations (stride `stride` elements) from a
  // device buffer, as f32 on the host.
  Status rows_to_host(DeviceBuffer src, int rows, size_t width, size_t stride, float* dst) {
    const size_t es = dtype_size(act_);
    if (act_ == DType::kF32 && width == stride) return b_.copy_to_host(dst, src, rows * width * 4);
    std::vector<uint8_t> raw(rows * stride * es);
    FT_RETURN_IF_ERROR(b_.copy_to_host(raw.data(), src, raw.size()));
    for (int r = 0; r < rows; ++r)
      for (size_t i = 0; i < width; ++i) {
        const size_t at = static_cast<size_t>(r) * stride + i;
        float v;
        if (act_ == DType::kF32) {
          std::memcpy(&v, &raw[at * 4], 4);
        } else {
          uint16_t h;
          std::memcpy(&h, &raw[at * 2], 2);
          v = act_ == DType::kBF16 ? bf16_to_f32(h) : fp16_to_f32(h);
        }
        dst[static_cast<size_t>(r) * width + i] = v;
      }
    return Status();
  }

  // Rows [first, first + n) of logits_ as f32 on the host, vocab wide.
  Status logits_to_host(int first, int n, float* dst) {
    const size_t padded = padded_vocab_, es = dtype_size(act_);
    return rows_to_host(slice(logits_, first * padded * es, n * padded * es), n, c_.vocab_size, padded, dst);
  }

  // kLayerOpNames' order.
  enum LayerOp { kAttnNorm, kQkv, kRope, kAttn, kO, kFfnNorm, kGateUp, kDown };
  static_assert(std::size(kLayerOpNames) == kDown + 1);
  bool run(LayerOp op) const { return !(skip_mask_ & (1u << op)); }

  // For the trace: an op's output, [T, width] of `src`, in layers below
  // trace_op_layers_.
  Status trace_op(int layer, std::string_view name, DeviceBuffer src, int T, size_t width) {
    if (!trace_ || layer >= trace_op_layers_) return Status();
    std::vector<float> v(T * width);
    FT_RETURN_IF_ERROR(rows_to_host(src, T, width, width, v.data()));
    return trace_(layer, name, v);
  }

  // The residual stream after layer i (its attention and MLP outputs added),
  // for the trace's "out": residual_ + x_ over T rows.
  Status trace_out(int layer, int T) {
    const size_t H = c_.hidden_size;
    std::vector<float> res(T * H), mlp(T * H);
    FT_RETURN_IF_ERROR(rows_to_host(residual_, T, H, H, res.data()));
    FT_RETURN_IF_ERROR(rows_to_host(x_, T, H, H, mlp.data()));
    for (size_t i = 0; i < res.size(); ++i) res[i] += mlp[i];
    return trace_(layer, "out", res);
  }

  // One decode step of `bucket` staged sequences: replays its graph, or runs
  // it eagerly and captures it for next time.
  Status run_decode_graph(int bucket, int ctx_bucket) {
    if (ops_.current_scratch().ptr != graph_scratch_) drop_graphs();  // captured pointers went stale
    const uint64_t key = static_cast<uint64_t>(bucket) << 32 | static_cast<uint32_t>(ctx_bucket);
    if (auto it = graphs_.find(key); it != graphs_.end()) {
      ++stats_.replays;
      if (!opt_.time_graph_replays) return b_.replay(it->second);
      FT_ASSIGN_OR_RETURN(const double ms, b_.time_ms([&] { return b_.replay(it->second); }, 1));
      ++stats_.timed_replays;
      stats_.replay_gpu_ms += ms;
      return Status();
    }
    const AttentionShape attn{bucket, bucket, static_cast<int>(c_.num_heads), 1, ctx_bucket, opt_.max_blocks_per_seq,
                              static_cast<float>(1.0 / std::sqrt(static_cast<double>(c_.head_dim)))};
    std::vector<int> rows(bucket);
    for (int i = 0; i < bucket; ++i) rows[i] = i;
    // Launch overlap pays at the GEMV sizes (small kernels, launch-bound)
    // and costs at the GEMM sizes (measured: b32 -5%, b1 +2.4% on the H200).
    auto body = [&]() -> Status {
      b_.set_launch_overlap(bucket <= kMaxOverlapRows);
      Status s = run_layers(bucket, attn, true);
      if (s.ok()) s = head_and_sample(rows);
      b_.set_launch_overlap(true);
      return s;
    };
    FT_RETURN_IF_ERROR(body());  // this step's results; loads the kernels and sizes scratch
    const auto t0 = std::chrono::steady_clock::now();
    FT_RETURN_IF_ERROR(b_.begin_capture());
    Status s = body();
    Result<GraphHandle> g = b_.end_capture();
    if (!s.ok()) {
      if (g.ok()) b_.destroy_graph(*g);
      return s;
    }
    if (!g.ok()) return g.status();
    graphs_.emplace(key, *g);
    graph_scratch_ = ops_.current_scratch().ptr;
    ++stats_.captured;
    stats_.capture_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return Status();
  }

  void drop_graphs() {
    for (auto& [key, g] : graphs_) b_.destroy_graph(g);
    graphs_.clear();
  }

  Result<DeviceBuffer> alloc(size_t bytes) {
    FT_ASSIGN_OR_RETURN(DeviceBuffer buf, b_.alloc(bytes));
    owned_.push_back(buf);
    return buf;
  }

  // Raw weight bytes on the device; on the CPU they stay in the mapping.
  Result<DeviceBuffer> upload(std::span<const uint8_t> data) {
    if (b_.kind() == DeviceKind::kCpu) return DeviceBuffer{reinterpret_cast<uint64_t>(data.data()), data.size()};
    FT_ASSIGN_OR_RETURN(DeviceBuffer buf, alloc(data.size()));
    FT_RETURN_IF_ERROR(b_.copy_to_device(buf, data.data(), data.size()));
    return buf;
  }

  // The pieces' bytes back to back in a new buffer of `bytes` (zero past
  // them: zero rows are zero blocks), in the layout the backend reads `type`
  // in (weight_layout.h: Q8_0 and Q6_K are rearranged for GPUs, over the whole
  // buffer, so they are assembled on the host first).
  Result<DeviceBuffer> upload_rows(GgmlType type, const std::vector<std::span<const uint8_t>>& pieces, size_t bytes) {
    FT_ASSIGN_OR_RETURN(DeviceBuffer buf, alloc(bytes));
    size_t used = 0;
    for (const auto& piece : pieces) used += piece.size();
    if (layout_for(b_, type) == WeightLayout::kGguf) {
      if (used < bytes) FT_RETURN_IF_ERROR(b_.fill_bytes(buf, 0));
      size_t offset = 0;
      for (const auto& piece : pieces) {
        FT_RETURN_IF_ERROR(b_.copy_to_device(slice(buf, offset, piece.size()), piece.data(), piece.size()));
        offset += piece.size();
      }
      return buf;
    }
    if (!b_.holds_data()) return buf;  // planning: only the buffer's size matters
    std::vector<uint8_t> host(bytes, 0);
    size_t offset = 0;
    for (const auto& piece : pieces) {
      std::memcpy(host.data() + offset, piece.data(), piece.size());
      offset += piece.size();
    }
    FT_RETURN_IF_ERROR(upload_weight(b_, type, host, buf).status());
    return buf;
  }

  // A matrix weight; with `padded_rows` above its row count, the buffer holds
  // that many rows, the extra ones zero.
  Result<WeightView> weight(const std::string& name, int padded_rows = 0) {
    FT_ASSIGN_OR_RETURN(const Weight* w, w_.get(name));
    if (w->shape.size() != 2) return FT_ERROR(ErrorCode::kCorrupt, "{} is not a matrix", name);
    const int rows = static_cast<int>(w->shape[1]), cols = static_cast<int>(w->shape[0]);
    const WeightLayout layout = layout_for(b_, w->type);
    if (padded_rows <= rows && layout == WeightLayout::kGguf) {
      FT_ASSIGN_OR_RETURN(DeviceBuffer data, upload(w->data));  // zero-copy on the CPU
      return WeightView{w->type, rows, cols, data, layout};
    }
    const size_t row_bytes = w->data.size() / rows;
    FT_ASSIGN_OR_RETURN(DeviceBuffer data, upload_rows(w->type, {w->data}, row_bytes * std::max(rows, padded_rows)));
    return WeightView{w->type, rows, cols, data, layout};
  }

  // Stacks consecutive weights' rows into one when their types and widths match.
  Result<Projection> projection(const std::vector<std::string>& names) {
    Projection p;
    for (size_t i = 0; i < names.size();) {
      FT_ASSIGN_OR_RETURN(const Weight* first, w_.get(names[i]));
      std::vector<const Weight*> group{first};
      size_t j = i + 1;
      for (; j < names.size(); ++j) {
        FT_ASSIGN_OR_RETURN(const Weight* w, w_.get(names[j]));
        if (w->type != first->type || w->shape.size() != 2 || first->shape.size() != 2 || w->shape[0] != first->shape[0])
          break;
        group.push_back(w);
      }
      if (group.size() == 1) {
        FT_ASSIGN_OR_RETURN(WeightView v, weight(names[i]));
        p.parts.push_back(v);
      } else {
        size_t bytes = 0;
        int rows = 0;
        std::vector<std::span<const uint8_t>> pieces;
        for (const Weight* w : group) {
          bytes += w->data.size(), rows += static_cast<int>(w->shape[1]);
          pieces.push_back(w->data);
        }
        FT_ASSIGN_OR_RETURN(DeviceBuffer buf, upload_rows(first->type, pieces, bytes));
        p.parts.push_back(
            WeightView{first->type, rows, static_cast<int>(first->shape[0]), buf, layout_for(b_, first->type)});
      }
      i = j;
    }
    return p;
  }

  // y[T, sum of parts' n] = x * [parts]^T (+ bias).
  Status project(const Projection& p, DeviceBuffer x, int T, DeviceBuffer y, DeviceBuffer x_q8 = {}) {
    return matmul_stacked(ops_, act_, p.parts, x, T, y, p.bias, part_, x_q8);
  }

  // A 1-D tensor (norm weight, bias) in the activation dtype.
  Result<DeviceBuffer> vector(const std::string& name) { return vector_concat({name}); }
  Result<DeviceBuffer> vector_concat(const std::vector<std::string>& names) {
    std::vector<float> values;
    for (const auto& n : names) {
      FT_ASSIGN_OR_RETURN(const Weight* w, w_.get(n));
      size_t count = 1;
      for (uint64_t d : w->shape) count *= d;
      const size_t at = values.size();
      values.resize(at + count);
      if (!b_.holds_data()) continue;  // planning: the size only
      if (w->type == GgmlType::kF32) std::memcpy(values.data() + at, w->data.data(), count * 4);
      else FT_RETURN_IF_ERROR(dequantize_row(w->type, w->data, values.data() + at, count));
    }
    const size_t es = dtype_size(act_);
    std::vector<uint8_t> bytes(values.size() * es);
    for (size_t i = 0; i < values.size(); ++i) {
      if (act_ == DType::kF32) std::memcpy(&bytes[i * 4], &values[i], 4);
      else {
        uint16_t h = act_ == DType::kBF16 ? f32_to_bf16(values[i]) : f32_to_fp16(values[i]);
        std::memcpy(&bytes[i * 2], &h, 2);
      }
    }
    FT_ASSIGN_OR_RETURN(DeviceBuffer buf, alloc(bytes.size()));
    FT_RETURN_IF_ERROR(b_.copy_to_device(buf, bytes.data(), bytes.size()));
    return buf;
  }

  Backend& b_;
  OpContext& ops_;
  const WeightSet& w_;
  const ModelConfig& c_;
  ExecutorOptions opt_;
  DType act_;
  KvLayout kv_;
  float mscale_ = 1.0f;
  int padded_vocab_ = 0;
  WeightView embed_, lm_head_;
  DeviceBuffer output_norm_, inv_freq_;
  std::vector<Layer> layers_;
  DeviceBuffer x_, residual_, h_, qkv_, q_, attn_, gate_up_, act_out_, part_, q8_, last_, logits_;
  DeviceBuffer step_in_, ids_out_, workspace_;
  StepLayout in_{};
  HostBuffer staging_;  // host copy of step_in_ (page-locked on GPUs)
  HostBuffer drawn_;    // the step's drawn tokens, read back
  bool upload_queued_ = false;  // staging_ may still be read by a queued copy
  int sample_vocab_ = 0;
  bool graphs_on_ = false, graphs_allowed_ = false;
  std::vector<int> buckets_;
  std::map<uint64_t, GraphHandle> graphs_;  // (batch bucket, context bucket) -> graph
  uint64_t graph_scratch_ = 0;
  GraphStats stats_;
  Trace trace_;
  int trace_op_layers_ = 0;
  unsigned skip_mask_ = 0;  // bit LayerOp: not run (ExecutorOptions::skip_ops)
  std::vector<DeviceBuffer> owned_;
};

}  // namespace

Result<std::unique_ptr<Executor>> Executor::create(Backend* backend, OpContext* ops, const WeightSet& weights,
                                                   const ExecutorOptions& options) {
  if (options.max_tokens_per_step < 1 || options.max_seqs_per_step < 1 || options.kv_block_size < 1 ||
      options.max_blocks_per_seq < 1)
    return FT_ERROR(ErrorCode::kInvalidArgument, "executor: step limits must be positive");
  auto impl = std::make_unique<ExecutorImpl>(backend, ops, weights, options);
  FT_RETURN_IF_ERROR(impl->init());
  return std::unique_ptr<Executor>(std::move(impl));
}

}  // namespace ft
