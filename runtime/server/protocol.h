// The OpenAI wire protocol as pure functions: request JSON -> a validated
// GenerationRequest (SamplingParams + prompt), and results -> response, SSE
// chunk and error JSON. No engine, no sockets: everything here is unit-tested
// on its own (tests/server/protocol_test.cpp).
//
// Request fields follow the OpenAI API; a few vLLM extensions are accepted
// (top_k, min_p, repetition_penalty, ignore_eos, stop_token_ids,
// chat_template_kwargs.enable_thinking). Unknown fields are ignored, as the
// OpenAI clients send fields this server does not use (user, metadata, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/engine/engine.h"
#include "runtime/server/tool_calls.h"
#include "runtime/text/chat_template.h"

namespace ft::server {

using json = nlohmann::ordered_json;

// An error as the OpenAI API reports it: {"error": {message, type, param, code}}.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // the offending field; empty: null
  std::string code;   // machine-readable code; empty: null
};

ApiError bad_request(std::string message, std::string param = "", std::string code = "");
json error_json(const ApiError& error);
// Serialized JSON, with invalid UTF-8 replaced (a token may hold part of a
// character), so dumping never throws.
std::string dump(const json& value);

// A value or an ApiError.
template <typename T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  ApiResult(ApiError error) : error_(std::move(error)) {}  // NOLINT: implicit by design
  bool ok() const { return value_.has_value(); }
  const ApiError& error() const { return *error_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  std::optional<ApiError> error_;
};

enum class ApiKind { kChat, kCompletion };

struct GenerationRequest {
  ApiKind kind = ApiKind::kChat;
  std::string model;  // as sent; empty when absent
  // Chat: the messages (normalized later by the template) and tools (null if none).
  json messages = json::array();
  json tools;
  bool tool_choice_none = false;  // tool_choice "none": calls in the output stay text
  bool tool_choice_required = false;  // "required": the answer is a call
  std::string tool_choice_name;       // {"type": "function", ...}: the answer calls this function
  std::optional<bool> enable_thinking;
  // Completions: a text prompt, or token ids when prompt_is_tokens.
  std::string prompt;
  std::vector<int32_t> prompt_tokens;
  bool prompt_is_tokens = false;
  // Completions: the answer's text (and logprobs) starts with the prompt's;
  // with logprobs, the prompt's tokens are scored (the first one: null).
  bool echo = false;

  SamplingParams sampling;
  int n = 1;  // choices: that many samples of the same prompt
  bool max_tokens_given = false;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
};

// Completions default to 16 new tokens, as the OpenAI API does; chat requests
// without max_tokens run to EOS or the end of the context.
inline constexpr int kCompletionDefaultMaxTokens = 16;
inline constexpr int kMaxTopLogprobs = 20;
inline constexpr size_t kMaxStopStrings = 16;

// The "function" objects (with a string "name") of a request's `tools`, in order.
std::vector<const json*> tool_functions(const json& tools);
// The "function" object of the tool named `name` in a request's `tools`, or null.
const json* find_tool_function(const json& tools, std::string_view name);

// Parses and validates a /v1/chat/completions or /v1/completions body.
// Errors are 400s naming the field ("temperature must be a number").
ApiResult<GenerationRequest> parse_generation_request(ApiKind kind, std::string_view body);

// 404 when `requested` is given and is not the served model's name.
std::optional<ApiError> check_model(const std::string& requested, const std::string& served);

// The context check made once the prompt is tokenized: an empty prompt, a
// prompt that fills the context, or max_tokens beyond what is left give 400s.
std::optional<ApiError> check_lengths(const GenerationRequest& request, int prompt_tokens, int max_context);

// What the chat template gets for this request.
ChatRenderOptions chat_render_options(const GenerationRequest& request);

// ---- responses ------------------------------------------------------------

// Bytes of one token as the text it stands for (a BPE token's raw bytes, an
// added token's content).
using TokenText = std::function<std::string(int32_t)>;

// What stays the same across one request's response or chunks.
struct ResponseContext {
  ApiKind kind = ApiKind::kChat;
  std::string id;  // "chatcmpl-..." / "cmpl-..."
  int64_t created = 0;
  std::string model;
  bool logprobs = false;  // whether the client asked for logprobs
  TokenText token_text;
  bool short_call_ids = false;  // tool call ids of 9 letters and digits (wants_short_call_ids)
};

// The finished result of one request.
struct Completion {
  std::string text = {};
  std::vector<TokenLogprob> logprobs = {};
  // Prompt tokens 1 .. n-1 scored (SamplingParams::prompt_logprobs).
  std::vector<TokenLogprob> prompt_logprobs = {};
  FinishReason finish = FinishReason::kNone;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_prompt_tokens = 0;
  std::vector<ToolCall> tool_calls = {};  // chat: the calls cut out of `text`
  std::string reasoning = {};             // chat: the reasoning cut out of `text` (reasoning.h)
};

// "stop", "length"; "abort" and "error" are not OpenAI reasons but say what
// happened. A stop after tool calls is "tool_calls".
const char* openai_finish_reason(FinishReason reason, bool tool_calls = false);
std::string make_request_id(ApiKind kind, uint64_t serial);

json usage_json(int prompt_tokens, int completion_tokens, int cached_prompt_tokens);
// chat: {"content": [{token, logprob, bytes, top_logprobs}]};
// completions: {tokens, token_logprobs, top_logprobs, text_offset}, offsets
// counted from `text_offset` (the length of the text sent before).
json logprobs_json(const ResponseContext& ctx, std::span<const TokenLogprob> logprobs, size_t text_offset);
json full_response(const ResponseContext& ctx, const Completion& result);
// n choices, index i from choices[i]; usage counts the prompt once.
json full_response(const ResponseContext& ctx, std::span<const Completion> choices);

// One SSE chunk of a stream. `role` adds {"role": "assistant"} to a chat delta
// (the first chunk); `finish` is null until the last choice chunk.
struct ChunkPart {
  std::string_view text = {};
  std::string_view reasoning = {};  // chat: delta.reasoning_content
  std::span<const TokenLogprob> logprobs = {};
  size_t text_offset = 0;
  const char* finish = nullptr;
  bool role = false;
  std::span<const ToolCall> tool_calls = {};  // chat: calls, numbered from tool_index
  size_t tool_index = 0;
  int index = 0;  // the choice
};
json stream_chunk(const ResponseContext& ctx, const ChunkPart& part, bool include_usage);
// The last chunk when stream_options.include_usage is set: no choices, the usage.
json usage_chunk(const ResponseContext& ctx, const Completion& result);
json usage_chunk(const ResponseContext& ctx, std::span<const Completion> choices);
// "data: <json>\n\n"
std::string sse_data(const json& value);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// ---- the other endpoints --------------------------------------------------

// /tokenize: {"prompt": "..."} or {"messages": [...]} (rendered by the chat
// template first); add_special_tokens (default true for a prompt, false for
// messages, whose template writes its own special tokens).
struct TokenizeRequest {
  std::optional<std::string> prompt;
  json messages;  // null unless given
  bool add_special = true;
  std::string model;
};
ApiResult<TokenizeRequest> parse_tokenize_request(std::string_view body);
// /detokenize: {"tokens": [ids]}
ApiResult<std::vector<int32_t>> parse_detokenize_request(std::string_view body);
// /apply-template: {"messages": [...], "tools"?, "add_generation_prompt"?,
// "chat_template_kwargs"?}
ApiResult<ChatRenderOptions> parse_apply_template_request(std::string_view body);

// GET /v1/models/{id}: the model object; GET /v1/models: the list of it.
json model_json(const std::string& served_name, int64_t created, int max_context);
json models_json(const std::string& served_name, int64_t created, int max_context);
// A path segment's %XX escapes decoded ("Qwen%2FQwen3-8B" -> "Qwen/Qwen3-8B");
// nullopt for a '%' not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view s);

// ---- metrics --------------------------------------------------------------

// Counted by the server, beside what the engine reports.
struct ServerCounters {
  bool ready = false;
  std::vector<std::pair<int, uint64_t>> http_responses;       // status -> count
  std::vector<std::pair<std::string, uint64_t>> finished;     // finish reason -> count
};
// Prometheus text exposition (version 0.0.4). `engine` is null while loading.
std::string prometheus_text(const EngineMetrics* engine, const ServerCounters& counters);

}  // namespace ft::server
