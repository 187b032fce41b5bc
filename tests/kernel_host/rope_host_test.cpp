// kernel_src/rope.hip run by the host emulator (tests/kernel_host/simt.h)
// against the CPU reference, for every lane-group width, both pair styles,
// with and without the q/k norm, one to four heads per group, and head
// counts whose q/k/v boundaries split a wave between groups on different
// paths (a k head beside a v head, a group past the last head). Built twice:
// wave32 and wave64 (FT_WAVE_SIZE), the groups' place in a wave differing.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/model/model_config.h"
#include "runtime/ops/rope.h"
#include "tests/kernel_host/host_data.h"
#include "tests/kernel_host/simt.h"

#include "kernel_src/rope.hip"

namespace ft {
namespace {

constexpr int kHeadsPerBlock = 2;
constexpr int kMaxPerGroup = 4;

struct Case {
  int head_dim, n_heads, n_kv_heads, n_tokens, per_group;
  bool neox, norm;
};

std::string name(const Case& c, int lanes, const char* type) {
  return fmt::format("{} d{} {}+{}+{} heads x {} tokens, {} per group, {} lanes, {}{}", type, c.head_dim, c.n_heads,
                     c.n_kv_heads, c.n_kv_heads, c.n_tokens, c.per_group, lanes, c.neox ? "neox" : "norm",
                     c.norm ? " + q/k norm" : "");
}

// Runs the kernel at kLanes lanes per head; returns the worst error over q,
// the K and V slots, relative to the largest reference value, and checks that
// every other cache slot kept its poison.
template <typename T, int kHeadDim, int kLanes>
double run_case(const Case& c, std::mt19937& rng) {
  const int heads = c.n_heads + 2 * c.n_kv_heads;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> qkv(static_cast<size_t>(c.n_tokens) * heads * kHeadDim);
  for (float& x : qkv) x = normal(rng);
  std::vector<float> qn(kHeadDim), kn(kHeadDim);
  for (float& x : qn) x = 1.0f + 0.3f * normal(rng);
  for (float& x : kn) x = 1.0f + 0.3f * normal(rng);
  // Positions far apart (the angle's range reduction), slots scattered over a
  // cache of twice the tokens, one token without a slot.
  std::vector<int32_t> pos(c.n_tokens), slots(c.n_tokens);
  for (int t = 0; t < c.n_tokens; ++t) pos[t] = (t * 7919) % 40000;
  const int n_slots = 2 * c.n_tokens;
  std::vector<int32_t> order(n_slots);
  for (int i = 0; i < n_slots; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (int t = 0; t < c.n_tokens; ++t) slots[t] = order[t];
  if (c.n_tokens > 1) slots[1] = -1;
  ModelConfig cfg;
  cfg.head_dim = kHeadDim;
  cfg.rope_theta = 1e6f;
  const std::vector<float> inv_freq = rope_inv_freq(cfg).inv_freq;

  std::vector<float> qkv_r, qn_r, kn_r;
  std::vector<T> d_qkv = host::to_device<T>(qkv, &qkv_r), d_qn = host::to_device<T>(qn, &qn_r),
                 d_kn = host::to_device<T>(kn, &kn_r);
  const T poison = from_float<T>(-77.0f);
  const size_t cache = static_cast<size_t>(n_slots) * c.n_kv_heads * kHeadDim;
  std::vector<T> d_q(static_cast<size_t>(c.n_tokens) * c.n_heads * kHeadDim, poison), d_k(cache, poison),
      d_v(cache, poison);

  RopeArgs<T> a{};
  a.qkv = d_qkv.data();
  a.positions = pos.data();
  a.slots = slots.data();
  a.inv_freq = inv_freq.data();
  a.q_norm = c.norm ? d_qn.data() : nullptr;
  a.k_norm = c.norm ? d_kn.data() : nullptr;
  a.q_out = d_q.data();
  a.k_cache = d_k.data();
  a.v_cache = d_v.data();
  a.mscale = 1.25f;
  a.norm_eps = 1e-6f;
  a.n_tokens = c.n_tokens;
  a.n_heads = c.n_heads;
  a.n_kv_heads = c.n_kv_heads;
  a.heads_per_group = c.per_group;
  const int per_block = kHeadsPerBlock * c.per_group;
  const std::string err = host::launch({c.n_tokens, (heads + per_block - 1) / per_block, 1}, kLanes * kHeadsPerBlock, [&] {
    if (c.neox && c.norm) rope_qk_norm_kv_write<T, kHeadDim, 1, true, kLanes, kHeadsPerBlock, kMaxPerGroup>(a);
    if (c.neox && !c.norm) rope_qk_norm_kv_write<T, kHeadDim, 1, false, kLanes, kHeadsPerBlock, kMaxPerGroup>(a);
    if (!c.neox && c.norm) rope_qk_norm_kv_write<T, kHeadDim, 0, true, kLanes, kHeadsPerBlock, kMaxPerGroup>(a);
    if (!c.neox && !c.norm) rope_qk_norm_kv_write<T, kHeadDim, 0, false, kLanes, kHeadsPerBlock, kMaxPerGroup>(a);
  });
  EXPECT_EQ(err, "");

  RopeShape s{.n_tokens = c.n_tokens, .n_heads = c.n_heads, .n_kv_heads = c.n_kv_heads, .head_dim = kHeadDim,
              .style = c.neox ? RopeStyle::kNeox : RopeStyle::kNorm, .mscale = a.mscale, .norm_eps = a.norm_eps};
  KvLayout kv{.num_blocks = n_slots, .block_size = 1, .n_kv_heads = c.n_kv_heads, .head_dim = kHeadDim};
  std::vector<float> q_ref(d_q.size(), -77.0f), k_ref(cache, -77.0f), v_ref(cache, -77.0f);
  rope_qk_norm_kv_write_reference(s, qkv_r.data(), pos.data(), slots.data(), inv_freq.data(),
                                  c.norm ? qn_r.data() : nullptr, c.norm ? kn_r.data() : nullptr, q_ref.data(), kv,
                                  k_ref.data(), v_ref.data());
  // The untouched slots hold -77 on both sides.
  return std::max({host::max_error(d_q, q_ref), host::max_error(d_k, k_ref), host::max_error(d_v, v_ref)});
}

template <typename T, int kHeadDim, int kLanes>
void run_all(const char* type, double tol) {
  std::mt19937 rng(kLanes * 131 + kHeadDim);
  // 7 q + 1 kv: heads 7 (k) and 8 (v) share a wave at one head per group of
  // 16 lanes or fewer, and groups past the ninth head return at once.
  const Case cases[] = {
      {kHeadDim, 7, 1, 3, 1, true, true},  {kHeadDim, 7, 1, 3, 2, true, true},  {kHeadDim, 7, 1, 3, 4, false, true},
      {kHeadDim, 6, 2, 5, 1, false, false}, {kHeadDim, 12, 4, 2, 4, true, false}, {kHeadDim, 12, 4, 2, 3, true, true},
  };
  for (const Case& c : cases) {
    const double err = run_case<T, kHeadDim, kLanes>(c, rng);
    EXPECT_LT(err, tol) << name(c, kLanes, type);
  }
}

// f32 is exact but for the sin/cos (the kernel's f32 range reduction and
// sinf/cosf against the reference's f64; 2e-8 seen); 16-bit outputs round to
// half an ulp of the largest value at most (bf16 2^-8 = 3.9e-3, f16 2^-11 =
// 4.9e-4; 2e-4 and 2.5e-5 seen).
TEST(RopeOnHost, F32EveryLaneWidth) {
  run_all<float, 128, 32>("f32", 1e-6);
  run_all<float, 128, 16>("f32", 1e-6);
  run_all<float, 64, 8>("f32", 1e-6);
}

TEST(RopeOnHost, Bf16EveryLaneWidth) {
  run_all<bf16, 128, 32>("bf16", 4e-3);
  run_all<bf16, 128, 16>("bf16", 4e-3);
  run_all<bf16, 128, 8>("bf16", 4e-3);
  run_all<bf16, 256, 16>("bf16", 4e-3);
}

TEST(RopeOnHost, F16NarrowHeads) {
  run_all<f16, 64, 16>("f16", 5e-4);
  run_all<f16, 64, 32>("f16", 5e-4);
}

// The emulator itself: a group's shuffles see only their group, and a block
// barrier holds every lane until all arrive.
TEST(HostEmulator, ShufflesStayInTheirGroupAndBarriersHold) {
  std::vector<float> sums(64, -1.0f);
  std::vector<int> seen(64, -1);
  static int arrived;
  arrived = 0;
  const std::string err = host::launch({2, 1, 1}, 32, [&] {
    const int t = thread_x();
    float v = static_cast<float>(t);
    if (t % 8 < 4) {  // groups of 4 lanes, every other group on another path
      for (int m = 2; m > 0; m >>= 1) v += shfl_xor_in<4>(v, m);
    }
    ++arrived;
    sync_threads();
    seen[block_x() * 32 + t] = arrived;
    sums[block_x() * 32 + t] = v;
  });
  ASSERT_EQ(err, "");
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 32; ++t) {
      const int base = t & ~3;
      const float want = t % 8 < 4 ? static_cast<float>(4 * base + 6) : static_cast<float>(t);
      EXPECT_EQ(sums[b * 32 + t], want) << t;
      EXPECT_EQ(seen[b * 32 + t], 32 * (b + 1)) << "a lane passed the barrier before all arrived";
    }
}

}  // namespace
}  // namespace ft
