// The OpenAI protocol layer on its own: request parsing and validation,
// response and chunk shapes, errors, metrics text. Expected values are written
// from the OpenAI API reference, not from the code.
#include "runtime/server/protocol.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include <gtest/gtest.h>

namespace ft::server {
namespace {

GenerationRequest parse_ok(ApiKind kind, const std::string& body) {
  ApiResult<GenerationRequest> r = parse_generation_request(kind, body);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : GenerationRequest{};
}

ApiError parse_error(ApiKind kind, const std::string& body) {
  ApiResult<GenerationRequest> r = parse_generation_request(kind, body);
  EXPECT_FALSE(r.ok()) << body;
  return r.ok() ? ApiError{} : r.error();
}

constexpr const char* kHello = R"("messages":[{"role":"user","content":"hi"}])";

TEST(ParseChat, FullRequest) {
  GenerationRequest r = parse_ok(ApiKind::kChat, std::string("{") + kHello + R"(,
    "model":"tiny","stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"top_p":0.9,
    "top_k":40,"min_p":0.05,"presence_penalty":0.5,"frequency_penalty":-0.5,"repetition_penalty":1.1,
    "seed":42,"max_tokens":20,"stop":["a","b"],"logprobs":true,"top_logprobs":3,"user":"ignored",
    "chat_template_kwargs":{"enable_thinking":false}})");
  EXPECT_EQ(r.model, "tiny");
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.05f);
  EXPECT_FLOAT_EQ(r.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(r.sampling.repetition_penalty, 1.1f);
  ASSERT_TRUE(r.sampling.seed.has_value());
  EXPECT_EQ(*r.sampling.seed, 42u);
  EXPECT_EQ(r.sampling.max_tokens, 20);
  EXPECT_EQ(r.sampling.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.sampling.logprobs, 3);
  ASSERT_TRUE(r.enable_thinking.has_value());
  EXPECT_FALSE(*r.enable_thinking);
  EXPECT_EQ(r.messages.size(), 1u);
}

TEST(ParseChat, DefaultsAndNulls) {
  GenerationRequest r = parse_ok(ApiKind::kChat, std::string("{") + kHello + R"(,"temperature":null,"stop":null})");
  EXPECT_FLOAT_EQ(r.sampling.temperature, 1.0f);
  EXPECT_EQ(r.sampling.max_tokens, 0);  // up to the context
  EXPECT_FALSE(r.max_tokens_given);
  EXPECT_EQ(r.sampling.logprobs, -1);
  EXPECT_FALSE(r.sampling.seed.has_value());
  EXPECT_FALSE(r.stream);
  EXPECT_TRUE(r.sampling.stop.empty());
}

TEST(ParseChat, StopAsStringAndMaxCompletionTokens) {
  GenerationRequest r =
      parse_ok(ApiKind::kChat, std::string("{") + kHello + R"(,"stop":"END","max_completion_tokens":7})");
  EXPECT_EQ(r.sampling.stop, (std::vector<std::string>{"END"}));
  EXPECT_EQ(r.sampling.max_tokens, 7);
  EXPECT_TRUE(r.max_tokens_given);
}

TEST(ParseChat, LogprobsWithoutTopIsZeroAlternatives) {
  GenerationRequest r = parse_ok(ApiKind::kChat, std::string("{") + kHello + R"(,"logprobs":true})");
  EXPECT_EQ(r.sampling.logprobs, 0);
}

TEST(ParseChat, Errors) {
  struct Case {
    std::string body;
    std::string param;
    std::string fragment;
  };
  const std::string m = std::string(kHello) + ",";
  const std::vector<Case> cases = {
      {"{", "", "not valid JSON"},
      {"[1,2]", "", "must be a JSON object"},
      {"{}", "messages", "'messages' is required"},
      {R"({"messages":"hi"})", "messages", "'messages' must be an array, got a string"},
      {R"({"messages":[]})", "messages", "must not be empty"},
      {R"({"messages":[{"content":"x"}]})", "messages[0].role", "role must be a string"},
      {R"({"messages":[{"role":"user","content":5}]})", "messages[0].content", "must be a string or an array"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]})",
       "messages[0].content[0].type", "'image_url' is not supported"},
      {R"({"messages":[{"role":"user","content":["hi"]}]})", "messages[0].content[0]", "must be an object"},
      {R"({"messages":[{"role":"user","content":[{"type":"text"}]}]})", "messages[0].content[0].text", "must be a string"},
      {R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})", "messages[0].content[0].type", "must be a string"},
      {"{" + m + R"("temperature":"hot"})", "temperature", "'temperature' must be a number, got a string"},
      {"{" + m + R"("temperature":-1})", "temperature", "between 0 and"},
      {"{" + m + R"("top_p":0})", "top_p", "greater than 0"},
      {"{" + m + R"("max_tokens":"10"})", "max_tokens", "'max_tokens' must be an integer, got a string"},
      {"{" + m + R"("max_tokens":1.5})", "max_tokens", "must be an integer"},
      {"{" + m + R"("max_tokens":0})", "max_tokens", "between 1 and"},
      {"{" + m + R"("n":17})", "n", "between 1 and 16"},
      {"{" + m + R"("logit_bias":[1]})", "logit_bias", "must be an object"},
      {"{" + m + R"("logit_bias":{"x1":5}})", "logit_bias", "'x1' is not a token id"},
      {"{" + m + R"("logit_bias":{"12":101}})", "logit_bias", "from -100 to 100"},
      {"{" + m + R"("stream":"yes"})", "stream", "'stream' must be a boolean"},
      {"{" + m + R"("stop":[1]})", "stop", "array of strings"},
      {"{" + m + R"("seed":"x"})", "seed", "'seed' must be an integer"},
      {"{" + m + R"("top_logprobs":2})", "top_logprobs", "needs 'logprobs'"},
      {"{" + m + R"("logprobs":true,"top_logprobs":21})", "top_logprobs", "between 0 and 20"},
      {"{" + m + R"("response_format":{"type":"json_schema"}})", "response_format", "needs 'json_schema'"},
      {"{" + m + R"("response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"string","pattern":"^a"}}}})",
       "response_format", "'pattern' is not supported"},
      {"{" + m + R"("response_format":{"type":"grammar"}})", "response_format", "not supported"},
      {"{" + m + R"("model":7})", "model", "'model' must be a string"},
      {"{" + m + R"("stream_options":{"include_usage":1}})", "include_usage", "must be a boolean"},
      {"{" + m + R"("presence_penalty":3})", "presence_penalty", "between -2 and 2"},
  };
  for (const Case& c : cases) {
    ApiError e = parse_error(ApiKind::kChat, c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.type, "invalid_request_error") << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_NE(e.message.find(c.fragment), std::string::npos) << c.body << " -> " << e.message;
  }
}

TEST(ParseChat, ResponseFormats) {
  EXPECT_FALSE(parse_ok(ApiKind::kChat, std::string("{") + kHello + R"(,"response_format":{"type":"text"}})")
                   .sampling.json_object);
  EXPECT_TRUE(parse_ok(ApiKind::kChat, std::string("{") + kHello + R"(,"response_format":{"type":"json_object"}})")
                  .sampling.json_object);
  EXPECT_TRUE(parse_ok(ApiKind::kChat, std::string("{") + kHello +
                                           R"(,"response_format":{"type":"json_schema","json_schema":{"name":"x",)"
                                           R"("schema":{"type":"object","properties":{"a":{"type":"integer"}}}}}})")
                  .sampling.json_schema);
}

TEST(ParseCompletion, PromptForms) {
  GenerationRequest text = parse_ok(ApiKind::kCompletion, R"({"prompt":"Once upon"})");
  EXPECT_EQ(text.prompt, "Once upon");
  EXPECT_FALSE(text.prompt_is_tokens);
  EXPECT_EQ(text.sampling.max_tokens, kCompletionDefaultMaxTokens);  // OpenAI's default for completions

  GenerationRequest ids = parse_ok(ApiKind::kCompletion, R"({"prompt":[1,2,3],"max_tokens":5,"logprobs":2})");
  EXPECT_TRUE(ids.prompt_is_tokens);
  EXPECT_EQ(ids.prompt_tokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(ids.sampling.max_tokens, 5);
  EXPECT_EQ(ids.sampling.logprobs, 2);

  GenerationRequest one = parse_ok(ApiKind::kCompletion, R"({"prompt":["only"]})");
  EXPECT_EQ(one.prompt, "only");
  GenerationRequest nested = parse_ok(ApiKind::kCompletion, R"({"prompt":[[7,8]]})");
  EXPECT_EQ(nested.prompt_tokens, (std::vector<int32_t>{7, 8}));

  // echo scores the prompt only when logprobs are asked for.
  GenerationRequest echo = parse_ok(ApiKind::kCompletion, R"({"prompt":"x","echo":true})");
  EXPECT_TRUE(echo.echo);
  EXPECT_EQ(echo.sampling.prompt_logprobs, -1);
  GenerationRequest scored = parse_ok(ApiKind::kCompletion, R"({"prompt":"x","echo":true,"logprobs":1})");
  EXPECT_EQ(scored.sampling.prompt_logprobs, 1);
  EXPECT_EQ(parse_ok(ApiKind::kCompletion, R"({"prompt":"x","logprobs":1})").sampling.prompt_logprobs, -1);
}

TEST(ParseCompletion, Errors) {
  EXPECT_EQ(parse_error(ApiKind::kCompletion, R"({})").param, "prompt");
  EXPECT_EQ(parse_error(ApiKind::kCompletion, R"({"prompt":["a","b"]})").param, "prompt");
  EXPECT_EQ(parse_error(ApiKind::kCompletion, R"({"prompt":[1,-2]})").param, "prompt");
  EXPECT_EQ(parse_error(ApiKind::kCompletion, R"({"prompt":{"x":1}})").param, "prompt");
  EXPECT_EQ(parse_error(ApiKind::kCompletion, R"({"prompt":"x","echo":1})").param, "echo");
  EXPECT_EQ(parse_error(ApiKind::kCompletion, R"({"prompt":"x","logprobs":true})").param, "logprobs");
  EXPECT_EQ(parse_error(ApiKind::kCompletion, R"({"prompt":"x","best_of":3})").param, "best_of");
  // A chat field on the completions endpoint is not read; a missing prompt is the error.
  EXPECT_EQ(parse_error(ApiKind::kCompletion, std::string("{") + kHello + "}").param, "prompt");
}

TEST(CheckModel, UnknownModelIs404) {
  EXPECT_FALSE(check_model("", "tiny").has_value());
  EXPECT_FALSE(check_model("tiny", "tiny").has_value());
  std::optional<ApiError> e = check_model("gpt-4", "tiny");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->status, 404);
  EXPECT_EQ(e->code, "model_not_found");
  EXPECT_EQ(e->param, "model");
}

TEST(CheckLengths, ContextLimits) {
  GenerationRequest r = parse_ok(ApiKind::kChat, std::string("{") + kHello + "}");
  EXPECT_FALSE(check_lengths(r, 10, 64).has_value());
  EXPECT_EQ(check_lengths(r, 0, 64)->param, "messages");
  std::optional<ApiError> too_long = check_lengths(r, 64, 64);
  ASSERT_TRUE(too_long.has_value());
  EXPECT_EQ(too_long->status, 400);
  EXPECT_EQ(too_long->code, "context_length_exceeded");
  EXPECT_EQ(too_long->param, "messages");

  GenerationRequest m = parse_ok(ApiKind::kCompletion, R"({"prompt":"x","max_tokens":55})");
  EXPECT_FALSE(check_lengths(m, 9, 64).has_value());  // 9 + 55 = 64 fits exactly
  std::optional<ApiError> beyond = check_lengths(m, 10, 64);
  ASSERT_TRUE(beyond.has_value());
  EXPECT_EQ(beyond->param, "max_tokens");
  EXPECT_NE(beyond->message.find("65"), std::string::npos) << beyond->message;
}

TEST(ErrorJson, OpenAiShape) {
  json e = error_json(bad_request("bad thing", "temperature"));
  EXPECT_EQ(dump(e), R"({"error":{"message":"bad thing","type":"invalid_request_error","param":"temperature","code":null}})");
}

TEST(Dump, InvalidUtf8IsReplacedNotThrown) {
  json v = {{"text", std::string("a\xE4\xBD")}};
  EXPECT_EQ(dump(v), "{\"text\":\"a\xEF\xBF\xBD\"}");
}

ResponseContext context(ApiKind kind, bool logprobs = false) {
  ResponseContext ctx;
  ctx.kind = kind;
  ctx.id = make_request_id(kind, 1);
  ctx.created = 1700000000;
  ctx.model = "tiny";
  ctx.logprobs = logprobs;
  ctx.token_text = [](int32_t id) { return id == 1 ? std::string("Hi") : std::string(" there"); };
  return ctx;
}

TEST(Responses, ChatCompletion) {
  Completion c{.text = "Hi there", .finish = FinishReason::kStop, .prompt_tokens = 5, .completion_tokens = 2};
  json r = full_response(context(ApiKind::kChat), c);
  EXPECT_EQ(r["id"], "chatcmpl-0000000000000001");
  EXPECT_EQ(r["object"], "chat.completion");
  EXPECT_EQ(r["created"], 1700000000);
  EXPECT_EQ(r["model"], "tiny");
  EXPECT_EQ(r["choices"][0]["index"], 0);
  EXPECT_EQ(r["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(r["choices"][0]["message"]["content"], "Hi there");
  EXPECT_TRUE(r["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(r["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(r["usage"]["completion_tokens"], 2);
  EXPECT_EQ(r["usage"]["total_tokens"], 7);
}

// Tool calls: "call_..." ids, or 9 letters and digits for Mistral's templates,
// different per call and the same for the same response.
TEST(Responses, ToolCallIds) {
  Completion c{.finish = FinishReason::kStop, .tool_calls = {{"f", "{}"}, {"g", "{}"}}};
  ResponseContext ctx = context(ApiKind::kChat);
  json r = full_response(ctx, c);
  EXPECT_EQ(r["choices"][0]["message"]["tool_calls"][1]["id"], "call_0000000000000001_1");
  ctx.short_call_ids = true;
  r = full_response(ctx, c);
  const std::string a = r["choices"][0]["message"]["tool_calls"][0]["id"], b = r["choices"][0]["message"]["tool_calls"][1]["id"];
  for (const std::string& id : {a, b}) {
    EXPECT_EQ(id.size(), 9u) << id;
    EXPECT_TRUE(std::all_of(id.begin(), id.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)); })) << id;
  }
  EXPECT_NE(a, b);
  EXPECT_EQ(full_response(ctx, c)["choices"][0]["message"]["tool_calls"][0]["id"], a);
}

TEST(Responses, TextCompletionWithLogprobs) {
  Completion c{.text = "Hi there",
               .logprobs = {{1, -0.5f, {{1, -0.5f}, {2, -1.5f}}}, {2, -0.25f, {}}},
               .finish = FinishReason::kLength,
               .prompt_tokens = 3,
               .completion_tokens = 2};
  json r = full_response(context(ApiKind::kCompletion, true), c);
  EXPECT_EQ(r["id"], "cmpl-0000000000000001");
  EXPECT_EQ(r["object"], "text_completion");
  EXPECT_EQ(r["choices"][0]["text"], "Hi there");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  const json& lp = r["choices"][0]["logprobs"];
  EXPECT_EQ(lp["tokens"], json({"Hi", " there"}));
  EXPECT_EQ(lp["token_logprobs"], json({-0.5, -0.25}));
  EXPECT_EQ(lp["text_offset"], json({0, 2}));
  EXPECT_EQ(lp["top_logprobs"][0]["Hi"], -0.5);
  EXPECT_EQ(lp["top_logprobs"][0][" there"], -1.5);

  // An echoed prompt's first token has no logprob (NaN): null, and null top;
  // an impossible token (-inf) is -9999.
  c.logprobs = {{1, std::numeric_limits<float>::quiet_NaN(), {}},
                {2, -std::numeric_limits<float>::infinity(), {{1, -0.5f}}}};
  const json echoed = full_response(context(ApiKind::kCompletion, true), c)["choices"][0]["logprobs"];
  EXPECT_TRUE(echoed["token_logprobs"][0].is_null());
  EXPECT_TRUE(echoed["top_logprobs"][0].is_null());
  EXPECT_EQ(echoed["token_logprobs"][1], -9999.0);
  EXPECT_EQ(echoed["top_logprobs"][1]["Hi"], -0.5);
}

TEST(Responses, ChatLogprobsShape) {
  std::vector<TokenLogprob> lps = {{2, -0.75f, {{2, -0.75f}}}};
  json lp = logprobs_json(context(ApiKind::kChat, true), lps, 0);
  const json& t = lp["content"][0];
  EXPECT_EQ(t["token"], " there");
  EXPECT_EQ(t["logprob"], -0.75);
  EXPECT_EQ(t["bytes"], json({32, 116, 104, 101, 114, 101}));
  EXPECT_EQ(t["top_logprobs"][0]["token"], " there");
}

TEST(Responses, ChatStreamChunks) {
  ResponseContext ctx = context(ApiKind::kChat);
  json first = stream_chunk(ctx, {.role = true}, false);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"], json({{"role", "assistant"}, {"content", ""}}));
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  EXPECT_FALSE(first.contains("usage"));

  json text = stream_chunk(ctx, {.text = "Hi"}, true);
  EXPECT_EQ(text["choices"][0]["delta"], json({{"content", "Hi"}}));
  EXPECT_TRUE(text["usage"].is_null());

  json last = stream_chunk(ctx, {.finish = "stop"}, false);
  EXPECT_EQ(last["choices"][0]["delta"], json::object());
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");

  Completion c{.prompt_tokens = 4, .completion_tokens = 6};
  json usage = usage_chunk(ctx, c);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["total_tokens"], 10);
  EXPECT_EQ(sse_data(json({{"a", 1}})), "data: {\"a\":1}\n\n");
}

TEST(Responses, CompletionStreamChunkOffsets) {
  ResponseContext ctx = context(ApiKind::kCompletion, true);
  std::vector<TokenLogprob> lps = {{2, -1.0f, {}}};
  json chunk = stream_chunk(ctx, {.text = " there", .logprobs = lps, .text_offset = 2}, false);
  EXPECT_EQ(chunk["object"], "text_completion");
  EXPECT_EQ(chunk["choices"][0]["text"], " there");
  EXPECT_EQ(chunk["choices"][0]["logprobs"]["text_offset"], json({2}));
}

TEST(OtherEndpoints, TokenizeDetokenizeTemplate) {
  ApiResult<TokenizeRequest> p = parse_tokenize_request(R"({"prompt":"hello"})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p->prompt, "hello");
  EXPECT_TRUE(p->add_special);
  ApiResult<TokenizeRequest> m = parse_tokenize_request(R"({"messages":[{"role":"user","content":"x"}]})");
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->prompt.has_value());
  EXPECT_FALSE(m->add_special);
  EXPECT_EQ(parse_tokenize_request(R"({})").error().param, "prompt");
  EXPECT_EQ(parse_tokenize_request(R"({"prompt":3})").error().param, "prompt");

  ApiResult<std::vector<int32_t>> ids = parse_detokenize_request(R"({"tokens":[5,6]})");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(parse_detokenize_request(R"({"tokens":"5"})").error().param, "tokens");
  EXPECT_EQ(parse_detokenize_request(R"({"tokens":[1.5]})").error().param, "tokens");

  ApiResult<ChatRenderOptions> t =
      parse_apply_template_request(R"({"messages":[{"role":"user","content":"x"}],"add_generation_prompt":false})");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->add_generation_prompt);
  EXPECT_EQ(parse_apply_template_request(R"({"messages":1})").error().param, "messages");
}

TEST(Models, ListShape) {
  json m = models_json("tiny", 5, 128);
  EXPECT_EQ(m["object"], "list");
  EXPECT_EQ(m["data"][0]["id"], "tiny");
  EXPECT_EQ(m["data"][0]["object"], "model");
  EXPECT_EQ(m["data"][0]["max_model_len"], 128);
  EXPECT_EQ(m["data"][0], model_json("tiny", 5, 128));
  EXPECT_FALSE(model_json("tiny", 5, 0).contains("max_model_len"));  // no engine yet
}

TEST(Models, PercentDecode) {
  EXPECT_EQ(percent_decode("Qwen%2FQwen3-8B"), "Qwen/Qwen3-8B");
  EXPECT_EQ(percent_decode("a%2fb%20c"), "a/b c");
  EXPECT_EQ(percent_decode("plain"), "plain");
  EXPECT_EQ(percent_decode(""), "");
  EXPECT_EQ(percent_decode("%"), std::nullopt);
  EXPECT_EQ(percent_decode("x%2"), std::nullopt);
  EXPECT_EQ(percent_decode("x%zz"), std::nullopt);
}

TEST(Metrics, PrometheusText) {
  ServerCounters counters;
  counters.ready = true;
  counters.http_responses = {{200, 3}, {400, 1}};
  counters.finished = {{"stop", 2}, {"abort", 1}};
  EngineMetrics m;
  m.requests_total = 4;
  m.prompt_tokens_total = 100;
  m.generation_tokens_total = 50;
  m.waiting = 2;
  m.running = 1;
  m.kv_blocks_used = 3;
  m.kv_blocks_total = 12;
  m.ttft_ms_sum = 1500;
  m.ttft_count = 3;
  m.decode_tokens_per_s_last = 42.5;
  std::string text = prometheus_text(&m, counters);
  for (const char* line :
       {"ft_ready 1\n", "ft_http_responses_total{code=\"200\"} 3\n", "ft_http_responses_total{code=\"400\"} 1\n",
        "ft_request_finished_total{reason=\"abort\"} 1\n", "ft_requests_total 4\n", "ft_prompt_tokens_total 100\n",
        "ft_generation_tokens_total 50\n", "ft_requests_waiting 2\n", "ft_requests_running 1\n",
        "ft_kv_blocks_used 3\n", "ft_kv_blocks_total 12\n", "ft_kv_cache_usage_ratio 0.25\n",
        "ft_time_to_first_token_seconds_sum 1.5\n", "ft_time_to_first_token_seconds_count 3\n",
        "ft_decode_tokens_per_second 42.5\n", "# TYPE ft_requests_total counter\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;

  std::string loading = prometheus_text(nullptr, ServerCounters{});
  EXPECT_NE(loading.find("ft_ready 0\n"), std::string::npos);
  EXPECT_EQ(loading.find("ft_requests_total"), std::string::npos);
}

}  // namespace
}  // namespace ft::server
