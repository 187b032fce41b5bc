// Sampling over rows of logits, one block per row: argmax, and the seeded
// draw with temperature, top-k, top-p and min-p (runtime/ops/sampling.h has
// the semantics; sample_reference is the same algorithm on the host).
//
// With p_i = exp((l_i - max) / T) (so the largest p is 1), each filter is a
// threshold on p: top-k keeps p >= the k-th largest p, top-p keeps p >= the
// largest t whose mass sum(p >= t) reaches top_p of the top-k survivors'
// mass, min-p keeps p >= min_p. Thresholds are found exactly by building the
// float's bit pattern from the top bit down (positive floats order like their
// bits). The draw walks the kept tokens in index order.
#include "ft_device.h"

namespace ft {

struct SamplingRowDev {
  float temperature;
  int top_k;
  float top_p;
  float min_p;
  ft_u64 seed;
  ft_u64 step;
};

template <typename T>
struct SamplingArgs {
  const T* logits;                 // [rows, stride]: the first vocab of each row are drawn from
  const SamplingRowDev* params;    // [rows] (unused by argmax)
  int* out;                        // [rows]
  int vocab;
  int stride;
};

FT_DEVICE float sampling_uniform_dev(ft_u64 seed, ft_u64 step) {
  ft_u64 z = seed ^ (step * 0x9E3779B97F4A7C15ull);
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

// Block-wide max of (value, index) pairs: the larger value, the lower index on ties.
template <int kThreads>
FT_DEVICE void block_argmax(float& v, int& i, float* sv, int* si) {
  sv[thread_x()] = v;
  si[thread_x()] = i;
  sync_threads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (thread_x() < s) {
      const float ov = sv[thread_x() + s];
      const int oi = si[thread_x() + s];
      if (ov > sv[thread_x()] || (ov == sv[thread_x()] && oi < si[thread_x()])) {
        sv[thread_x()] = ov;
        si[thread_x()] = oi;
      }
    }
    sync_threads();
  }
  v = sv[0];
  i = si[0];
  sync_threads();
}

template <typename T, int kThreads>
FT_DEVICE void argmax_rows(const SamplingArgs<T>& a) {
  __shared__ float sv[kThreads];
  __shared__ int si[kThreads];
  const T* l = a.logits + static_cast<long long>(block_x()) * a.stride;
  float best = -3.402823466e38f;
  int best_i = 0x7fffffff;
  for (int i = thread_x(); i < a.vocab; i += kThreads) {
    const float v = to_float(l[i]);
    if (v > best) {  // strided order: the first of equal values in this thread
      best = v;
      best_i = i;
    }
  }
  block_argmax<kThreads>(best, best_i, sv, si);
  if (thread_x() == 0) a.out[block_x()] = best_i;
}

template <typename T, int kThreads>
FT_DEVICE void sample_rows(const SamplingArgs<T>& a) {
  __shared__ float sv[kThreads];
  __shared__ int si[kThreads];
  __shared__ float scratch[(kThreads + FT_WAVE_SIZE - 1) / FT_WAVE_SIZE];
  const int row = block_x();
  const SamplingRowDev p = a.params[row];
  const T* l = a.logits + static_cast<long long>(row) * a.stride;
  const int n = a.vocab;
  float mx = -3.402823466e38f;
  int mx_i = 0x7fffffff;
  for (int i = thread_x(); i < n; i += kThreads) {
    const float v = to_float(l[i]);
    if (v > mx) {
      mx = v;
      mx_i = i;
    }
  }
  block_argmax<kThreads>(mx, mx_i, sv, si);
  if (!(p.temperature > 0.0f)) {
    if (thread_x() == 0) a.out[row] = mx_i;
    return;
  }
  const float inv_t = 1.0f / p.temperature;
  auto prob = [&](int i) { return fast_exp((to_float(l[i]) - mx) * inv_t); };
  // Count and mass of p >= t over the row.
  auto count_at_least = [&](float t) {
    float c = 0.0f;
    for (int i = thread_x(); i < n; i += kThreads) c += prob(i) >= t ? 1.0f : 0.0f;
    const float total = block_sum<kThreads>(c, scratch);
    sync_threads();
    return total;
  };
  auto mass_at_least = [&](float t) {
    float m = 0.0f;
    for (int i = thread_x(); i < n; i += kThreads) {
      const float q = prob(i);
      m += q >= t ? q : 0.0f;
    }
    const float total = block_sum<kThreads>(m, scratch);
    sync_threads();
    return total;
  };
  float t = 0.0f;
  if (p.top_k > 0 && p.top_k < n) {
    // The k-th largest p: the largest bit pattern with at least k values above.
    ft_u32 bits = 0;
    for (int b = 30; b >= 0; --b) {
      const ft_u32 trial = bits | (1u << b);
      if (count_at_least(bits_float(trial)) >= static_cast<float>(p.top_k)) bits = trial;
    }
    t = bits_float(bits);
  }
  if (p.top_p < 1.0f) {
    // The largest v whose mass(p >= v) reaches the goal, built bit by bit
    // from zero (mass is non-increasing in v, so the greedy search is exact);
    // it is at least t, up to float error in the sums, hence the max.
    const float goal = p.top_p * mass_at_least(t);
    ft_u32 bits = 0;
    for (int b = 30; b >= 0; --b) {
      const ft_u32 trial = bits | (1u << b);
      if (bits_float(trial) <= 1.0f && mass_at_least(bits_float(trial)) >= goal) bits = trial;
    }
    if (bits_float(bits) > t) t = bits_float(bits);
  }
  if (p.min_p > t) t = p.min_p;
  // Draw: thread-contiguous chunks so a scan over threads gives index order.
  const int chunk = (n + kThreads - 1) / kThreads;
  const int begin = thread_x() * chunk;
  const int end = begin + chunk < n ? begin + chunk : n;
  float mine = 0.0f;
  for (int i = begin; i < end; ++i) {
    const float q = prob(i);
    mine += q >= t ? q : 0.0f;
  }
  sv[thread_x()] = mine;
  sync_threads();
  if (thread_x() == 0) {
    float total = 0.0f;
    for (int k = 0; k < kThreads; ++k) total += sv[k];
    const float target = sampling_uniform_dev(p.seed, p.step) * total;
    float cum = 0.0f;
    int k = 0;
    while (k < kThreads - 1 && cum + sv[k] <= target) cum += sv[k++];
    si[0] = k;
    sv[0] = cum;  // mass before thread k's chunk (sv[0] read by thread k below after the barrier)
    scratch[0] = target;
  }
  sync_threads();
  if (thread_x() == si[0]) {
    float cum = sv[0];
    const float target = scratch[0];
    int pick = -1, last = -1;
    for (int i = begin; i < end; ++i) {
      const float q = prob(i);
      if (q < t) continue;
      last = i;
      cum += q;
      if (cum > target) {
        pick = i;
        break;
      }
    }
    a.out[row] = pick >= 0 ? pick : (last >= 0 ? last : mx_i);
  }
}

}  // namespace ft
