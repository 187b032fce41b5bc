// The engine: a loaded model on one device, a paged KV cache, a scheduler
// that batches prefill and decode continuously, and a sampler. Requests are
// submitted from any thread; a background loop runs
//   schedule() -> forward(batch) -> sample -> postprocess()
// and reports each request's progress through its callback (called from the
// engine thread; keep it short and non-blocking).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/base/status.h"
#include "runtime/engine/defaults.h"
#include "runtime/model/model_config.h"
#include "runtime/text/chat_template.h"
#include "runtime/text/tokenizer.h"

namespace ft {

class JsonSchema;

struct EngineOptions {
  std::string model_path;        // GGUF file or HF safetensors folder
  std::string device = "auto";   // cpu | cuda:N | auto
  int max_context = 0;           // per sequence; 0: the model's max positions, capped at 8192
  int max_batch = kDefaultMaxBatch;  // sequences decoded together
  int max_queue = 256;           // waiting requests before submit() refuses (kUnavailable)
  int prefill_chunk = 512;       // prompt tokens per step per sequence (chunked prefill)
  int kv_block_size = 16;
  int64_t kv_cache_bytes = 0;    // 0: from free device memory (90% of it on GPUs, capped on the CPU)
  std::string chat_template_path;  // overrides the model's template
  bool prefix_caching = true;
  std::vector<std::string> skip_ops;  // timing experiments only: ExecutorOptions::skip_ops
  bool time_graph_replays = false;    // measurement: ExecutorOptions::time_graph_replays
};

inline constexpr int kMaxPromptLogprobs = 20;

struct SamplingParams {
  float temperature = 1.0f;      // 0: greedy
  int top_k = 0;                 // 0: off
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  std::optional<uint64_t> seed;  // none: a random seed per request
  int max_tokens = 0;            // 0: up to the context limit
  std::vector<std::string> stop;           // stop strings (not included in the output)
  std::vector<int32_t> stop_token_ids;     // in addition to the model's EOS
  bool ignore_eos = false;
  int logprobs = -1;             // -1: none; N >= 0: the sampled token's logprob plus N top alternatives
  // -1: none; N >= 0: every prompt token after the first gets its logprob
  // (given the tokens before it) plus N top alternatives, in the first
  // event. Its prompt is computed whole (no prefix-cache reuse).
  int prompt_logprobs = -1;      // at most kMaxPromptLogprobs
  // Added to these tokens' logits before sampling (OpenAI's logit_bias:
  // -100 bans a token, +100 all but forces it).
  std::vector<std::pair<int32_t, float>> logit_bias;
  // JSON mode: the output is one JSON object (json_constraint.h); drawn on
  // the host, which masks the tokens that cannot continue it.
  bool json_object = false;
  // JSON mode: the start of the object, already written (at the end of the
  // prompt); the output continues it. Forced tool calls begin their call so.
  std::string json_prefix;
  // Structured outputs: the output is one value this schema allows
  // (json_schema.h); drawn on the host, as JSON mode is.
  std::shared_ptr<const JsonSchema> json_schema;
};

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;  // most likely first
};

enum class FinishReason { kNone, kStop, kLength, kAbort, kError };
const char* finish_reason_name(FinishReason r);  // "stop", "length", "abort", "error"

// One step of a request's progress. `text` is the new text since the last
// event (complete UTF-8, stop strings held back until they are ruled out).
struct RequestEvent {
  std::string text;
  std::vector<int32_t> tokens;
  std::vector<TokenLogprob> logprobs;  // one per token when requested
  // With SamplingParams::prompt_logprobs, in the first event only: prompt
  // tokens 1 .. n-1, each given the ones before it.
  std::vector<TokenLogprob> prompt_logprobs;
  FinishReason finish = FinishReason::kNone;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_prompt_tokens = 0;  // prompt tokens served from the prefix cache
  double time_to_first_token_ms = 0;
  std::string error;  // with kError
};

struct Request {
  std::vector<int32_t> prompt;
  SamplingParams sampling;
  std::function<void(const RequestEvent&)> on_event;
};

struct EngineMetrics {
  uint64_t requests_total = 0;
  uint64_t requests_finished = 0;
  uint64_t prompt_tokens_total = 0;
  uint64_t generation_tokens_total = 0;
  uint64_t cached_prompt_tokens_total = 0;
  int running = 0;
  int waiting = 0;
  int kv_blocks_total = 0;
  int kv_blocks_used = 0;
  uint64_t preemptions_total = 0;
  // Sum and count of time to first token (ms) and of decode speed samples.
  double ttft_ms_sum = 0;
  uint64_t ttft_count = 0;
  double decode_tokens_per_s_last = 0;
  // With EngineOptions::time_graph_replays: decode graph replays timed so
  // far and their device time in all.
  uint64_t graph_replays_timed = 0;
  double graph_replay_gpu_ms = 0;
};

class Engine {
 public:
  // Loads the model, opens the device, compiles the kernels it needs (on a
  // GPU; progress in the log) and starts the engine thread. `progress` may be
  // null; it receives lines such as "compiling kernels 12/40".
  static Result<std::unique_ptr<Engine>> create(const EngineOptions& options,
                                                std::function<void(const std::string&)> progress = nullptr);
  virtual ~Engine() = default;

  // Queues a request; returns its id. Errors (kInvalidArgument) for an empty
  // prompt, a prompt that does not fit the context, or max_tokens beyond it;
  // kUnavailable when the queue is full. Never blocks on generation.
  virtual Result<uint64_t> submit(Request request) = 0;
  // Ends a request (client gone): its sequence and KV blocks are freed at the
  // next step; its callback gets a final kAbort event.
  virtual void cancel(uint64_t id) = 0;

  virtual const ModelConfig& config() const = 0;
  virtual const Tokenizer& tokenizer() const = 0;
  // The model's chat template (or the override); null when it has none.
  virtual const ChatTemplate* chat_template() const = 0;
  virtual int max_context() const = 0;
  virtual std::string device_name() const = 0;
  virtual EngineMetrics metrics() const = 0;
};

}  // namespace ft
