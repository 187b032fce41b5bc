#include <gtest/gtest.h>

#include <cmath>

#include "runtime/engine/sampler.h"
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
