// kernel_src/sampling.hip run by the host emulator against the host
// algorithm (runtime/ops/sampling.h): argmax with ties and padding past the
// vocabulary, and seeded draws under every filter, row by row.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/ops/sampling.h"
#include "tests/kernel_host/simt.h"

#include "kernel_src/sampling.hip"

namespace ft {
namespace {

constexpr int kThreads = 128;

std::vector<float> logits(int rows, int stride, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> l(static_cast<size_t>(rows) * stride);
  for (float& v : l) v = normal(rng);
  return l;
}

TEST(SamplingOnHost, ArgmaxTakesTheFirstLargestWithinTheVocabulary) {
  std::mt19937 rng(3);
  const int rows = 5, vocab = 3001, stride = 3008;
  std::vector<float> l = logits(rows, stride, rng);
  l[0 * stride + 17] = l[0 * stride + 2900] = 50.0f;  // a tie: the lower index wins
  l[1 * stride + 3005] = 99.0f;                       // padding past the vocabulary is never taken
  l[2 * stride + 3000] = 40.0f;                       // the last token
  std::vector<int> out(rows, -1);
  SamplingArgs<float> a{l.data(), nullptr, out.data(), vocab, stride};
  ASSERT_EQ(host::launch({rows, 1, 1}, kThreads, [&] { argmax_rows<float, kThreads>(a); }), "");
  std::vector<float> packed(static_cast<size_t>(rows) * vocab);
  for (int r = 0; r < rows; ++r) std::memcpy(&packed[r * vocab], &l[r * stride], vocab * sizeof(float));
  std::vector<int32_t> want(rows);
  argmax_reference(rows, vocab, packed.data(), want.data());
  EXPECT_EQ(out[0], 17);
  EXPECT_EQ(out[2], 3000);
  for (int r = 0; r < rows; ++r) EXPECT_EQ(out[r], want[r]) << "row " << r;
}

TEST(SamplingOnHost, DrawsTheTokenTheHostAlgorithmDraws) {
  std::mt19937 rng(11);
  const int vocab = 2000;
  const SamplingRow kinds[] = {
      {.temperature = 1.0f},
      {.temperature = 0.7f, .top_k = 40},
      {.temperature = 1.3f, .top_p = 0.9f},
      {.temperature = 1.0f, .min_p = 0.05f},
      {.temperature = 0.8f, .top_k = 100, .top_p = 0.8f, .min_p = 0.02f},
      {.temperature = 1.0f, .top_k = 1},
      {.temperature = 0.0f},  // greedy
  };
  std::vector<SamplingRow> params;
  for (int rep = 0; rep < 3; ++rep)
    for (SamplingRow p : kinds) {
      p.seed = 1000 + rep;
      p.step = static_cast<uint64_t>(rep) * 7;
      params.push_back(p);
    }
  const int rows = static_cast<int>(params.size());
  std::vector<float> l = logits(rows, vocab, rng);
  std::vector<SamplingRowDev> dev(rows);
  static_assert(sizeof(SamplingRowDev) == sizeof(SamplingRow));
  std::memcpy(dev.data(), params.data(), rows * sizeof(SamplingRow));
  std::vector<int> out(rows, -1);
  SamplingArgs<float> a{l.data(), dev.data(), out.data(), vocab, vocab};
  ASSERT_EQ(host::launch({rows, 1, 1}, kThreads, [&] { sample_rows<float, kThreads>(a); }), "");
  std::vector<int32_t> want(rows);
  sample_reference(rows, vocab, l.data(), params.data(), want.data());
  for (int r = 0; r < rows; ++r) EXPECT_EQ(out[r], want[r]) << "row " << r;
}

}  // namespace
}  // namespace ft
