#include "runtime/ops/sampling.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

#include "jit/catalog.h"

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

// p and the threshold of one row whose largest logit is `max`.
std::vector<float> probs_and_threshold(int vocab, const float* l, const SamplingRow& p, float max, float* threshold) {
  std::vector<float> prob(static_cast<size_t>(vocab));
  for (int i = 0; i < vocab; ++i) prob[i] = std::exp((l[i] - max) / p.temperature);
  float t = 0.0f;
  if (p.top_k > 0 && p.top_k < vocab) {
    std::vector<float> sorted(prob);
    std::nth_element(sorted.begin(), sorted.begin() + (p.top_k - 1), sorted.end(), std::greater<float>());
    t = sorted[p.top_k - 1];
  }
  if (p.top_p < 1.0f) {
    std::vector<float> kept;
    double mass = 0;
    for (float q : prob)
      if (q >= t) {
        kept.push_back(q);
        mass += q;
      }
    std::sort(kept.begin(), kept.end(), std::greater<float>());
    const double goal = p.top_p * mass;
    double cumulative = 0;
    for (float q : kept) {
      cumulative += q;
      if (cumulative >= goal) {
        t = q;
        break;
      }
    }
  }
  *threshold = std::max(t, p.min_p);
  return prob;
}

}  // namespace

std::vector<float> sampling_probs_reference(int vocab, const float* l, const SamplingRow& p, float* threshold) {
  int32_t best = 0;
  argmax_reference(1, vocab, l, &best);
  return probs_and_threshold(vocab, l, p, l[best], threshold);
}

namespace {

// The algorithm of kernel_src/sampling.hip, in double sums.
int32_t sample_row(int vocab, const float* l, const SamplingRow& p) {
  int32_t best = 0;
  argmax_reference(1, vocab, l, &best);
  if (!(p.temperature > 0)) return best;
  float t = 0.0f;
  const std::vector<float> prob = probs_and_threshold(vocab, l, p, l[best], &t);
  double total = 0;
  for (float q : prob)
    if (q >= t) total += q;
  const double target = sampling_uniform(p.seed, p.step) * total;
  double cumulative = 0;
  int32_t last = best;
  for (int i = 0; i < vocab; ++i) {
    if (prob[i] < t) continue;
    last = i;
    cumulative += prob[i];
    if (cumulative > target) return i;
  }
  return last;
}

}  // namespace

void sample_reference(int rows, int vocab, const float* logits, const SamplingRow* params, int32_t* out_ids) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) out_ids[r] = sample_row(vocab, logits + static_cast<size_t>(r) * vocab, params[r]);
}

namespace {
Status check_sampling(const char* op, DType dtype, int rows, int vocab, int stride, DeviceBuffer logits,
                      DeviceBuffer out_ids) {
  if (rows <= 0 || vocab <= 0 || stride < vocab ||
      logits.bytes < (static_cast<size_t>(rows - 1) * stride + vocab) * dtype_size(dtype) ||
      out_ids.bytes < static_cast<size_t>(rows) * 4)
    return FT_ERROR(ErrorCode::kInvalidArgument, "{}: bad shape [{}, {} of {}] or buffers too small", op, rows, vocab,
                    stride);
  return Status();
}
}  // namespace


namespace {
// Mirrors kernel_src/sampling.hip's SamplingArgs<T>; SamplingRow mirrors SamplingRowDev.
static_assert(sizeof(SamplingRow) == 32, "SamplingRow must match SamplingRowDev");
Status launch_rows(OpContext& ctx, const KernelSpec& spec, int rows, DeviceBuffer logits, DeviceBuffer params,
                   DeviceBuffer out_ids, int vocab, int stride) {
  FT_ASSIGN_OR_RETURN(KernelHandle k, ctx.kernel(spec));
  struct {
    uint64_t logits, params, out;
    int vocab, stride;
  } args{logits.ptr, params.ptr, out_ids.ptr, vocab, stride};
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>(rows);
  dims.block[0] = static_cast<unsigned>(spec.block_threads);
  return ctx.backend().launch(k, dims, &args, sizeof args);
}
}  // namespace

Status argmax(OpContext& ctx, DType dtype, int rows, int vocab, int stride, DeviceBuffer logits,
              DeviceBuffer out_ids) {
  FT_RETURN_IF_ERROR(check_sampling("argmax", dtype, rows, vocab, stride, logits, out_ids));
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("argmax", dtype));
    const float* l = host_ptr<const float>(logits);
    int32_t* out = host_ptr<int32_t>(out_ids);
    for (int r = 0; r < rows; ++r) argmax_reference(1, vocab, l + static_cast<size_t>(r) * stride, out + r);
    return Status();
  }
  return launch_rows(ctx, argmax_spec(ctx.facts(), dtype), rows, logits, DeviceBuffer{}, out_ids, vocab, stride);
}

Status sample(OpContext& ctx, DType dtype, int rows, int vocab, int stride, DeviceBuffer logits, DeviceBuffer params,
              DeviceBuffer out_ids) {
  FT_RETURN_IF_ERROR(check_sampling("sample", dtype, rows, vocab, stride, logits, out_ids));
  if (params.bytes < static_cast<size_t>(rows) * sizeof(SamplingRow))
    return FT_ERROR(ErrorCode::kInvalidArgument, "sample: params hold fewer than {} rows", rows);
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("sample", dtype));
    const float* l = host_ptr<const float>(logits);
    const SamplingRow* p = host_ptr<const SamplingRow>(params);
    int32_t* out = host_ptr<int32_t>(out_ids);
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) sample_reference(1, vocab, l + static_cast<size_t>(r) * stride, p + r, out + r);
    return Status();
  }
  return launch_rows(ctx, sample_spec(ctx.facts(), dtype), rows, logits, params, out_ids, vocab, stride);
}

}  // namespace ft
