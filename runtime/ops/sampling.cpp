#include "runtime/ops/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace ft {

float sampling_uniform(uint64_t seed, uint64_t step) {
  uint64_t z = seed ^ (step * 0x9E3779B97F4A7C15ull);
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

void argmax_reference(int rows, int vocab, const float* logits, int32_t* out_ids) {
  for (int r = 0; r < rows; ++r) {
    const float* l = logits + static_cast<size_t>(r) * vocab;
    int best = 0;
    for (int i = 1; i < vocab; ++i)
      if (l[i] > l[best]) best = i;  // the first of equal maxima
    out_ids[r] = best;
  }
}

namespace {

int32_t sample_row(int vocab, const float* l, const SamplingRow& p) {
  if (p.temperature <= 0) {
    int32_t best = 0;
    argmax_reference(1, vocab, l, &best);
    return best;
  }
  // Candidates by probability, most likely first (ties: lower id first).
  std::vector<int32_t> ids(static_cast<size_t>(vocab));
  std::iota(ids.begin(), ids.end(), 0);
  auto by_logit = [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); };
  size_t keep = ids.size();
  if (p.top_k > 0 && static_cast<size_t>(p.top_k) < keep) {
    keep = static_cast<size_t>(p.top_k);
    std::partial_sort(ids.begin(), ids.begin() + keep, ids.end(), by_logit);
    ids.resize(keep);
  } else {
    std::sort(ids.begin(), ids.end(), by_logit);
  }
  std::vector<double> prob(keep);
  const double top = l[ids[0]] / static_cast<double>(p.temperature);
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += (prob[i] = std::exp(l[ids[i]] / static_cast<double>(p.temperature) - top));
  if (p.top_p < 1.0f) {
    double cumulative = 0;
    size_t n = 0;
    while (n < keep && cumulative < p.top_p * total) cumulative += prob[n++];
    keep = std::max<size_t>(n, 1);
  }
  if (p.min_p > 0.0f) {
    size_t n = 1;  // prob[0] is the largest
    while (n < keep && prob[n] >= p.min_p * prob[0]) ++n;
    keep = n;
  }
  total = 0;
  for (size_t i = 0; i < keep; ++i) total += prob[i];
  const double target = sampling_uniform(p.seed, p.step) * total;
  double cumulative = 0;
  for (size_t i = 0; i < keep; ++i) {
    cumulative += prob[i];
    if (target < cumulative) return ids[i];
  }
  return ids[keep - 1];
}

}  // namespace

void sample_reference(int rows, int vocab, const float* logits, const SamplingRow* params, int32_t* out_ids) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) out_ids[r] = sample_row(vocab, logits + static_cast<size_t>(r) * vocab, params[r]);
}

namespace {
Status check_sampling(const char* op, DType dtype, int rows, int vocab, DeviceBuffer logits, DeviceBuffer out_ids) {
  if (rows <= 0 || vocab <= 0 || logits.bytes < static_cast<size_t>(rows) * vocab * dtype_size(dtype) ||
      out_ids.bytes < static_cast<size_t>(rows) * 4)
    return FT_ERROR(ErrorCode::kInvalidArgument, "{}: bad shape [{}, {}] or buffers too small", op, rows, vocab);
  return Status();
}
}  // namespace

Status argmax(OpContext& ctx, DType dtype, int rows, int vocab, DeviceBuffer logits, DeviceBuffer out_ids) {
  FT_RETURN_IF_ERROR(check_sampling("argmax", dtype, rows, vocab, logits, out_ids));
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("argmax", dtype));
    argmax_reference(rows, vocab, host_ptr<const float>(logits), host_ptr<int32_t>(out_ids));
    return Status();
  }
  return FT_ERROR(ErrorCode::kUnsupported, "argmax: no GPU kernel yet");
}

Status sample(OpContext& ctx, DType dtype, int rows, int vocab, DeviceBuffer logits, DeviceBuffer params,
              DeviceBuffer out_ids) {
  FT_RETURN_IF_ERROR(check_sampling("sample", dtype, rows, vocab, logits, out_ids));
  if (params.bytes < static_cast<size_t>(rows) * sizeof(SamplingRow))
    return FT_ERROR(ErrorCode::kInvalidArgument, "sample: params hold fewer than {} rows", rows);
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("sample", dtype));
    sample_reference(rows, vocab, host_ptr<const float>(logits), host_ptr<const SamplingRow>(params),
                     host_ptr<int32_t>(out_ids));
    return Status();
  }
  return FT_ERROR(ErrorCode::kUnsupported, "sample: no GPU kernel yet");
}

}  // namespace ft
