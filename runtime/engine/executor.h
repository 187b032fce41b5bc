// The forward pass of a dense Llama / Qwen2 / Qwen3 decoder, built from the
// ops in runtime/ops, the same code on every backend. Activations are f32 on
// the CPU and bf16 on GPUs.
//
// A step runs a Batch: every scheduled sequence contributes its next tokens
// (one for decode, a chunk of the prompt for prefill), packed in order. The
// executor returns f32 logits for the sequences that asked for them (the
// last token of each sequence whose scheduled tokens reach its end).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/device/backend.h"
#include "runtime/model/weights.h"
#include "runtime/ops/kv_cache_layout.h"
#include "runtime/ops/op_context.h"

namespace ft {

struct BatchSeq {
  int n_tokens = 0;         // tokens this step
  int context_len = 0;      // cached + this step's tokens
  const int32_t* block_table = nullptr;
  int n_blocks = 0;
  bool want_logits = false;
};

struct Batch {
  std::vector<int32_t> tokens;     // all sequences' tokens, packed
  std::vector<int32_t> positions;  // position of each token in its sequence
  std::vector<int32_t> slots;      // KV cache slot of each token
  std::vector<BatchSeq> seqs;
};

struct ExecutorOptions {
  int max_tokens_per_step = 512;   // tokens in one batch
  int max_seqs_per_step = 16;
  int kv_block_size = 16;
  int64_t kv_cache_bytes = 0;      // 0: sized by the caller's default rule
  int max_blocks_per_seq = 0;      // from the context limit
};

class Executor {
 public:
  // Uploads the weights and allocates the KV cache and step buffers.
  static Result<std::unique_ptr<Executor>> create(Backend* backend, OpContext* ops, const WeightSet& weights,
                                                  const ExecutorOptions& options);
  virtual ~Executor() = default;

  virtual const KvLayout& kv_layout() const = 0;
  virtual DType activation_dtype() const = 0;
  // Runs one step; logits holds vocab floats per sequence with want_logits,
  // in batch order.
  virtual Status forward(const Batch& batch, std::vector<float>& logits) = 0;
};

// Bytes one KV block takes over all layers.
size_t kv_block_bytes(const ModelConfig& config, int block_size, DType dtype);

}  // namespace ft
