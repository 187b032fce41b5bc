// Gated activations: out[r, i] = act(gate[r, i]) * up[r, i], reading the fused
// gate_up projection output [rows, 2 * inter] (gate first, then up).
//
// Pure streaming: 2 reads and 1 write per element, so the only goals are wide
// loads and enough bytes in flight (kVecsPerThread independent loads per
// thread). grid = (ceil(inter / (kThreads * kPerVec * kVecsPerThread)), rows).
#include "activation_ops.h"

namespace ft {

template <typename T>
struct GatedActArgs {
  const T* gate_up;  // [rows, 2 * inter]
  T* out;            // [rows, inter]
  int rows;
};

template <typename T, typename Op, int kInter, int kThreads, int kLoadBytes, int kVecsPerThread>
FT_DEVICE void gated_act(const GatedActArgs<T>& a) {
  using V = Vec<T, kLoadBytes>;
  constexpr int kPerVec = V::kCount;
  static_assert(kInter % kPerVec == 0, "the intermediate size must be a whole number of vectors");
  constexpr int kVecs = kInter / kPerVec;

  const int row = block_y();
  if (row >= a.rows) return;
  const T* gate = a.gate_up + static_cast<long long>(row) * (2 * kInter);
  const T* up = gate + kInter;
  T* out = a.out + static_cast<long long>(row) * kInter;
  const int first = block_x() * kThreads * kVecsPerThread + thread_x();

  V g[kVecsPerThread], u[kVecsPerThread];
#pragma unroll
  for (int i = 0; i < kVecsPerThread; ++i) {
    const int vi = first + i * kThreads;
    if (vi < kVecs) {
      g[i] = load_vec<T, kLoadBytes>(gate + vi * kPerVec);
      u[i] = load_vec<T, kLoadBytes>(up + vi * kPerVec);
    }
  }
#pragma unroll
  for (int i = 0; i < kVecsPerThread; ++i) {
    const int vi = first + i * kThreads;
    if (vi < kVecs) {
      V o;
#pragma unroll
      for (int j = 0; j < kPerVec; ++j) o.v[j] = from_float<T>(Op::apply(to_float(g[i].v[j])) * to_float(u[i].v[j]));
      store_vec<T, kLoadBytes>(out + vi * kPerVec, o);
    }
  }
}

}  // namespace ft
