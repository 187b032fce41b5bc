#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "runtime/engine/sampler.h"
#include "runtime/device/backend.h"
#include "runtime/ops/sampling.h"

namespace ft {
namespace {

int32_t draw(const std::vector<float>& logits, const SamplingParams& p, uint64_t step, uint64_t seed = 7,
             std::vector<int32_t> output = {}) {
  SampleInput in;
  in.logits = logits;
  in.params = &p;
  in.seed = seed;
  in.step = step;
  in.output = output;
  return sample_token(in).token;
}

TEST(Sampler, GreedyAndTopKOneAreArgmax) {
  std::vector<float> l = {0.1f, 2.0f, -1.0f, 1.9f};
  SamplingParams greedy;
  greedy.temperature = 0;
  EXPECT_EQ(draw(l, greedy, 0), 1);
  SamplingParams k1;
  k1.top_k = 1;
  for (uint64_t s = 0; s < 50; ++s) EXPECT_EQ(draw(l, k1, s), 1);
}

TEST(Sampler, SameSeedAndStepGiveTheSameTokenAndFrequenciesFollowTheDistribution) {
  // p = softmax([0, ln 3]) = [0.25, 0.75]
  std::vector<float> l = {0.0f, std::log(3.0f)};
  SamplingParams p;
  int ones = 0;
  const int n = 4000;
  for (int s = 0; s < n; ++s) {
    const int32_t t = draw(l, p, s);
    EXPECT_EQ(t, draw(l, p, s));
    ones += t;
  }
  EXPECT_NEAR(static_cast<double>(ones) / n, 0.75, 0.03);
}

TEST(Sampler, TopPAndMinPCutTheTail) {
  // p ~ [0.6, 0.3, 0.1] (logits ln of those).
  std::vector<float> l = {std::log(0.6f), std::log(0.3f), std::log(0.1f)};
  SamplingParams top_p;
  top_p.top_p = 0.8f;  // keeps 0.6 + 0.3
  SamplingParams min_p;
  min_p.min_p = 0.4f;  // keeps tokens with p >= 0.24
  SamplingParams strict;
  strict.top_p = 0.5f;  // keeps only the first
  bool saw[2][3] = {};
  for (int s = 0; s < 2000; ++s) {
    saw[0][draw(l, top_p, s)] = true;
    saw[1][draw(l, min_p, s)] = true;
    EXPECT_EQ(draw(l, strict, s), 0);
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(saw[i][0]);
    EXPECT_TRUE(saw[i][1]);
    EXPECT_FALSE(saw[i][2]);
  }
}

TEST(Sampler, PenaltiesAndLogprobs) {
  std::vector<float> l = {1.0f, 1.2f, 0.0f};
  SamplingParams p;
  p.temperature = 0;
  EXPECT_EQ(draw(l, p, 0), 1);
  p.frequency_penalty = 0.5f;  // token 1 seen once: 1.2 - 0.5 < 1.0
  EXPECT_EQ(draw(l, p, 0, 7, {1}), 0);
  SamplingParams rep;
  rep.temperature = 0;
  rep.repetition_penalty = 1.5f;  // 1.2 / 1.5 = 0.8 < 1.0
  EXPECT_EQ(draw(l, rep, 0, 7, {1}), 0);

  SamplingParams lp;
  lp.temperature = 0;
  lp.logprobs = 2;
  SampleInput in;
  in.logits = l;
  in.params = &lp;
  SampleOutput out = sample_token(in);
  const double z = std::log(std::exp(1.0) + std::exp(1.2) + std::exp(0.0));
  EXPECT_EQ(out.logprob.token, 1);
  EXPECT_NEAR(out.logprob.logprob, 1.2 - z, 1e-5);
  ASSERT_EQ(out.logprob.top.size(), 2u);
  EXPECT_EQ(out.logprob.top[0].first, 1);
  EXPECT_EQ(out.logprob.top[1].first, 0);
  EXPECT_NEAR(out.logprob.top[1].second, 1.0 - z, 1e-5);
}

TEST(Sampler, LogitBiasBansAndForces) {
  std::vector<float> l = {1.0f, 1.2f, 0.0f};
  SamplingParams ban;
  ban.temperature = 0;
  ban.logit_bias = {{1, -100.0f}};
  EXPECT_EQ(draw(l, ban, 0), 0);
  SamplingParams force;  // sampled at temperature 1: +100 leaves the rest e^-99 behind
  force.logit_bias = {{2, 100.0f}, {7, 100.0f}};  // an id past the vocabulary is ignored here
  for (uint64_t s = 0; s < 200; ++s) EXPECT_EQ(draw(l, force, s), 2);
}

TEST(Sampler, PaddedVocabularyRowsAreNeverDrawn) {
  std::vector<float> l = {0.0f, 0.0f, 50.0f};
  SamplingParams p;
  SampleInput in;
  in.logits = l;
  in.valid_vocab = 2;
  in.params = &p;
  for (uint64_t s = 0; s < 100; ++s) {
    in.step = s;
    EXPECT_LT(sample_token(in).token, 2);
  }
}

// The sampling op (what the executor runs on the device; here its CPU branch)
// on rows with a stride wider than the vocabulary, against the host sampler
// on each row alone: same tokens, and the padding past vocab never drawn.
TEST(Sampler, OpOnStridedRowsMatchesTheHostSampler) {
  auto backend = open_cpu_backend(2);
  ASSERT_TRUE(backend.ok());
  OpContext ctx(backend->get());
  const int rows = 6, vocab = 50, stride = 64;
  std::vector<float> logits(static_cast<size_t>(rows) * stride, 1e4f);  // padding would win any draw
  std::vector<SamplingRow> params(rows);
  uint64_t x = 99;
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < vocab; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      logits[static_cast<size_t>(r) * stride + i] = static_cast<float>((x >> 40) % 1000) / 200.0f;
    }
    params[r] = SamplingRow{.temperature = r == 0 ? 0.0f : 0.7f + 0.1f * r, .top_k = r == 2 ? 5 : 0,
                            .top_p = r == 3 ? 0.8f : 1.0f, .min_p = r == 4 ? 0.1f : 0.0f,
                            .seed = 1000u + r, .step = static_cast<uint64_t>(3 * r)};
  }
  Backend& b = ctx.backend();
  auto dl = b.alloc(logits.size() * 4), dp = b.alloc(rows * sizeof(SamplingRow)), dout = b.alloc(rows * 4),
       dmax = b.alloc(rows * 4);
  ASSERT_TRUE(dl.ok() && dp.ok() && dout.ok() && dmax.ok());
  ASSERT_TRUE(b.copy_to_device(*dl, logits.data(), logits.size() * 4).ok());
  ASSERT_TRUE(b.copy_to_device(*dp, params.data(), rows * sizeof(SamplingRow)).ok());
  ASSERT_TRUE(sample(ctx, DType::kF32, rows, vocab, stride, *dl, *dp, *dout).ok());
  ASSERT_TRUE(argmax(ctx, DType::kF32, rows, vocab, stride, *dl, *dmax).ok());
  std::vector<int32_t> got(rows), best(rows);
  ASSERT_TRUE(b.copy_to_host(got.data(), *dout, rows * 4).ok());
  ASSERT_TRUE(b.copy_to_host(best.data(), *dmax, rows * 4).ok());
  for (int r = 0; r < rows; ++r) {
    const std::vector<float> row(logits.begin() + static_cast<size_t>(r) * stride,
                                 logits.begin() + static_cast<size_t>(r) * stride + vocab);
    SamplingParams p;
    p.temperature = params[r].temperature;
    p.top_k = params[r].top_k;
    p.top_p = params[r].top_p;
    p.min_p = params[r].min_p;
    EXPECT_EQ(got[r], draw(row, p, params[r].step, params[r].seed)) << "row " << r;
    EXPECT_EQ(best[r], std::max_element(row.begin(), row.end()) - row.begin()) << "row " << r;
    EXPECT_LT(got[r], vocab);
  }
  // A stride below vocab, or a buffer too short for it, is refused.
  EXPECT_FALSE(argmax(ctx, DType::kF32, rows, vocab, vocab - 1, *dl, *dmax).ok());
  EXPECT_FALSE(argmax(ctx, DType::kF32, rows + 1, vocab, 4 * stride, *dl, *dmax).ok());
  for (DeviceBuffer d : {*dl, *dp, *dout, *dmax}) b.free(d);
}

TEST(Sampler, UniformIsInRangeAndDependsOnSeedAndStep) {
  EXPECT_NE(sampling_uniform(1, 0), sampling_uniform(2, 0));
  EXPECT_NE(sampling_uniform(1, 0), sampling_uniform(1, 1));
  for (uint64_t i = 0; i < 1000; ++i) {
    const float u = sampling_uniform(i * 31, i);
    EXPECT_GE(u, 0.0f);
    EXPECT_LT(u, 1.0f);
  }
}

}  // namespace
}  // namespace ft
