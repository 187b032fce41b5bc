// matmul's CPU reference against hand-computed blocks of every weight type,
// against quantize -> dequantize round trips, and the CPU backend launcher.
#include <algorithm>
#include <cmath>
#include <string>
#include <cstring>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/device/backend.h"
#include "runtime/model/quant_blocks.h"
#include "runtime/model/quantize.h"
#include "runtime/ops/matmul.h"
#include "tests/gpu/device_data.h"

namespace ft {
namespace {

constexpr uint16_t kHalfOne = 0x3C00, kHalfHalf = 0x3800, kHalfTwo = 0x4000;

template <typename Block>
std::vector<uint8_t> bytes_of(const Block& b) {
  std::vector<uint8_t> out(sizeof(Block));
  std::memcpy(out.data(), &b, sizeof(Block));
  return out;
}

// y for each one-hot x row e_i (i in `at`) and for x = all ones.
std::vector<float> probe(GgmlType type, const std::vector<uint8_t>& w, int k, const std::vector<int>& at) {
  const int m = static_cast<int>(at.size()) + 1;
  std::vector<float> x(static_cast<size_t>(m) * k, 0.0f);
  for (size_t r = 0; r < at.size(); ++r) x[r * k + at[r]] = 1.0f;
  for (int i = 0; i < k; ++i) x[static_cast<size_t>(m - 1) * k + i] = 1.0f;
  std::vector<float> y(m);
  Status s = matmul_reference(type, w.data(), 1, k, x.data(), m, y.data());
  EXPECT_TRUE(s.ok()) << s.to_string();
  return y;
}

TEST(MatmulReference, F32ByHandWithBias) {
  const float w[] = {1, 2, 3, 4, 5, 6};  // n = 2 rows of k = 3
  const float x[] = {1, 0, -1, 2, 1, 0.5f};
  const float bias[] = {0.5f, -1};
  float y[4];
  ASSERT_TRUE(matmul_reference(GgmlType::kF32, reinterpret_cast<const uint8_t*>(w), 2, 3, x, 2, y, bias).ok());
  EXPECT_FLOAT_EQ(y[0], -1.5f);  // 1 - 3 + 0.5
  EXPECT_FLOAT_EQ(y[1], -3.0f);  // 4 - 6 - 1
  EXPECT_FLOAT_EQ(y[2], 6.0f);   // 2 + 2 + 1.5 + 0.5
  EXPECT_FLOAT_EQ(y[3], 15.0f);  // 8 + 5 + 3 - 1
}

TEST(MatmulReference, Bf16AndF16ByHand) {
  const uint16_t bf[] = {0x3F80, 0xC000, 0x4040, 0x3F00};  // 1, -2, 3, 0.5
  const uint16_t hf[] = {0x3C00, 0xC000, 0x4200, 0x3800};  // 1, -2, 3, 0.5
  const float x[] = {1, 1, 1, 2};
  float y;
  ASSERT_TRUE(matmul_reference(GgmlType::kBF16, reinterpret_cast<const uint8_t*>(bf), 1, 4, x, 1, &y).ok());
  EXPECT_FLOAT_EQ(y, 3.0f);
  ASSERT_TRUE(matmul_reference(GgmlType::kF16, reinterpret_cast<const uint8_t*>(hf), 1, 4, x, 1, &y).ok());
  EXPECT_FLOAT_EQ(y, 3.0f);
}

TEST(MatmulReference, Q8_0ByHand) {
  quant::BlockQ8_0 b{};
  b.d = kHalfHalf;
  for (int i = 0; i < 32; ++i) b.qs[i] = static_cast<int8_t>(i - 16);
  auto y = probe(GgmlType::kQ8_0, bytes_of(b), 32, {5, 31});
  EXPECT_FLOAT_EQ(y[0], 0.5f * -11);
  EXPECT_FLOAT_EQ(y[1], 0.5f * 15);
  EXPECT_FLOAT_EQ(y[2], 0.5f * -16);  // sum(i - 16) = 496 - 512
}

TEST(MatmulReference, Q4_0ByHand) {
  quant::BlockQ4_0 b{};
  b.d = kHalfTwo;
  // Element j (< 16) is the low nibble of qs[j], element j + 16 the high one.
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  auto y = probe(GgmlType::kQ4_0, bytes_of(b), 32, {3, 20});
  EXPECT_FLOAT_EQ(y[0], 2.0f * (3 - 8));
  EXPECT_FLOAT_EQ(y[1], 2.0f * ((15 - 4) - 8));
  EXPECT_FLOAT_EQ(y[2], 2.0f * -16);  // (j - 8) + (7 - j) = -1 for each j < 16
}

TEST(MatmulReference, Q4_KByHand) {
  quant::BlockQ4_K b{};
  b.d = kHalfOne;
  b.dmin = kHalfHalf;
  uint8_t sc[8], mn[8];
  for (int j = 0; j < 8; ++j) sc[j] = static_cast<uint8_t>(j + 1), mn[j] = static_cast<uint8_t>(j);
  sc[6] = 45;  // a scale above 15 exercises the split high bits
  mn[7] = 63;
  quant::pack_k_scales(sc, mn, b.scales);
  std::memset(b.qs, 0x21, sizeof b.qs);  // low nibble 1 (sub-blocks 0, 2, 4, 6), high 2 (1, 3, 5, 7)
  auto y = probe(GgmlType::kQ4_K, bytes_of(b), 256, {0, 32, 200, 255});
  EXPECT_FLOAT_EQ(y[0], 1.0f * 1 * 1 - 0.5f * 0);    // sub-block 0
  EXPECT_FLOAT_EQ(y[1], 1.0f * 2 * 2 - 0.5f * 1);    // sub-block 1
  EXPECT_FLOAT_EQ(y[2], 1.0f * 45 * 1 - 0.5f * 6);   // element 200: sub-block 6
  EXPECT_FLOAT_EQ(y[3], 1.0f * 8 * 2 - 0.5f * 63);   // sub-block 7
  // All ones: 32 * sum over sub-blocks of (sc * q - 0.5 * min).
  float total = 0;
  for (int j = 0; j < 8; ++j) total += 32.0f * (sc[j] * (j % 2 ? 2 : 1) - 0.5f * mn[j]);
  EXPECT_FLOAT_EQ(y[4], total);
}

TEST(MatmulReference, Q5_KByHand) {
  quant::BlockQ5_K b{};
  b.d = kHalfOne;
  b.dmin = kHalfHalf;
  uint8_t sc[8] = {1, 2, 3, 4, 5, 6, 7, 8}, mn[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  quant::pack_k_scales(sc, mn, b.scales);
  std::memset(b.qs, 0x21, sizeof b.qs);
  // qh[l] bit s is the fifth bit of element l of sub-block s: set it for
  // sub-block 1 only, and for element 3 of sub-block 0.
  for (int l = 0; l < 32; ++l) b.qh[l] = 0x02;
  b.qh[3] |= 0x01;
  auto y = probe(GgmlType::kQ5_K, bytes_of(b), 256, {0, 3, 40, 64});
  EXPECT_FLOAT_EQ(y[0], 1.0f * 1 * 1 - 0);            // q = 1
  EXPECT_FLOAT_EQ(y[1], 1.0f * 1 * 17 - 0);           // q = 1 + 16
  EXPECT_FLOAT_EQ(y[2], 1.0f * 2 * 18 - 0.5f * 1);    // sub-block 1: q = 2 + 16
  EXPECT_FLOAT_EQ(y[3], 1.0f * 3 * 1 - 0.5f * 2);     // sub-block 2: q = 1
}

TEST(MatmulReference, Q6_KByHand) {
  quant::BlockQ6_K b{};
  b.d = kHalfOne;
  for (auto& s : b.scales) s = 1;
  b.scales[0] = 2, b.scales[2] = 3, b.scales[4] = -1, b.scales[6] = 4;
  // Element 0: low nibble of ql[0] + bits 0-1 of qh[0]; 32: low nibble of
  // ql[32] + bits 2-3; 64: high nibble of ql[0] + bits 4-5; 96: high nibble
  // of ql[32] + bits 6-7. Each minus 32.
  b.ql[0] = 0x35;
  b.qh[0] = 0xE4;  // 3, 2, 1, 0 from the top
  auto y = probe(GgmlType::kQ6_K, bytes_of(b), 256, {0, 32, 64, 96, 200});
  EXPECT_FLOAT_EQ(y[0], 2.0f * (5 - 32));
  EXPECT_FLOAT_EQ(y[1], 3.0f * (16 - 32));
  EXPECT_FLOAT_EQ(y[2], -1.0f * (3 + 32 - 32));
  EXPECT_FLOAT_EQ(y[3], 4.0f * (48 - 32));
  EXPECT_FLOAT_EQ(y[4], 1.0f * -32);  // untouched: q = 0
}

struct RoundTrip {
  GgmlType type;
  float max_err;  // relative L2 of y against the unquantized weight
};

class MatmulRoundTrip : public ::testing::TestWithParam<RoundTrip> {};

// Encoded weights through the reference give exactly what the dequantized
// f32 weights give, and stay within the format's error of the original.
TEST_P(MatmulRoundTrip, MatchesDequantizedAndOriginal) {
  const auto [type, max_err] = GetParam();
  const int n = 7, k = 512, m = 3;
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(n) * k), x(static_cast<size_t>(m) * k), bias(n);
  for (auto& v : w) v = dist(rng);
  for (auto& v : x) v = dist(rng);
  for (auto& v : bias) v = dist(rng);
  const size_t row_bytes = *ggml_bytes(type, k);
  std::vector<uint8_t> q(row_bytes * n);
  std::vector<float> deq(w.size());
  for (int j = 0; j < n; ++j) {
    ASSERT_TRUE(encode_row(type, &w[j * k], k, {&q[j * row_bytes], row_bytes}).ok());
    ASSERT_TRUE(dequantize_row(type, {&q[j * row_bytes], row_bytes}, &deq[j * k], k).ok());
  }
  std::vector<float> y(m * n), y_deq(m * n), y_orig(m * n);
  ASSERT_TRUE(matmul_reference(type, q.data(), n, k, x.data(), m, y.data(), bias.data()).ok());
  ASSERT_TRUE(matmul_reference(GgmlType::kF32, reinterpret_cast<const uint8_t*>(deq.data()), n, k, x.data(), m,
                               y_deq.data(), bias.data()).ok());
  ASSERT_TRUE(matmul_reference(GgmlType::kF32, reinterpret_cast<const uint8_t*>(w.data()), n, k, x.data(), m,
                               y_orig.data(), bias.data()).ok());
  EXPECT_EQ(y, y_deq);
  const double err = gpu::rel_l2(y, y_orig);
  EXPECT_LT(err, max_err);
  EXPECT_GT(err, 0.0f);  // the format does lose something
}

INSTANTIATE_TEST_SUITE_P(Types, MatmulRoundTrip,
                         ::testing::Values(RoundTrip{GgmlType::kF16, 1e-3f}, RoundTrip{GgmlType::kBF16, 5e-3f},
                                           RoundTrip{GgmlType::kQ8_0, 1e-2f}, RoundTrip{GgmlType::kQ4_0, 0.15f},
                                           RoundTrip{GgmlType::kQ4_K, 0.1f}, RoundTrip{GgmlType::kQ5_K, 0.05f},
                                           RoundTrip{GgmlType::kQ6_K, 0.03f}),
                         [](const auto& info) { return std::string(ggml_type_name(info.param.type)); });

// The persistent quantized GEMV's grid: no block without a row group, the
// launch never takes more blocks than its share of the resident ones (one
// more where two weights each round up), and a weight whose kernel is not
// persistent keeps one block per group.
TEST(GemvGrids, EveryGroupIsTakenWithinTheShareOfResidentBlocks) {
  // A 4096-row Q4_K weight at K = 4096 on an H100 (660 resident blocks of
  // 4 rows): two groups a block over 512 blocks, or four over 256 at half.
  EXPECT_EQ(gemv_persistent_grids(1024, 0, true, false, 660, 1).grid, 512);
  EXPECT_EQ(gemv_persistent_grids(1024, 0, true, false, 660, 2).grid, 256);
  EXPECT_EQ(gemv_persistent_grids(1024, 0, true, false, 660, 4).grid, 147);
  // Fewer groups than slots: one block a group.
  EXPECT_EQ(gemv_persistent_grids(300, 0, true, false, 660, 2).grid, 300);
  for (int resident : {1, 7, 132, 660, 1056}) {
    for (int share : {1, 2, 4}) {
      const int slots = std::max(1, resident / share);
      for (int groups : {1, 5, 256, 1024, 1537, 37984}) {
        for (int groups2 : {0, 64, 256}) {
          for (bool p1 : {false, true}) {
            for (bool p2 : {false, true}) {
              const GemvGrids g = gemv_persistent_grids(groups, groups2, p1, p2, resident, share);
              const std::string at = fmt::format("groups {} + {}, persistent {} {}, resident {}, share {}", groups,
                                                 groups2, p1, p2, resident, share);
              if (!p1) {
                EXPECT_EQ(g.grid, groups) << at;
              }
              if (!p2) {
                EXPECT_EQ(g.grid2, groups2) << at;
              }
              ASSERT_GE(g.grid, 1) << at;
              // Block b takes groups b, b + grid, ... (kernel_src/gemv.hip): none is left without one.
              EXPECT_LE(g.grid, groups) << at;
              EXPECT_LE(g.grid2, std::max(groups2, 1)) << at;
              if (p1 && p2 && groups + groups2 > slots) {
                EXPECT_LE(g.grid + g.grid2, slots + 1) << at;
              }
              if (p1 && !p2 && groups > slots) {
                EXPECT_LE(g.grid, slots) << at;
              }
            }
          }
        }
      }
    }
  }
}

TEST(MatmulReference, KOffTheBlockSizeIsAnError) {
  std::vector<uint8_t> w(1024);
  std::vector<float> x(100), y(1);
  Status s = matmul_reference(GgmlType::kQ4_K, w.data(), 1, 100, x.data(), 1, y.data());
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
}

// The CPU backend: matmul() runs the reference on host memory.
class MatmulCpuBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    auto b = open_cpu_backend(2);
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    backend_ = std::move(*b);
  }
  DeviceBuffer put(const void* data, size_t bytes) {
    auto buf = backend_->alloc(bytes);
    EXPECT_TRUE(buf.ok());
    EXPECT_TRUE(backend_->copy_to_device(*buf, data, bytes).ok());
    bufs_.push_back(*buf);
    return *buf;
  }
  void TearDown() override {
    for (auto b : bufs_) backend_->free(b);
  }
  std::unique_ptr<Backend> backend_;
  std::vector<DeviceBuffer> bufs_;
};

TEST_F(MatmulCpuBackend, RunsTheReference) {
  const int n = 9, k = 256, m = 3;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(n) * k), x(static_cast<size_t>(m) * k), bias(n);
  for (auto& v : w) v = dist(rng);
  for (auto& v : x) v = dist(rng);
  for (auto& v : bias) v = dist(rng);
  const size_t row_bytes = *ggml_bytes(GgmlType::kQ6_K, k);
  std::vector<uint8_t> q(row_bytes * n);
  for (int j = 0; j < n; ++j) ASSERT_TRUE(encode_row(GgmlType::kQ6_K, &w[j * k], k, {&q[j * row_bytes], row_bytes}).ok());
  std::vector<float> want(m * n), got(m * n, NAN);
  ASSERT_TRUE(matmul_reference(GgmlType::kQ6_K, q.data(), n, k, x.data(), m, want.data(), bias.data()).ok());

  OpContext ctx(backend_.get());
  WeightView view{GgmlType::kQ6_K, n, k, put(q.data(), q.size())};
  DeviceBuffer dx = put(x.data(), x.size() * 4), db = put(bias.data(), bias.size() * 4);
  DeviceBuffer dy = put(got.data(), got.size() * 4);
  ASSERT_TRUE(matmul(ctx, DType::kF32, view, dx, m, dy, db).ok());
  ASSERT_TRUE(backend_->copy_to_host(got.data(), dy, got.size() * 4).ok());
  EXPECT_EQ(got, want);
}

// matmul_gated on the CPU is the activation into tmp, then the matmul:
// SiLU(gate) * up computed by hand here.
TEST_F(MatmulCpuBackend, GatedIsTheActivationThenTheMatmul) {
  const int n = 5, k = 64, m = 2;
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(n) * k), gate_up(static_cast<size_t>(m) * 2 * k), act(m * k);
  for (auto& v : w) v = dist(rng);
  for (auto& v : gate_up) v = dist(rng);
  for (int r = 0; r < m; ++r)
    for (int i = 0; i < k; ++i) {
      const double g = gate_up[r * 2 * k + i], u = gate_up[r * 2 * k + k + i];
      act[r * k + i] = static_cast<float>(g / (1 + std::exp(-g)) * u);
    }
  std::vector<float> want(m * n), got(m * n, NAN), tmp(m * k, NAN);
  ASSERT_TRUE(matmul_reference(GgmlType::kF32, reinterpret_cast<const uint8_t*>(w.data()), n, k, act.data(), m,
                               want.data()).ok());
  OpContext ctx(backend_.get());
  WeightView view{GgmlType::kF32, n, k, put(w.data(), w.size() * 4)};
  DeviceBuffer dx = put(gate_up.data(), gate_up.size() * 4), dy = put(got.data(), got.size() * 4),
               dt = put(tmp.data(), tmp.size() * 4);
  ASSERT_TRUE(matmul_gated(ctx, DType::kF32, GatedAct::kSilu, view, dx, m, dy, dt).ok());
  ASSERT_TRUE(backend_->copy_to_host(got.data(), dy, got.size() * 4).ok());
  for (int i = 0; i < m * n; ++i) EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << i;
  // tmp too small for [m, k] is an error, not a write past its end.
  EXPECT_EQ(matmul_gated(ctx, DType::kF32, GatedAct::kSilu, view, dx, m, dy, put(tmp.data(), 8)).code(),
            ErrorCode::kInvalidArgument);
}

TEST_F(MatmulCpuBackend, BadInputsAreErrors) {
  std::vector<uint8_t> w(210 * 4);
  std::vector<float> x(512), y(8);
  OpContext ctx(backend_.get());
  DeviceBuffer dw = put(w.data(), w.size()), dx = put(x.data(), x.size() * 4), dy = put(y.data(), y.size() * 4);
  WeightView ok_view{GgmlType::kQ6_K, 2, 512, dw};
  // 16-bit activations do not exist on the CPU backend.
  EXPECT_EQ(matmul(ctx, DType::kBF16, ok_view, dx, 1, dy).code(), ErrorCode::kUnsupported);
  // k = 500 is not a whole number of 256-element blocks.
  EXPECT_EQ(matmul(ctx, DType::kF32, WeightView{GgmlType::kQ6_K, 2, 500, dw}, dx, 1, dy).code(),
            ErrorCode::kInvalidArgument);
  // A row of k = 512 is two 210-byte blocks; the buffer holds 2 rows, not 3.
  EXPECT_EQ(matmul(ctx, DType::kF32, WeightView{GgmlType::kQ6_K, 3, 512, dw}, dx, 1, dy).code(),
            ErrorCode::kInvalidArgument);
  // x holds one row of 512, not two.
  EXPECT_EQ(matmul(ctx, DType::kF32, ok_view, dx, 2, dy).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(matmul(ctx, DType::kF32, ok_view, dx, 0, dy).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(matmul(ctx, DType::kF32, ok_view, dx, 1, dy).ok());
}

}  // namespace
}  // namespace ft
