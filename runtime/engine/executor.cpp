#include "runtime/engine/executor.h"

#include <cmath>
#include <cstring>

#include "runtime/ops/activation.h"
#include "runtime/ops/attention.h"
#include "runtime/ops/embedding.h"
#include "runtime/ops/matmul.h"
#include "runtime/ops/norm.h"
#include "runtime/ops/rope.h"

namespace ft {

size_t kv_block_bytes(const ModelConfig& c, int block_size, DType dtype) {
  return static_cast<size_t>(2) * c.num_layers * block_size * c.num_kv_heads * c.head_dim * dtype_size(dtype);
}

namespace {

// A projection: one fused weight (q|k|v or gate|up stacked by rows) when the
// parts share a type, else the parts run one by one and are interleaved.
struct Projection {
  WeightView fused;
  std::vector<WeightView> parts;  // used when fused.data.ptr == 0
  DeviceBuffer bias;              // [n] of the activation dtype, or none
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
    for (DeviceBuffer buf : owned_) b_.free(buf);
  }

  const KvLayout& kv_layout() const override { return kv_; }
  DType activation_dtype() const override { return act_; }

  Status init() {
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
    const size_t H = c_.hidden_size, I = c_.intermediate_size, V = c_.vocab_size;
    FT_ASSIGN_OR_RETURN(x_, alloc(T * H * es));
    FT_ASSIGN_OR_RETURN(residual_, alloc(T * H * es));
    FT_ASSIGN_OR_RETURN(h_, alloc(T * H * es));
    FT_ASSIGN_OR_RETURN(qkv_, alloc(T * (q_dim + 2 * kv_dim) * es));
    FT_ASSIGN_OR_RETURN(q_, alloc(T * q_dim * es));
    FT_ASSIGN_OR_RETURN(attn_, alloc(T * q_dim * es));
    FT_ASSIGN_OR_RETURN(gate_up_, alloc(T * 2 * I * es));
    FT_ASSIGN_OR_RETURN(act_out_, alloc(T * I * es));
    FT_ASSIGN_OR_RETURN(part_, alloc(T * std::max<size_t>(q_dim, I) * es));
    FT_ASSIGN_OR_RETURN(last_, alloc(S * H * es));
    FT_ASSIGN_OR_RETURN(logits_, alloc(S * padded_vocab_ * es));
    FT_ASSIGN_OR_RETURN(ids_, alloc(T * 4));
    FT_ASSIGN_OR_RETURN(positions_, alloc(T * 4));
    FT_ASSIGN_OR_RETURN(slots_, alloc(T * 4));
    FT_ASSIGN_OR_RETURN(q_start_, alloc((S + 1) * 4));
    FT_ASSIGN_OR_RETURN(context_lens_, alloc(S * 4));
    FT_ASSIGN_OR_RETURN(block_tables_, alloc(S * opt_.max_blocks_per_seq * 4));
    AttentionShape worst{static_cast<int>(S), static_cast<int>(S), static_cast<int>(c_.num_heads), 1,
                         opt_.max_blocks_per_seq * kv_.block_size, opt_.max_blocks_per_seq, 0};
    FT_ASSIGN_OR_RETURN(workspace_, alloc(attention_decode_workspace_bytes(worst, kv_)));
    return Status();
  }

  Status forward(const Batch& batch, std::vector<float>& logits) override {
    const int T = static_cast<int>(batch.tokens.size()), S = static_cast<int>(batch.seqs.size());
    if (T < 1 || T > opt_.max_tokens_per_step || S < 1 || S > opt_.max_seqs_per_step ||
        batch.positions.size() != batch.tokens.size() || batch.slots.size() != batch.tokens.size())
      return FT_ERROR(ErrorCode::kInvalidArgument, "forward: batch of {} tokens in {} sequences (limits {} and {})", T,
                      S, opt_.max_tokens_per_step, opt_.max_seqs_per_step);
    // Sequence metadata.
    std::vector<int32_t> q_start(S + 1, 0), context_lens(S);
    std::vector<int32_t> tables(static_cast<size_t>(S) * opt_.max_blocks_per_seq, 0);
    int max_q = 0, max_ctx = 0;
    bool decode_only = true;
    std::vector<int> logit_rows;
    for (int s = 0; s < S; ++s) {
      const BatchSeq& q = batch.seqs[s];
      if (q.n_blocks > opt_.max_blocks_per_seq || q.context_len > q.n_blocks * kv_.block_size)
        return FT_ERROR(ErrorCode::kInvalidArgument, "forward: sequence {} needs {} blocks", s, q.n_blocks);
      q_start[s + 1] = q_start[s] + q.n_tokens;
      context_lens[s] = q.context_len;
      std::copy(q.block_table, q.block_table + q.n_blocks, tables.begin() + static_cast<size_t>(s) * opt_.max_blocks_per_seq);
      max_q = std::max(max_q, q.n_tokens);
      max_ctx = std::max(max_ctx, q.context_len);
      decode_only = decode_only && q.n_tokens == 1;
      if (q.want_logits) logit_rows.push_back(q_start[s + 1] - 1);
    }
    if (q_start[S] != T) return FT_ERROR(ErrorCode::kInvalidArgument, "forward: sequences hold {} of {} tokens", q_start[S], T);
    FT_RETURN_IF_ERROR(b_.copy_to_device(ids_, batch.tokens.data(), T * 4));
    FT_RETURN_IF_ERROR(b_.copy_to_device(positions_, batch.positions.data(), T * 4));
    FT_RETURN_IF_ERROR(b_.copy_to_device(slots_, batch.slots.data(), T * 4));
    FT_RETURN_IF_ERROR(b_.copy_to_device(q_start_, q_start.data(), q_start.size() * 4));
    FT_RETURN_IF_ERROR(b_.copy_to_device(context_lens_, context_lens.data(), context_lens.size() * 4));
    FT_RETURN_IF_ERROR(b_.copy_to_device(block_tables_, tables.data(), tables.size() * 4));

    const size_t es = dtype_size(act_), H = c_.hidden_size;
    const RmsNormShape norm{T, static_cast<int>(H), c_.rms_norm_eps};
    FT_RETURN_IF_ERROR(embedding(ops_, act_, embed_, ids_, T, x_));
    FT_RETURN_IF_ERROR(b_.copy_on_device(residual_, x_, T * H * es));
    const RopeShape rope{T, static_cast<int>(c_.num_heads), static_cast<int>(c_.num_kv_heads),
                         static_cast<int>(c_.head_dim), c_.rope_style, mscale_, c_.rms_norm_eps};
    const AttentionShape attn{S, T, static_cast<int>(c_.num_heads), max_q, max_ctx, opt_.max_blocks_per_seq,
                              static_cast<float>(1.0 / std::sqrt(static_cast<double>(c_.head_dim)))};
    for (size_t i = 0; i < layers_.size(); ++i) {
      const Layer& l = layers_[i];
      if (i == 0) FT_RETURN_IF_ERROR(rmsnorm(ops_, act_, norm, x_, l.attn_norm, h_));
      else FT_RETURN_IF_ERROR(add_rmsnorm(ops_, act_, norm, x_, residual_, l.attn_norm, h_, residual_));
      FT_RETURN_IF_ERROR(project(l.qkv, h_, T, qkv_));
      FT_RETURN_IF_ERROR(rope_qk_norm_kv_write(ops_, act_, rope, qkv_, positions_, slots_, inv_freq_, l.q_norm,
                                               l.k_norm, q_, kv_, l.k_cache, l.v_cache));
      if (decode_only)
        FT_RETURN_IF_ERROR(attention_decode(ops_, act_, attn, kv_, q_, l.k_cache, l.v_cache, block_tables_,
                                            context_lens_, workspace_, attn_));
      else
        FT_RETURN_IF_ERROR(attention_prefill(ops_, act_, attn, kv_, q_, q_start_, l.k_cache, l.v_cache, block_tables_,
                                             context_lens_, attn_));
      FT_RETURN_IF_ERROR(matmul(ops_, act_, l.o, attn_, T, x_));
      FT_RETURN_IF_ERROR(add_rmsnorm(ops_, act_, norm, x_, residual_, l.ffn_norm, h_, residual_));
      FT_RETURN_IF_ERROR(project(l.gate_up, h_, T, gate_up_));
      FT_RETURN_IF_ERROR(gated_act(ops_, act_, GatedAct::kSilu, T, static_cast<int>(c_.intermediate_size), gate_up_,
                                   act_out_));
      FT_RETURN_IF_ERROR(matmul(ops_, act_, l.down, act_out_, T, x_));
    }
    FT_RETURN_IF_ERROR(add_rmsnorm(ops_, act_, norm, x_, residual_, output_norm_, h_, residual_));
    logits.clear();
    if (logit_rows.empty()) return b_.synchronize();
    const int n = static_cast<int>(logit_rows.size());
    for (int r = 0; r < n; ++r)
      FT_RETURN_IF_ERROR(b_.copy_on_device(slice(last_, r * H * es, H * es), slice(h_, logit_rows[r] * H * es, H * es), H * es));
    FT_RETURN_IF_ERROR(matmul(ops_, act_, lm_head_, last_, n, logits_));
    const size_t vocab = c_.vocab_size, padded = padded_vocab_;
    logits.resize(static_cast<size_t>(n) * vocab);
    if (act_ == DType::kF32 && padded == vocab) return b_.copy_to_host(logits.data(), logits_, logits.size() * 4);
    std::vector<uint8_t> raw(static_cast<size_t>(n) * padded * es);
    FT_RETURN_IF_ERROR(b_.copy_to_host(raw.data(), logits_, raw.size()));
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < vocab; ++i) {
        const size_t at = static_cast<size_t>(r) * padded + i;
        float v;
        if (act_ == DType::kF32) {
          std::memcpy(&v, &raw[at * 4], 4);
        } else {
          uint16_t h;
          std::memcpy(&h, &raw[at * 2], 2);
          v = act_ == DType::kBF16 ? bf16_to_f32(h) : fp16_to_f32(h);
        }
        logits[static_cast<size_t>(r) * vocab + i] = v;
      }
    return Status();
  }

 private:
  static DeviceBuffer slice(DeviceBuffer b, size_t offset, size_t bytes) { return {b.ptr + offset, bytes}; }

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

  // A matrix weight; with `padded_rows` above its row count, the buffer holds
  // that many rows, the extra ones zero.
  Result<WeightView> weight(const std::string& name, int padded_rows = 0) {
    FT_ASSIGN_OR_RETURN(const Weight* w, w_.get(name));
    if (w->shape.size() != 2) return FT_ERROR(ErrorCode::kCorrupt, "{} is not a matrix", name);
    const int rows = static_cast<int>(w->shape[1]), cols = static_cast<int>(w->shape[0]);
    if (padded_rows <= rows) {
      FT_ASSIGN_OR_RETURN(DeviceBuffer data, upload(w->data));
      return WeightView{w->type, rows, cols, data};
    }
    const size_t row_bytes = w->data.size() / rows;
    FT_ASSIGN_OR_RETURN(DeviceBuffer data, alloc(row_bytes * padded_rows));
    FT_RETURN_IF_ERROR(b_.fill_bytes(data, 0));
    FT_RETURN_IF_ERROR(b_.copy_to_device(data, w->data.data(), w->data.size()));
    return WeightView{w->type, rows, cols, data};
  }

  // Stacks the parts' rows into one weight when their types and widths match.
  Result<Projection> projection(const std::vector<std::string>& names) {
    Projection p;
    std::vector<const Weight*> ws;
    for (const auto& n : names) {
      FT_ASSIGN_OR_RETURN(const Weight* w, w_.get(n));
      ws.push_back(w);
    }
    bool same = true;
    size_t bytes = 0;
    int rows = 0;
    for (const Weight* w : ws) {
      same = same && w->type == ws[0]->type && w->shape[0] == ws[0]->shape[0];
      bytes += w->data.size();
      rows += static_cast<int>(w->shape[1]);
    }
    if (!same) {
      for (const auto& n : names) {
        FT_ASSIGN_OR_RETURN(WeightView v, weight(n));
        p.parts.push_back(v);
      }
      return p;
    }
    FT_ASSIGN_OR_RETURN(DeviceBuffer buf, alloc(bytes));
    size_t offset = 0;
    for (const Weight* w : ws) {
      FT_RETURN_IF_ERROR(b_.copy_to_device(slice(buf, offset, w->data.size()), w->data.data(), w->data.size()));
      offset += w->data.size();
    }
    p.fused = WeightView{ws[0]->type, rows, static_cast<int>(ws[0]->shape[0]), buf};
    return p;
  }

  // y[T, sum of parts' n] = x * [parts]^T (+ bias): one matmul on the
  // stacked weight, or one per part into scratch, copied into its columns.
  Status project(const Projection& p, DeviceBuffer x, int T, DeviceBuffer y) {
    if (p.fused.data.ptr) return matmul(ops_, act_, p.fused, x, T, y, p.bias);
    const size_t es = dtype_size(act_);
    int total = 0;
    for (const WeightView& w : p.parts) total += w.n;
    size_t col = 0;
    for (const WeightView& w : p.parts) {
      DeviceBuffer bias = p.bias.ptr ? slice(p.bias, col * es, w.n * es) : DeviceBuffer{};
      FT_RETURN_IF_ERROR(matmul(ops_, act_, w, x, T, part_, bias));
      FT_RETURN_IF_ERROR(b_.copy_2d(slice(y, col * es, y.bytes - col * es), total * es, part_, w.n * es, w.n * es, T));
      col += w.n;
    }
    return Status();
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
  DeviceBuffer x_, residual_, h_, qkv_, q_, attn_, gate_up_, act_out_, part_, last_, logits_;
  DeviceBuffer ids_, positions_, slots_, q_start_, context_lens_, block_tables_, workspace_;
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
