// The forward pass of a dense Llama / Qwen2 / Qwen3 decoder, built from the
// ops in runtime/ops, the same code on every backend. Activations are f32 on
// the CPU and bf16 on GPUs.
//
// A step runs a Batch: every scheduled sequence contributes its next tokens
// (one for decode, a chunk of the prompt for prefill), packed in order. A
// sequence whose scheduled tokens reach its end (want_logits) gets its next
// token drawn on the device with its SamplingRow; only the token ids come
// back, plus f32 logits rows for the sequences that ask for them (host-side
// penalties or logprobs, and teacher-forced checks).
//
// On GPUs a decode-only step runs as a graph replay: one graph per batch-size
// bucket (1, 2, 4, ... up to the step limit) and context bucket, captured the
// first time it is needed (warm_up_graphs() captures the short-context ones
// ahead). Sequences are padded to the bucket with empty ones (context 0, no
// KV write), whose results are dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/device/backend.h"
#include "runtime/model/weights.h"
#include "runtime/ops/kv_cache_layout.h"
#include "runtime/ops/op_context.h"
#include "runtime/ops/sampling.h"

namespace ft {

struct BatchSeq {
  int n_tokens = 0;         // tokens this step
  int context_len = 0;      // cached + this step's tokens
  const int32_t* block_table = nullptr;
  int n_blocks = 0;
  bool want_logits = false;  // the step yields the sequence's next token
  bool host_logits = false;  // with want_logits: the last row's logits also come back
  bool all_logits = false;   // the logits of every token of this step come back (checks)
  SamplingRow sampling;      // with want_logits: how the device draws the token
};

struct Batch {
  std::vector<int32_t> tokens;     // all sequences' tokens, packed
  std::vector<int32_t> positions;  // position of each token in its sequence
  std::vector<int32_t> slots;      // KV cache slot of each token
  std::vector<BatchSeq> seqs;
};

// What a step hands back.
struct StepOutput {
  std::vector<int32_t> tokens;  // one per want_logits sequence, in batch order
  // vocab floats per row, in batch order: every row of an all_logits
  // sequence, the last row of a host_logits one.
  std::vector<float> logits;
  bool graph = false;           // the step ran as a graph replay
};

struct ExecutorOptions {
  int max_tokens_per_step = 512;   // tokens in one batch
  int max_seqs_per_step = 16;
  int kv_block_size = 16;
  int64_t kv_cache_bytes = 0;      // 0: sized by the caller's default rule
  int max_blocks_per_seq = 0;      // from the context limit
  int sample_vocab = 0;            // ids drawn from are below this (0: the model's vocab)
  bool decode_graphs = true;       // GPUs: replay decode steps as graphs
  // Timing experiments only (e2e_bench --skip-ops): the per-layer ops named
  // here are not run, so the output is wrong; what a step loses without one
  // bounds what that op costs it. Names: kLayerOpNames.
  std::vector<std::string> skip_ops;
  // Measurement (e2e_bench --step-times): each graph replay is timed on the
  // device (GraphStats::replay_gpu_ms), at the cost of one more wait per step.
  bool time_graph_replays = false;
};

// The per-layer ops of the forward pass, in order, as skip_ops names them.
inline constexpr const char* kLayerOpNames[] = {"attn_norm", "qkv", "rope", "attn", "o", "ffn_norm", "gate_up", "down"};

struct GraphStats {
  std::vector<int> batch_buckets;  // empty: graphs are off
  int captured = 0;
  int replays = 0;
  double capture_ms = 0;           // total time spent capturing
  int timed_replays = 0;           // with ExecutorOptions::time_graph_replays:
  double replay_gpu_ms = 0;        // their device time in all
};

class Executor {
 public:
  // Uploads the weights and allocates the KV cache and step buffers.
  static Result<std::unique_ptr<Executor>> create(Backend* backend, OpContext* ops, const WeightSet& weights,
                                                  const ExecutorOptions& options);
  virtual ~Executor() = default;

  virtual const KvLayout& kv_layout() const = 0;
  virtual DType activation_dtype() const = 0;
  // Runs one step.
  virtual Status forward(const Batch& batch, StepOutput& out) = 0;
  // Captures the decode graph of every batch bucket for short contexts, so
  // the first requests do not wait for captures. No-op without graphs.
  virtual Status warm_up_graphs() = 0;
  virtual GraphStats graph_stats() const = 0;
  // Checks: after each layer, `trace` gets "out", the residual stream of every
  // token of the step ([T, hidden] f32, the layer's attention and MLP added).
  // In layers below `op_layers` it also gets each op's output as the next op
  // reads it, [T, width] f32: "attn_norm", "qkv" (q | k | v before their norms
  // and RoPE), "q" (normed, rotated), "attn", "o", "resid" (the input plus the
  // attention), "ffn_norm", "gate_up" (gate | up), "down". Steps run eagerly
  // while a trace is set; an empty function turns it off.
  using Trace = std::function<Status(int layer, std::string_view name, const std::vector<float>& data)>;
  virtual void set_trace(Trace trace, int op_layers = 0) = 0;
};

// Bytes one KV block takes over all layers.
size_t kv_block_bytes(const ModelConfig& config, int block_size, DType dtype);

}  // namespace ft
