#include "runtime/engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "runtime/ops/sampling.h"

namespace ft {

SampleOutput sample_token(const SampleInput& in) {
  const SamplingParams& p = *in.params;
  const int vocab = static_cast<int>(in.logits.size());
  const int valid = std::clamp(in.valid_vocab > 0 ? in.valid_vocab : vocab, 1, vocab);
  std::vector<float> l(in.logits.begin(), in.logits.begin() + valid);

  // Repetition penalty over prompt and output (as HF applies it); presence and
  // frequency penalties over the output (as OpenAI defines them).
  if (p.repetition_penalty != 1.0f) {
    std::vector<bool> seen(valid, false);
    for (auto span : {in.prompt, in.output})
      for (int32_t t : span)
        if (t >= 0 && t < valid) seen[t] = true;
    for (int i = 0; i < valid; ++i)
      if (seen[i]) l[i] = l[i] > 0 ? l[i] / p.repetition_penalty : l[i] * p.repetition_penalty;
  }
  if (p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f) {
    std::unordered_map<int32_t, int> counts;
    for (int32_t t : in.output) ++counts[t];
    for (auto [t, n] : counts)
      if (t >= 0 && t < valid) l[t] -= p.frequency_penalty * n + p.presence_penalty;
  }
  for (auto [t, bias] : p.logit_bias)
    if (t >= 0 && t < valid) l[t] += bias;
  if (!in.allowed.empty()) {
    const int n = std::min(valid, static_cast<int>(in.allowed.size()));
    for (int i = 0; i < n; ++i)
      if (!in.allowed[i]) l[i] = -std::numeric_limits<float>::infinity();
    for (int i = n; i < valid; ++i) l[i] = -std::numeric_limits<float>::infinity();
  }

  SamplingRow row;
  row.temperature = p.temperature;
  row.top_k = p.top_k;
  row.top_p = p.top_p;
  row.min_p = p.min_p;
  row.seed = in.seed;
  row.step = in.step;
  SampleOutput out;
  sample_reference(1, valid, l.data(), &row, &out.token);

  // Log-probabilities of the model's own distribution (before penalties and
  // temperature).
  if (p.logprobs >= 0) out.logprob = token_logprob(in.logits, valid, out.token, p.logprobs);
  return out;
}

TokenLogprob token_logprob(std::span<const float> logits, int valid, int32_t token, int top_n) {
  valid = std::clamp(valid, 1, static_cast<int>(logits.size()));
  const float* raw = logits.data();
  const float max = *std::max_element(raw, raw + valid);
  double sum = 0;
  for (int i = 0; i < valid; ++i) sum += std::exp(static_cast<double>(raw[i]) - max);
  const double log_z = max + std::log(sum);
  TokenLogprob out;
  out.token = token;
  out.logprob = token >= 0 && token < valid ? static_cast<float>(raw[token] - log_z)
                                            : -std::numeric_limits<float>::infinity();
  const int k = std::min(top_n, valid);
  if (k > 0) {
    std::vector<int32_t> ids(valid);
    std::iota(ids.begin(), ids.end(), 0);
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                      [&](int32_t a, int32_t b) { return raw[a] > raw[b] || (raw[a] == raw[b] && a < b); });
    for (int i = 0; i < k; ++i) out.top.emplace_back(ids[i], static_cast<float>(raw[ids[i]] - log_z));
  }
  return out;
}

}  // namespace ft
