// Sampling one token from a row of logits on the host: penalties, then the
// seeded draw of runtime/ops/sampling (temperature, top-k, top-p, min-p), and
// log-probabilities of the model's distribution when asked for.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/engine/engine.h"

namespace ft {

struct SampleInput {
  std::span<const float> logits;     // the model's row, vocab wide
  int valid_vocab = 0;               // ids at or above this (padding rows) are never drawn
  const SamplingParams* params = nullptr;
  uint64_t seed = 0;
  uint64_t step = 0;                 // tokens generated so far
  std::span<const int32_t> prompt;
  std::span<const int32_t> output;   // generated so far
  std::span<const uint8_t> allowed;  // if not empty: only ids with allowed[id] != 0 may be drawn
};

struct SampleOutput {
  int32_t token = 0;
  TokenLogprob logprob;              // filled when params->logprobs >= 0
};

SampleOutput sample_token(const SampleInput& in);

// The log-probability of `token` under softmax(logits[0, valid)) (the
// model's own distribution), with the top_n most likely ids and theirs.
TokenLogprob token_logprob(std::span<const float> logits, int valid, int32_t token, int top_n);

}  // namespace ft
