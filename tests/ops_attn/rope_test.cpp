// RoPE + q/k norm + paged KV write: the reference and rope_inv_freq against
// hand-computed values, and the CPU-backend launcher.
#include <cmath>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/device/backend.h"
#include "runtime/ops/rope.h"

namespace ft {
namespace {

constexpr float kPi = std::numbers::pi_v<float>;
constexpr float kSqrt2 = std::numbers::sqrt2_v<float>;

// One token, one q head, one kv head, head_dim 4: qkv = q | k | v.
struct OneToken {
  RopeShape shape{.n_tokens = 1, .n_heads = 1, .n_kv_heads = 1, .head_dim = 4};
  KvLayout kv{.num_blocks = 2, .block_size = 4, .n_kv_heads = 1, .head_dim = 4};
  std::vector<float> qkv = {1, 2, 3, 4, /*k*/ 5, 6, 7, 8, /*v*/ 9, 10, 11, 12};
  std::vector<float> q_out = std::vector<float>(4, -99.0f);
  std::vector<float> k_cache = std::vector<float>(kv.elements(), -99.0f);
  std::vector<float> v_cache = std::vector<float>(kv.elements(), -99.0f);

  void run(int pos, int slot, const std::vector<float>& inv_freq, const float* q_norm = nullptr,
           const float* k_norm = nullptr) {
    rope_qk_norm_kv_write_reference(shape, qkv.data(), &pos, &slot, inv_freq.data(), q_norm, k_norm, q_out.data(), kv,
                                    k_cache.data(), v_cache.data());
  }
  std::vector<float> k_at(int slot) const { return {k_cache.begin() + slot * 4, k_cache.begin() + slot * 4 + 4}; }
  std::vector<float> v_at(int slot) const { return {v_cache.begin() + slot * 4, v_cache.begin() + slot * 4 + 4}; }
};

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

TEST(RopeReference, PositionZeroIsIdentityAndWritesTheSlot) {
  for (RopeStyle style : {RopeStyle::kNeox, RopeStyle::kNorm}) {
    OneToken t;
    t.shape.style = style;
    t.run(0, 5, {1.0f, 0.5f});
    expect_near(t.q_out, {1, 2, 3, 4});
    expect_near(t.k_at(5), {5, 6, 7, 8});
    expect_near(t.v_at(5), {9, 10, 11, 12});
    expect_near(t.k_at(4), {-99, -99, -99, -99});  // neighbours untouched
  }
}

// Position 1 with inv_freq {pi/2, pi/4}: pair 0 turns by 90 degrees, pair 1 by 45.
TEST(RopeReference, NeoxPairsTheHalves) {
  OneToken t;
  t.shape.style = RopeStyle::kNeox;
  t.run(1, 0, {kPi / 2, kPi / 4});
  // (x0, x2) = (1, 3) -> (-3, 1); (x1, x3) = (2, 4) -> ((2 - 4) / sqrt2, (2 + 4) / sqrt2).
  expect_near(t.q_out, {-3, -2 / kSqrt2, 1, 6 / kSqrt2});
  expect_near(t.k_at(0), {-7, (6 - 8) / kSqrt2, 5, (6 + 8) / kSqrt2});
  expect_near(t.v_at(0), {9, 10, 11, 12});  // v is never rotated
}

TEST(RopeReference, NormPairsNeighbours) {
  OneToken t;
  t.shape.style = RopeStyle::kNorm;
  t.run(1, 0, {kPi / 2, kPi / 4});
  // (x0, x1) = (1, 2) -> (-2, 1); (x2, x3) = (3, 4) -> (-1 / sqrt2, 7 / sqrt2).
  expect_near(t.q_out, {-2, 1, -1 / kSqrt2, 7 / kSqrt2});
}

TEST(RopeReference, AngleIsPositionTimesFrequencyAndMscaleScales) {
  OneToken t;
  t.shape.style = RopeStyle::kNeox;
  t.shape.mscale = 2.0f;
  t.run(3, 0, {kPi / 6, 0.0f});  // 3 * pi/6 = 90 degrees; pair 1 stays
  expect_near(t.q_out, {-6, 4, 2, 8});
}

TEST(RopeReference, QkNormBeforeRotation) {
  OneToken t;
  t.qkv = {3, 4, 0, 0, /*k*/ 0, 0, 2, 2, /*v*/ 1, 1, 1, 1};
  const std::vector<float> wq = {1, 2, 1, 1}, wk = {1, 1, 3, 1};
  t.shape.norm_eps = 0.0f;
  t.run(0, 1, {1.0f, 1.0f}, wq.data(), wk.data());
  // rms(q) = sqrt(25 / 4) = 2.5; rms(k) = sqrt(8 / 4) = sqrt2.
  expect_near(t.q_out, {1.2f, 3.2f, 0, 0});
  expect_near(t.k_at(1), {0, 0, 3 * kSqrt2, kSqrt2});
  expect_near(t.v_at(1), {1, 1, 1, 1});  // v has no norm
}

TEST(RopeReference, NegativeSlotSkipsTheCacheButWritesQ) {
  OneToken t;
  t.run(0, -1, {1.0f, 1.0f});
  expect_near(t.q_out, {1, 2, 3, 4});
  for (float x : t.k_cache) EXPECT_EQ(x, -99.0f);
  for (float x : t.v_cache) EXPECT_EQ(x, -99.0f);
}

TEST(RopeReference, GqaHeadsLandInTheirCacheRows) {
  // 2 q heads, 2 kv heads, head_dim 2, position 0: the write is a copy.
  RopeShape s{.n_tokens = 2, .n_heads = 2, .n_kv_heads = 2, .head_dim = 2};
  KvLayout kv{.num_blocks = 1, .block_size = 4, .n_kv_heads = 2, .head_dim = 2};
  std::vector<float> qkv(2 * 6 * 2);
  for (size_t i = 0; i < qkv.size(); ++i) qkv[i] = static_cast<float>(i);
  std::vector<int32_t> pos = {0, 0}, slots = {3, 1};
  std::vector<float> inv = {1.0f}, q(8), k(kv.elements(), -1.0f), v(kv.elements(), -1.0f);
  rope_qk_norm_kv_write_reference(s, qkv.data(), pos.data(), slots.data(), inv.data(), nullptr, nullptr, q.data(), kv,
                                  k.data(), v.data());
  // token 0: q 0..3, k heads 4..7, v heads 8..11 -> slot 3; token 1: +12 -> slot 1.
  expect_near(q, {0, 1, 2, 3, 12, 13, 14, 15});
  expect_near(k, {-1, -1, -1, -1, 16, 17, 18, 19, -1, -1, -1, -1, 4, 5, 6, 7});
  expect_near(v, {-1, -1, -1, -1, 20, 21, 22, 23, -1, -1, -1, -1, 8, 9, 10, 11});
}

ModelConfig rope_config(float theta, uint32_t head_dim) {
  ModelConfig c;
  c.rope_theta = theta;
  c.head_dim = head_dim;
  c.max_positions = 4096;
  return c;
}

TEST(RopeInvFreq, PlainAndLinear) {
  ModelConfig c = rope_config(10000.0f, 4);
  auto t = rope_inv_freq(c);
  expect_near(t.inv_freq, {1.0f, 0.01f}, 1e-7f);
  EXPECT_EQ(t.mscale, 1.0f);
  c.rope_scaling.type = RopeScalingType::kLinear;
  c.rope_scaling.factor = 4.0f;
  expect_near(rope_inv_freq(c).inv_freq, {0.25f, 0.0025f}, 1e-7f);
}

TEST(RopeInvFreq, Llama3KeepsHighDividesLowAndBlendsTheMiddle) {
  // Frequencies 1 (wavelength 2 pi) and 0.01 (wavelength 628.3).
  ModelConfig c = rope_config(10000.0f, 4);
  RopeScaling& s = c.rope_scaling;
  s.type = RopeScalingType::kLlama3;
  s.factor = 8.0f;
  s.low_freq_factor = 1.0f;
  s.high_freq_factor = 4.0f;
  s.original_max_positions = 100;  // wavelengths: high below 25, low above 100
  s.freq_factors = llama3_freq_factors(s, c.rope_theta, c.head_dim);
  expect_near(rope_inv_freq(c).inv_freq, {1.0f, 0.01f / 8}, 1e-7f);
  s.original_max_positions = 1000;  // 628.3 now between 250 and 1000
  s.freq_factors = llama3_freq_factors(s, c.rope_theta, c.head_dim);
  // smooth = (1000 / 628.3185 - 1) / 3 = 0.197184; 0.01 * ((1 - smooth) / 8 + smooth).
  expect_near(rope_inv_freq(c).inv_freq, {1.0f, 0.00297536f}, 1e-7f);
}

TEST(RopeInvFreq, YarnRampAndAttentionFactor) {
  ModelConfig c = rope_config(10000.0f, 4);
  RopeScaling& s = c.rope_scaling;
  s.type = RopeScalingType::kYarn;
  s.factor = 4.0f;
  s.original_max_positions = 2048;
  // Correction dims: beta_fast 32 -> 0.504 (floor 0), beta_slow 1 -> 1.257 (ceil 2);
  // ramp over i = 0, 1 is 0, 0.5: frequency 0 kept, frequency 1 half interpolated.
  auto t = rope_inv_freq(c);
  expect_near(t.inv_freq, {1.0f, 0.5f * 0.01f / 4 + 0.5f * 0.01f}, 1e-7f);
  EXPECT_NEAR(t.mscale, 0.1f * std::log(4.0f) + 1.0f, 1e-6f);
}

TEST(RopeLauncher, CpuBackendRunsTheReference) {
  auto backend = open_cpu_backend(1);
  ASSERT_TRUE(backend.ok()) << backend.status().to_string();
  Backend& b = **backend;
  OpContext ctx(&b);
  OneToken t;
  auto buf = [&](size_t bytes) {
    auto r = b.alloc(bytes);
    EXPECT_TRUE(r.ok());
    return *r;
  };
  DeviceBuffer qkv = buf(12 * 4), pos = buf(4), slot = buf(4), inv = buf(8), q = buf(16), k = buf(t.kv.elements() * 4),
               v = buf(t.kv.elements() * 4);
  std::vector<float> inv_freq = {kPi / 2, kPi / 4};
  int32_t p = 1, sl = 6;
  ASSERT_TRUE(b.copy_to_device(qkv, t.qkv.data(), 48).ok());
  ASSERT_TRUE(b.copy_to_device(pos, &p, 4).ok());
  ASSERT_TRUE(b.copy_to_device(slot, &sl, 4).ok());
  ASSERT_TRUE(b.copy_to_device(inv, inv_freq.data(), 8).ok());
  Status st = rope_qk_norm_kv_write(ctx, DType::kF32, t.shape, qkv, pos, slot, inv, DeviceBuffer{}, DeviceBuffer{}, q,
                                    t.kv, k, v);
  ASSERT_TRUE(st.ok()) << st.to_string();
  std::vector<float> got(4), got_k(t.kv.elements());
  ASSERT_TRUE(b.copy_to_host(got.data(), q, 16).ok());
  ASSERT_TRUE(b.copy_to_host(got_k.data(), k, got_k.size() * 4).ok());
  expect_near(got, {-3, -2 / kSqrt2, 1, 6 / kSqrt2});
  expect_near({got_k.begin() + 24, got_k.begin() + 28}, {-7, (6 - 8) / kSqrt2, 5, (6 + 8) / kSqrt2});

  EXPECT_EQ(rope_qk_norm_kv_write(ctx, DType::kBF16, t.shape, qkv, pos, slot, inv, {}, {}, q, t.kv, k, v).code(),
            ErrorCode::kUnsupported);
  sl = 8;  // 2 blocks of 4 slots: slot 8 is past the end
  ASSERT_TRUE(b.copy_to_device(slot, &sl, 4).ok());
  EXPECT_EQ(rope_qk_norm_kv_write(ctx, DType::kF32, t.shape, qkv, pos, slot, inv, {}, {}, q, t.kv, k, v).code(),
            ErrorCode::kInvalidArgument);
  RopeShape bad = t.shape;
  bad.n_kv_heads = 2;  // the cache has 1
  EXPECT_EQ(rope_qk_norm_kv_write(ctx, DType::kF32, bad, qkv, pos, slot, inv, {}, {}, q, t.kv, k, v).code(),
            ErrorCode::kInvalidArgument);
  for (DeviceBuffer d : {qkv, pos, slot, inv, q, k, v}) b.free(d);
}

TEST(RopeLauncher, HeadsPerGroupKeepAFullRoundOfBlocks) {
  const RopeTile tile{.lanes_per_head = 32, .heads_per_block = 4, .heads_per_group = 4};
  // Decode: 48 heads of one token never fill 2112 resident blocks: one head per group.
  EXPECT_EQ(rope_heads_per_group(tile, 1, 48, 2112), 1);
  EXPECT_EQ(rope_heads_per_group(tile, 32, 48, 2112), 1);
  // 2 heads per group: 6 blocks per token; 4: 3 blocks per token.
  EXPECT_EQ(rope_heads_per_group(tile, 352, 48, 2112), 2);
  EXPECT_EQ(rope_heads_per_group(tile, 703, 48, 2112), 2);
  EXPECT_EQ(rope_heads_per_group(tile, 704, 48, 2112), 4);
  EXPECT_EQ(rope_heads_per_group(tile, 16384, 48, 2112), 4);
  // A partial last block counts as a block.
  EXPECT_EQ(rope_heads_per_group(tile, 100, 18, 200), 4);
  EXPECT_EQ(rope_heads_per_group(tile, 100, 18, 201), 2);
  // The tile's cap holds.
  EXPECT_EQ(rope_heads_per_group({.lanes_per_head = 32, .heads_per_block = 4, .heads_per_group = 1}, 16384, 48, 1), 1);
  EXPECT_EQ(rope_heads_per_group({.lanes_per_head = 32, .heads_per_block = 2, .heads_per_group = 8}, 16384, 48, 1), 8);
}

}  // namespace
}  // namespace ft
