#include "runtime/server/api_server.h"

#include <condition_variable>
#include <deque>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "runtime/base/log.h"
#include "runtime/engine/json_schema.h"
#include "runtime/server/reasoning.h"

namespace ft::server {
namespace {

using Clock = std::chrono::steady_clock;

// An engine event and the choice (of a request's n) it belongs to.
struct ChoiceEvent {
  int choice = 0;
  RequestEvent event;
};

// Engine events of one request, from the engine thread to the HTTP thread.
class EventQueue {
 public:
  void push(int choice, const RequestEvent& event) {
    {
      std::lock_guard lock(mutex_);
      events_.push_back({choice, event});
    }
    ready_.notify_one();
  }
  // Waits up to `timeout` for events and moves out all there are.
  std::vector<ChoiceEvent> pop(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    ready_.wait_for(lock, timeout, [&] { return !events_.empty(); });
    std::vector<ChoiceEvent> out(std::make_move_iterator(events_.begin()), std::make_move_iterator(events_.end()));
    events_.clear();
    return out;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<ChoiceEvent> events_;
};

// A finish that ends the whole request with an error.
bool failed(FinishReason r) { return r == FinishReason::kError || r == FinishReason::kAbort; }

// One of the n choices of a request: an engine request of its own.
struct Choice {
  Choice(ReasoningFormat reasoning_format, bool reasoning_opened, ToolCallFormat call_format)
      : reasoning(reasoning_format, reasoning_opened), calls(call_format) {}
  uint64_t id = 0;  // the engine's
  Completion result;
  ReasoningStream reasoning;  // streamed: the text goes through it, then its content through `calls`
  ToolCallStream calls;
  size_t calls_sent = 0;
  size_t text_offset = 0;
  bool echoed = false;  // streamed with echo: the prompt has been sent
  ReasoningSplit held;  // streamed: what the parsers still held at the end
};

void send_json(ResponseWriter& writer, int status, const json& body) {
  writer.send(status, "application/json", dump(body));
}

void send_error(ResponseWriter& writer, const ApiError& error) { send_json(writer, error.status, error_json(error)); }

ApiError server_error(int status, std::string message, std::string code = "") {
  ApiError e;
  e.status = status;
  e.message = std::move(message);
  e.type = status == 503 ? "service_unavailable" : "server_error";
  e.code = std::move(code);
  return e;
}

TokenText token_text_of(const Tokenizer& tokenizer) {
  return [tokenizer](int32_t id) -> std::string {
    if (const AddedToken* added = tokenizer.added_token(id)) return added->content;
    return std::string(tokenizer.token_bytes(id));
  };
}

// The prompt as token ids, or the 400 that explains why there is none. A chat
// prompt's rendered text goes to `rendered`.
ApiResult<std::vector<int32_t>> prompt_tokens(const GenerationRequest& request, const Engine& engine,
                                              std::string_view answer_start, std::string& rendered) {
  const Tokenizer& tokenizer = engine.tokenizer();
  if (request.kind == ApiKind::kCompletion && request.prompt_is_tokens) {
    for (int32_t id : request.prompt_tokens)
      if (id >= tokenizer.vocab_size())
        return bad_request(fmt::format("token id {} is outside the vocabulary ({} tokens)", id, tokenizer.vocab_size()),
                           "prompt");
    return request.prompt_tokens;
  }
  std::string text = request.prompt;
  EncodeOptions encode;
  if (request.kind == ApiKind::kChat) {
    const ChatTemplate* chat = engine.chat_template();
    if (!chat)
      return bad_request("this model has no chat template: use /v1/completions or start ft-serve with --chat-template",
                         "messages");
    Result<std::string> rendered = chat->render(chat_render_options(request));
    if (!rendered.ok()) return bad_request("the chat template failed: " + rendered.status().user_message(), "messages");
    text = std::move(*rendered);
    text += answer_start;
    encode.add_special = false;  // the template writes the special tokens it wants
  }
  Result<std::vector<int32_t>> ids = tokenizer.encode(text, encode);
  rendered = std::move(text);
  if (!ids.ok()) return bad_request("cannot tokenize the prompt: " + ids.status().user_message());
  return std::move(*ids);
}

// tool_choice "required" or a named function: the opening of the call, to
// be written at the end of the prompt (empty when no call is forced); the
// request's sampling then holds the rest to the call's schema, or to JSON.
ApiResult<std::string> force_call(GenerationRequest& request, ToolCallFormat format) {
  const bool forcing = request.tool_choice_required || !request.tool_choice_name.empty();
  if (request.kind != ApiKind::kChat || !forcing) return std::string();
  // The functions the call may name: the one named, or every tool.
  std::vector<CallableFunction> choices;
  for (const json* function : tool_functions(request.tools)) {
    CallableFunction c{(*function)["name"].get<std::string>(), ""};
    if (!request.tool_choice_name.empty() && c.name != request.tool_choice_name) continue;
    if (function->contains("parameters")) c.parameters = (*function)["parameters"].dump();
    choices.push_back(std::move(c));
  }
  std::optional<ForcedCall> forced = forced_call(format, request.tool_choice_name, choices);
  if (!forced)
    return bad_request("this model's chat template writes tool calls in no format this server knows, so tool_choice "
                       "cannot force one",
                       "tool_choice");
  if (!forced->schema.empty()) {  // the functions' parameters, where this server can hold the call to them
    Result<std::shared_ptr<const JsonSchema>> schema = JsonSchema::compile(forced->schema);
    if (schema.ok()) {
      request.sampling.json_schema = std::move(*schema);
      return forced->tag;
    }
    log::debug("tool_choice {}: the parameters are outside the schema subset ({}); held to JSON only",
               request.tool_choice_name.empty() ? "required" : request.tool_choice_name, schema.status().message());
  }
  request.sampling.json_object = true;
  request.sampling.json_prefix = forced->json;
  return forced->tag + forced->json;
}

// What one request did, for its log line.
struct RequestLog {
  Clock::time_point start = Clock::now();
  double ttft_ms = 0;
  bool first_token_seen = false;

  void line(const HttpRequest& http, const Completion& result, const std::string& id, bool tool_calls) const {
    double total_s = std::chrono::duration<double>(Clock::now() - start).count();
    double decode_s = total_s - ttft_ms / 1000.0;
    double speed = result.completion_tokens > 1 && decode_s > 0 ? (result.completion_tokens - 1) / decode_s : 0;
    const char* finish = openai_finish_reason(result.finish, tool_calls);
    log::info("{} {} {}: prompt {} tokens ({} cached), completion {} tokens, ttft {:.1f} ms, {:.1f} tokens/s, {:.2f} s, "
              "finish {}",
              http.method, http.path, id, result.prompt_tokens, result.cached_prompt_tokens, result.completion_tokens,
              ttft_ms, speed, total_s, finish ? finish : "none");
  }
};

// Folds one event into the running result.
void absorb(Completion& result, RequestLog& log, std::string& error, const RequestEvent& e) {
  result.text += e.text;
  result.logprobs.insert(result.logprobs.end(), e.logprobs.begin(), e.logprobs.end());
  result.prompt_logprobs.insert(result.prompt_logprobs.end(), e.prompt_logprobs.begin(), e.prompt_logprobs.end());
  if (e.prompt_tokens) result.prompt_tokens = e.prompt_tokens;
  result.completion_tokens = std::max(result.completion_tokens, e.completion_tokens);
  result.cached_prompt_tokens = std::max(result.cached_prompt_tokens, e.cached_prompt_tokens);
  if (!log.first_token_seen && (e.completion_tokens > 0 || !e.tokens.empty())) {
    log.first_token_seen = true;
    log.ttft_ms = e.time_to_first_token_ms > 0
                      ? e.time_to_first_token_ms
                      : std::chrono::duration<double, std::milli>(Clock::now() - log.start).count();
  }
  if (e.finish != FinishReason::kNone) result.finish = e.finish;
  if (!e.error.empty()) error = e.error;
}

}  // namespace

// Counts the status of every response the server sends.
class CountingWriter final : public ResponseWriter {
 public:
  CountingWriter(ApiServer& server, ResponseWriter& inner) : server_(server), inner_(inner) {}
  void send(int status, std::string_view content_type, std::string_view body, const HttpHeaders& extra = {}) override {
    server_.count_response(status);
    inner_.send(status, content_type, body, extra);
  }
  bool begin_stream(int status, std::string_view content_type) override {
    server_.count_response(status);
    return inner_.begin_stream(status, content_type);
  }
  bool write(std::string_view data) override { return inner_.write(data); }
  void end_stream() override { inner_.end_stream(); }
  bool client_gone() override { return inner_.client_gone(); }

 private:
  ApiServer& server_;
  ResponseWriter& inner_;
};

ApiServer::ApiServer(ApiServerOptions options)
    : options_(std::move(options)),
      created_(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()) {}

void ApiServer::set_engine(Engine* engine) { engine_.store(engine); }

void ApiServer::set_progress(std::string line) {
  std::lock_guard lock(mutex_);
  progress_ = std::move(line);
}

void ApiServer::handle(const HttpRequest& request, ResponseWriter& writer) {
  CountingWriter counting(*this, writer);
  dispatch(request, counting);
}

// GET /v1/models/{id}'s prefix.
constexpr std::string_view kModelPrefix = "/v1/models/";

void ApiServer::dispatch(const HttpRequest& request, ResponseWriter& writer) {
  const std::string& path = request.path;
  if (path == "/health") return health(writer);
  if (!authorized(request)) {
    ApiError e = server_error(401, "Missing or incorrect API key: send 'Authorization: Bearer <key>'", "invalid_api_key");
    e.type = "authentication_error";
    return send_error(writer, e);
  }
  struct Route {
    const char* method;
    const char* path;
    void (ApiServer::*run)(const HttpRequest&, ResponseWriter&);
  };
  static const Route kRoutes[] = {
      {"POST", "/v1/chat/completions", nullptr}, {"POST", "/v1/completions", nullptr},
      {"GET", "/v1/models", nullptr},            {"GET", "/metrics", nullptr},
      {"POST", "/tokenize", &ApiServer::tokenize}, {"POST", "/detokenize", &ApiServer::detokenize},
      {"POST", "/apply-template", &ApiServer::apply_template}, {"GET", "/v1/models/{id}", &ApiServer::model},
  };
  // /v1/models/ID is the route /v1/models/{id}.
  const std::string_view route_path =
      path.starts_with(kModelPrefix) && path.size() > kModelPrefix.size() ? "/v1/models/{id}" : std::string_view(path);
  for (const Route& route : kRoutes) {
    if (route_path != route.path) continue;
    if (request.method != route.method) {
      ApiError e = server_error(405, fmt::format("{} needs {}, not {}", path, route.method, request.method));
      e.type = "invalid_request_error";
      return send_error(writer, e);
    }
    if (path == "/v1/chat/completions") return generate(ApiKind::kChat, request, writer);
    if (path == "/v1/completions") return generate(ApiKind::kCompletion, request, writer);
    if (path == "/metrics") return metrics(writer);
    if (path == "/v1/models") {
      Engine* engine = engine_.load();
      return send_json(writer, 200, models_json(options_.served_model_name, created_, engine ? engine->max_context() : 0));
    }
    return (this->*route.run)(request, writer);
  }
  ApiError e = server_error(404, fmt::format("no such endpoint: {} {}", request.method, path), "not_found");
  e.type = "invalid_request_error";
  send_error(writer, e);
}

// GET /v1/models/{id} (the OpenAI client's models.retrieve): the served
// model's object, or the same 404 a request for another model gets. The id
// may come percent-encoded ("org%2Fname").
void ApiServer::model(const HttpRequest& request, ResponseWriter& writer) {
  const std::optional<std::string> id = percent_decode(std::string_view(request.path).substr(kModelPrefix.size()));
  if (!id) return send_error(writer, bad_request(fmt::format("{}: a '%' not followed by two hex digits", request.path)));
  if (std::optional<ApiError> e = check_model(*id, options_.served_model_name)) return send_error(writer, *e);
  Engine* engine = engine_.load();
  send_json(writer, 200, model_json(options_.served_model_name, created_, engine ? engine->max_context() : 0));
}

bool ApiServer::authorized(const HttpRequest& request) const {
  if (options_.api_key.empty()) return true;
  // Compared in time that does not depend on where the strings differ, so the
  // key cannot be guessed byte by byte from response times.
  const std::string expected = "Bearer " + options_.api_key;
  const std::string given = request.header("authorization");
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i)
    diff |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

Engine* ApiServer::require_engine(ResponseWriter& writer) {
  Engine* engine = engine_.load();
  if (!engine) send_error(writer, server_error(503, "the model is still loading; retry when /health answers 200", "loading"));
  return engine;
}

void ApiServer::health(ResponseWriter& writer) {
  if (engine_.load()) return send_json(writer, 200, {{"status", "ok"}});
  json body = {{"status", "loading"}};
  {
    std::lock_guard lock(mutex_);  // not held while sending: the writer counts the response under it
    if (!progress_.empty()) body["progress"] = progress_;
  }
  send_json(writer, 503, body);
}

void ApiServer::metrics(ResponseWriter& writer) {
  Engine* engine = engine_.load();
  EngineMetrics m;
  if (engine) m = engine->metrics();
  writer.send(200, "text/plain; version=0.0.4; charset=utf-8", prometheus_text(engine ? &m : nullptr, counters()));
}

void ApiServer::count_response(int status) {
  std::lock_guard lock(mutex_);
  ++responses_[status];
}

void ApiServer::count_finish(FinishReason reason) { finished_[static_cast<size_t>(reason)].fetch_add(1); }

ServerCounters ApiServer::counters() const {
  ServerCounters c;
  c.ready = engine_.load() != nullptr;
  {
    std::lock_guard lock(mutex_);
    c.http_responses.assign(responses_.begin(), responses_.end());
  }
  for (FinishReason r : {FinishReason::kStop, FinishReason::kLength, FinishReason::kAbort, FinishReason::kError})
    c.finished.emplace_back(openai_finish_reason(r), finished_[static_cast<size_t>(r)].load());
  return c;
}

void ApiServer::generate(ApiKind kind, const HttpRequest& http, ResponseWriter& writer) {
  ApiResult<GenerationRequest> request = parse_generation_request(kind, http.body);
  if (!request.ok()) return send_error(writer, request.error());
  if (auto e = check_model(request->model, options_.served_model_name)) return send_error(writer, *e);
  Engine* engine = require_engine(writer);
  if (!engine) return;
  // Given tools, the model's calls come out of the text as tool_calls.
  const ToolCallFormat call_format = kind == ApiKind::kChat && !request->tools.is_null() && !request->tool_choice_none
                                         ? tool_call_format_of(engine->chat_template())
                                         : ToolCallFormat::kNone;
  ApiResult<std::string> answer_start = force_call(*request, call_format);
  if (!answer_start.ok()) return send_error(writer, answer_start.error());
  std::string prompt_text;
  ApiResult<std::vector<int32_t>> prompt = prompt_tokens(*request, *engine, *answer_start, prompt_text);
  if (!prompt.ok()) return send_error(writer, prompt.error());
  if (auto e = check_lengths(*request, static_cast<int>(prompt->size()), engine->max_context()))
    return send_error(writer, *e);
  // Completions with echo: the prompt as sent (token ids decoded), and with
  // logprobs its tokens, the first unscored, before the answer's.
  std::string echo_text;
  if (request->echo) {
    Result<std::string> text = request->prompt_is_tokens ? engine->tokenizer().decode(*prompt) : request->prompt;
    if (!text.ok())
      return send_error(writer, bad_request("cannot decode the prompt: " + text.status().user_message(), "prompt"));
    echo_text = std::move(*text);
  }
  auto echo_logprobs = [&](const Completion& result) {
    std::vector<TokenLogprob> out;
    if (!request->echo || request->sampling.logprobs < 0) return out;
    out.push_back({.token = prompt->front(), .logprob = std::numeric_limits<float>::quiet_NaN(), .top = {}});
    out.insert(out.end(), result.prompt_logprobs.begin(), result.prompt_logprobs.end());
    return out;
  };
  // A thinking model's <think> block comes out as reasoning_content.
  const ReasoningFormat reasoning_format = kind == ApiKind::kChat && options_.split_reasoning
                                               ? reasoning_format_of(engine->chat_template())
                                               : ReasoningFormat::kNone;
  const bool reasoning_opened = reasoning_format != ReasoningFormat::kNone && prompt_opens_reasoning(prompt_text);
  // n choices are n engine requests (with a seed, seed + i each, so they differ).
  auto queue = std::make_shared<EventQueue>();
  std::vector<Choice> choices(request->n, Choice(reasoning_format, reasoning_opened, call_format));
  // A forced call's opening is the answer's start: it goes through the parsers first (streamed) or
  // before the text (whole).
  if (request->stream)
    for (Choice& c : choices) c.calls.push(c.reasoning.push(*answer_start).content);
  RequestLog log;
  for (int i = 0; i < request->n; ++i) {
    Request submit;
    submit.prompt = *prompt;
    submit.sampling = request->sampling;
    if (submit.sampling.seed) *submit.sampling.seed += static_cast<uint64_t>(i);
    submit.on_event = [this, queue, i](const RequestEvent& e) {
      if (e.finish != FinishReason::kNone) count_finish(e.finish);
      queue->push(i, e);
    };
    Result<uint64_t> id = engine->submit(std::move(submit));
    if (!id.ok()) {
      for (int k = 0; k < i; ++k) engine->cancel(choices[k].id);
      const Status& s = id.status();
      if (s.code() == ErrorCode::kUnavailable)
        return send_error(writer, server_error(503, "the server is busy (request queue full); retry later", "queue_full"));
      if (s.code() == ErrorCode::kInvalidArgument) return send_error(writer, bad_request(s.user_message()));
      log::error("submit failed: {}", s.to_string());
      return send_error(writer, server_error(500, s.user_message()));
    }
    choices[i].id = *id;
  }

  ResponseContext ctx;
  ctx.kind = kind;
  ctx.id = make_request_id(kind, next_serial_.fetch_add(1));
  ctx.created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  ctx.model = options_.served_model_name;
  ctx.logprobs = request->sampling.logprobs >= 0;
  ctx.token_text = token_text_of(engine->tokenizer());
  ctx.short_call_ids = wants_short_call_ids(call_format);

  const bool stream = request->stream;
  const bool usage = request->include_usage;
  std::string engine_error;
  bool alive = !stream || writer.begin_stream(200, "text/event-stream");
  for (int i = 0; alive && stream && kind == ApiKind::kChat && i < request->n; ++i)
    alive = writer.write(sse_data(stream_chunk(ctx, {.role = true, .index = i}, usage)));
  auto send_text = [&](Choice& c, int index, const ReasoningSplit& text, std::span<const TokenLogprob> logprobs) {
    if (text.content.empty() && text.reasoning.empty() && !(ctx.logprobs && !logprobs.empty())) return;
    ChunkPart part{.text = text.content,
                   .reasoning = text.reasoning,
                   .logprobs = logprobs,
                   .text_offset = c.text_offset,
                   .index = index};
    alive = alive && writer.write(sse_data(stream_chunk(ctx, part, usage)));
    c.text_offset += text.content.size();
  };
  auto send_calls = [&](Choice& c, int index) {
    const std::vector<ToolCall> closed = c.calls.take_calls();
    if (closed.empty()) return;
    ChunkPart part{.tool_calls = closed, .tool_index = c.calls_sent, .index = index};
    alive = alive && writer.write(sse_data(stream_chunk(ctx, part, usage)));
    c.calls_sent += closed.size();
  };
  // Runs until every choice is done, or one fails (the rest are then cancelled).
  auto running = [&] {
    bool open = false;
    for (const Choice& c : choices) {
      if (failed(c.result.finish)) return false;
      open = open || c.result.finish == FinishReason::kNone;
    }
    return open;
  };

  while (running()) {
    if (!alive || writer.client_gone()) {
      int tokens = 0;
      for (Choice& c : choices) {
        if (c.result.finish == FinishReason::kNone) engine->cancel(c.id);
        tokens += c.result.completion_tokens;
      }
      log::info("{} {} {}: client went away after {} tokens; cancelled", http.method, http.path, ctx.id, tokens);
      return;
    }
    for (const ChoiceEvent& ce : queue->pop(kClientPoll)) {
      Choice& c = choices[ce.choice];
      const RequestEvent& e = ce.event;
      absorb(c.result, log, engine_error, e);
      if (!stream || e.finish == FinishReason::kError) continue;
      if (request->echo && !c.echoed) {  // the prompt's scores come with the first event
        c.echoed = true;
        send_text(c, ce.choice, ReasoningSplit{.content = echo_text}, echo_logprobs(c.result));
      }
      ReasoningSplit split = c.reasoning.push(e.text);
      split.content = c.calls.push(split.content);
      send_text(c, ce.choice, split, e.logprobs);
      send_calls(c, ce.choice);
    }
  }

  // The request as a whole, for the log and the usage.
  Completion total = choices[0].result;
  total.completion_tokens = 0;
  bool any_calls = false;
  for (Choice& c : choices) {
    if (!stream) {
      ReasoningSplit split = split_reasoning(reasoning_format, reasoning_opened, *answer_start + c.result.text);
      c.result.reasoning = std::move(split.reasoning);
      c.result.text = std::move(split.content);
      if (call_format != ToolCallFormat::kNone) {
        ParsedToolCalls parsed = parse_tool_calls(call_format, c.result.text);
        c.result.text = std::move(parsed.content);
        c.result.tool_calls = std::move(parsed.calls);
      }
    } else {
      c.held = c.reasoning.finish();
      c.held.content = c.calls.push(c.held.content);
      c.held.content += c.calls.finish();
    }
    any_calls = any_calls || !c.result.tool_calls.empty() || c.calls.saw_calls();
    total.completion_tokens += c.result.completion_tokens;
    if (failed(c.result.finish)) total.finish = c.result.finish;
  }
  log.line(http, total, ctx.id, any_calls);

  if (failed(total.finish)) {
    for (Choice& c : choices)
      if (c.result.finish == FinishReason::kNone) engine->cancel(c.id);
    ApiError e = server_error(total.finish == FinishReason::kAbort ? 503 : 500,
                              total.finish == FinishReason::kAbort ? "the request was aborted by the engine"
                                                                   : "generation failed: " + engine_error);
    if (total.finish == FinishReason::kError) log::error("{} {} {}: {}", http.method, http.path, ctx.id, e.message);
    if (!stream) return send_error(writer, e);
    writer.write(sse_data(error_json(e)));
    writer.write(kSseDone);
    return writer.end_stream();
  }
  std::vector<Completion> results;
  for (const Choice& c : choices) results.push_back(c.result);
  if (request->echo && !stream)
    for (Completion& r : results) {
      std::vector<TokenLogprob> lp = echo_logprobs(r);
      r.logprobs.insert(r.logprobs.begin(), lp.begin(), lp.end());
      r.text.insert(0, echo_text);
    }
  if (!stream) return send_json(writer, 200, full_response(ctx, results));
  for (int i = 0; i < request->n; ++i) {
    Choice& c = choices[i];
    send_text(c, i, c.held, {});
    send_calls(c, i);
    const char* finish = openai_finish_reason(c.result.finish, c.calls.saw_calls());
    writer.write(sse_data(stream_chunk(ctx, {.finish = finish, .index = i}, usage)));
  }
  if (usage) writer.write(sse_data(usage_chunk(ctx, results)));
  writer.write(kSseDone);
  writer.end_stream();
}

void ApiServer::tokenize(const HttpRequest& http, ResponseWriter& writer) {
  ApiResult<TokenizeRequest> request = parse_tokenize_request(http.body);
  if (!request.ok()) return send_error(writer, request.error());
  if (auto e = check_model(request->model, options_.served_model_name)) return send_error(writer, *e);
  Engine* engine = require_engine(writer);
  if (!engine) return;
  std::string text;
  if (request->prompt) {
    text = *request->prompt;
  } else {
    const ChatTemplate* chat = engine->chat_template();
    if (!chat) return send_error(writer, bad_request("this model has no chat template", "messages"));
    ChatRenderOptions options;
    options.messages = request->messages;
    Result<std::string> rendered = chat->render(options);
    if (!rendered.ok())
      return send_error(writer, bad_request("the chat template failed: " + rendered.status().user_message(), "messages"));
    text = std::move(*rendered);
  }
  Result<std::vector<int32_t>> ids = engine->tokenizer().encode(text, {.add_special = request->add_special});
  if (!ids.ok()) return send_error(writer, bad_request(ids.status().user_message(), "prompt"));
  send_json(writer, 200, {{"tokens", *ids}, {"count", ids->size()}, {"max_model_len", engine->max_context()}});
}

void ApiServer::detokenize(const HttpRequest& http, ResponseWriter& writer) {
  ApiResult<std::vector<int32_t>> ids = parse_detokenize_request(http.body);
  if (!ids.ok()) return send_error(writer, ids.error());
  Engine* engine = require_engine(writer);
  if (!engine) return;
  Result<std::string> text = engine->tokenizer().decode(*ids);
  if (!text.ok()) return send_error(writer, bad_request(text.status().user_message(), "tokens"));
  send_json(writer, 200, {{"prompt", *text}});
}

void ApiServer::apply_template(const HttpRequest& http, ResponseWriter& writer) {
  ApiResult<ChatRenderOptions> options = parse_apply_template_request(http.body);
  if (!options.ok()) return send_error(writer, options.error());
  Engine* engine = require_engine(writer);
  if (!engine) return;
  const ChatTemplate* chat = engine->chat_template();
  if (!chat) return send_error(writer, bad_request("this model has no chat template", "messages"));
  Result<std::string> rendered = chat->render(*options);
  if (!rendered.ok())
    return send_error(writer, bad_request("the chat template failed: " + rendered.status().user_message(), "messages"));
  send_json(writer, 200, {{"prompt", *rendered}});
}

}  // namespace ft::server
