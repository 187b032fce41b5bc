// Sampling over rows of logits on the device: greedy argmax, and seeded
// sampling with temperature, top-k, top-p and min-p.
//
// logits are [rows, stride] of `dtype` (stride >= vocab; tokens at or above
// vocab in a row, such as padding, are never drawn); out_ids is int32 [rows]. For sampling,
// each row r has its own SamplingRow (params int32/f32 arrays on the device,
// laid out as `SamplingRow` structs) and draws one uniform number from a
// counter-based generator keyed by (seed, step), so the same seed and step
// give the same token on every backend and batch composition.
//
// With p_i = exp((logit_i - max) / temperature) (the most likely token has
// p = 1), each filter is a threshold on p, applied in vLLM's order: top-k
// keeps p >= the k-th largest p (ties kept); top-p keeps p >= the largest t
// for which the mass of p >= t reaches top_p of the top-k survivors' mass;
// min-p keeps p >= min_p. The draw then walks the kept tokens in index order
// until the running mass passes u * (kept mass). temperature <= 0 is greedy
// (the first maximal logit).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/ops/op_context.h"

namespace ft {

struct SamplingRow {
  float temperature = 1.0f;
  int32_t top_k = 0;     // 0: off
  float top_p = 1.0f;    // 1: off
  float min_p = 0.0f;    // 0: off
  uint64_t seed = 0;
  uint64_t step = 0;     // tokens generated so far in this sequence
};

// The uniform number in [0, 1) a row draws for (seed, step): the same on host
// and device (splitmix64 of seed ^ step * golden ratio, top 24 bits).
float sampling_uniform(uint64_t seed, uint64_t step);

Status argmax(OpContext& ctx, DType dtype, int rows, int vocab, int stride, DeviceBuffer logits, DeviceBuffer out_ids);
// params: SamplingRow[rows] in device memory.
Status sample(OpContext& ctx, DType dtype, int rows, int vocab, int stride, DeviceBuffer logits, DeviceBuffer params,
              DeviceBuffer out_ids);

void argmax_reference(int rows, int vocab, const float* logits, int32_t* out_ids);
// The same algorithm as the kernel; float exp, double sums.
void sample_reference(int rows, int vocab, const float* logits, const SamplingRow* params, int32_t* out_ids);
// The unnormalised p of one row (temperature > 0) and the final threshold:
// tokens with p >= threshold are the ones the draw can pick.
std::vector<float> sampling_probs_reference(int vocab, const float* logits, const SamplingRow& params,
                                            float* threshold);

}  // namespace ft
