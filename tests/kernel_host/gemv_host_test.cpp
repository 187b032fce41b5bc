// kernel_src/gemv.hip run by the host emulator against matmul_reference: the
// dense GEMV, and the quantized one after quantize_x_q8 (both kernels
// emulated), at several row counts m, row counts n that leave the last block
// partly empty, Q8_0 and Q6_K in the device layout, and grids smaller than
// the row groups (the persistent loop, each block taking several groups).
// The launch follows runtime/ops/matmul.cpp with sm_90's tiles.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gfx_targets/targets.h"
#include "jit/catalog.h"
#include "runtime/model/quantize.h"
#include "runtime/ops/matmul.h"
#include "runtime/ops/weight_layout.h"
#include "tests/gpu/device_data.h"
#include "tests/kernel_host/host_data.h"
#include "tests/kernel_host/simt.h"

#include "kernel_src/gemv.hip"

namespace ft {
namespace {

const TargetFacts& target() { return *find_target("sm_90"); }
constexpr int kThreads = 128;  // sm_90's GEMV block (checked below)

struct Inputs {
  std::vector<uint8_t> w;  // GGUF rows
  std::vector<bf16> x;
  std::vector<float> x_ref;  // x as rounded to bf16
  std::vector<float> want;   // [m, n]
};

Inputs make(GgmlType type, int n, int k, int m, std::mt19937& rng) {
  Inputs in;
  auto w = gpu::random_weight(type, n, k, rng);
  EXPECT_TRUE(w.ok());
  if (w.ok()) in.w = std::move(*w);
  in.x = host::to_device<bf16>(gpu::random_values(static_cast<size_t>(m) * k, DType::kF32, rng), &in.x_ref);
  in.want.resize(static_cast<size_t>(m) * n);
  EXPECT_TRUE(matmul_reference(type, in.w.data(), n, k, in.x_ref.data(), m, in.want.data()).ok());
  return in;
}

// The row groups, and the grid: all of them, or `grid` when the kernel is
// persistent (it then loops over the groups).
int blocks(GgmlType type, int n, int k, int m, int grid) {
  const int rows = gemv_rows_per_block(target(), gemv_m_bucket(m));
  const int groups = (n + rows - 1) / rows;
  const bool persistent = gemv_quantized(type) && gemv_steps_per_wave(target(), type, k) == 1;
  return persistent && grid > 0 ? std::min(grid, groups) : groups;
}

template <typename W, int kM, int kK>
double dense_error(int n, int m, std::mt19937& rng) {
  const Inputs in = make(GgmlType::kBF16, n, kK, m, rng);
  std::vector<bf16> y(static_cast<size_t>(m) * n, from_float<bf16>(-5.0f));
  GemvArgs<bf16> a{};
  a.x = in.x.data();
  a.w = in.w.data();
  a.y = y.data();
  a.n = n;
  a.m = m;
  a.ldy = n;
  a.wblocks = static_cast<long long>(in.w.size() / 2);
  constexpr int kRows = kM <= 2 ? 4 : 2;
  EXPECT_EQ(host::launch({blocks(GgmlType::kBF16, n, kK, m, 0), 1, 1}, kThreads,
                         [&] { gemv_dense<bf16, W, kM, kK, kThreads, kRows>(a); }),
            "");
  return gpu::rel_l2(host::to_floats(y), in.want);
}

template <typename Q, int kM, int kK>
double quant_error(GgmlType type, int n, int m, int grid, std::mt19937& rng) {
  const Inputs in = make(type, n, kK, m, rng);
  std::vector<uint8_t> w = in.w;
  if (has_device_layout(type)) EXPECT_TRUE(to_device_layout(type, in.w, w).ok());
  // x quantized by its own kernel, as quantize_x() launches it.
  std::vector<ft_u8> q8(gemv_quantized_x_bytes(m, kK), 0xEE);
  QuantizeXArgs<bf16> qa{};
  qa.x = in.x.data();
  qa.out = q8.data();
  qa.m = m;
  const int per_thread = 8;  // one 16-byte load of bf16 x each
  EXPECT_EQ(host::launch({(m * (kK / per_thread) + kGemvQuantizeThreads - 1) / kGemvQuantizeThreads, 1, 1},
                         kGemvQuantizeThreads, [&] { quantize_x_q8<bf16, kK, kGemvQuantizeThreads>(qa); }),
            "");
  // The reference on x as quantized: int8 [m, k], then the scales [m, k / 32]
  // (quant_x.h's store_q8_scales), so only the GEMV's own error is left.
  std::vector<float> xq(static_cast<size_t>(m) * kK);
  const float* scales = reinterpret_cast<const float*>(q8.data() + static_cast<size_t>(m) * kK);
  double num = 0, den = 0;
  for (size_t i = 0; i < xq.size(); ++i) {
    xq[i] = static_cast<float>(static_cast<int8_t>(q8[i])) * scales[i / 32];
    num += (xq[i] - in.x_ref[i]) * (xq[i] - in.x_ref[i]);
    den += in.x_ref[i] * in.x_ref[i];
  }
  EXPECT_LT(std::sqrt(num / den), 1e-2) << "x quantized";  // 8 bits: about 0.5%
  std::vector<float> want(static_cast<size_t>(m) * n);
  EXPECT_TRUE(matmul_reference(type, in.w.data(), n, kK, xq.data(), m, want.data()).ok());
  std::vector<bf16> y(static_cast<size_t>(m) * n, from_float<bf16>(-5.0f));
  GemvArgs<bf16> a{};
  a.x = reinterpret_cast<const bf16*>(q8.data());
  a.w = w.data();
  a.y = y.data();
  a.n = n;
  a.m = m;
  a.ldy = n;
  a.wblocks = static_cast<long long>(w.size() / ggml_traits(type).bytes_per_block);
  constexpr int kRows = kM <= 2 ? 4 : 2;
  EXPECT_EQ(host::launch({blocks(type, n, kK, m, grid), 1, 1}, kThreads,
                         [&] { gemv_quant<bf16, Q, kM, kK, kThreads, kRows>(a); }),
            "");
  return gpu::rel_l2(host::to_floats(y), want);
}

TEST(GemvOnHost, TheTileIsWhatTheTestLaunches) {
  EXPECT_EQ(target().tiles.gemv.block_threads, kThreads);
  EXPECT_EQ(gemv_rows_per_block(target(), 1), 4);
  EXPECT_EQ(gemv_rows_per_block(target(), 8), 2);
}

TEST(GemvOnHost, DenseBf16) {
  std::mt19937 rng(21);
  EXPECT_LT((dense_error<bf16, 1, 512>(37, 1, rng)), 5e-3);
  EXPECT_LT((dense_error<bf16, 2, 1024>(20, 2, rng)), 5e-3);
  EXPECT_LT((dense_error<bf16, 8, 256>(13, 5, rng)), 5e-3);
}

// Against the reference on x as the quantize kernel wrote it: what is left
// is the f32 sums and y rounded to bf16 (1.6e-3 seen dense).
TEST(GemvOnHost, QuantizedEveryBlockType) {
  std::mt19937 rng(22);
  EXPECT_LT((quant_error<QuantQ4_K, 1, 512>(GgmlType::kQ4_K, 37, 1, 0, rng)), 5e-3);
  EXPECT_LT((quant_error<QuantQ4_K, 1, 512>(GgmlType::kQ4_K, 37, 1, 3, rng)), 5e-3);  // 3 blocks, 10 groups
  EXPECT_LT((quant_error<QuantQ4_K, 2, 1024>(GgmlType::kQ4_K, 18, 2, 2, rng)), 5e-3);
  EXPECT_LT((quant_error<QuantQ4_K, 8, 256>(GgmlType::kQ4_K, 11, 6, 0, rng)), 5e-3);
  EXPECT_LT((quant_error<QuantQ6_K, 1, 512>(GgmlType::kQ6_K, 29, 1, 4, rng)), 5e-3);
  EXPECT_LT((quant_error<QuantQ5_K, 1, 256>(GgmlType::kQ5_K, 9, 1, 0, rng)), 5e-3);
  EXPECT_LT((quant_error<QuantQ8_0, 1, 256>(GgmlType::kQ8_0, 21, 1, 2, rng)), 5e-3);
  EXPECT_LT((quant_error<QuantQ8_0, 4, 512>(GgmlType::kQ8_0, 10, 3, 0, rng)), 5e-3);
  EXPECT_LT((quant_error<QuantQ4_0, 1, 512>(GgmlType::kQ4_0, 33, 1, 0, rng)), 5e-3);
}

}  // namespace
}  // namespace ft
