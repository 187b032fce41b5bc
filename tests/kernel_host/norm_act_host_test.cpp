// kernel_src/rmsnorm.hip and activation.hip run by the host emulator against
// the CPU references: rows whose vectors do not fill the block's threads (the
// bounds), several vectors per thread, blocks of more than one wave (the
// block sum through shared memory), the fused residual add.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/ops/activation.h"
#include "runtime/ops/norm.h"
#include "tests/kernel_host/host_data.h"
#include "tests/kernel_host/simt.h"

#include "kernel_src/activation.hip"
#include "kernel_src/rmsnorm.hip"

namespace ft {
namespace {

template <typename T, int kHidden, int kThreads, int kLoadBytes, bool kAdd>
double norm_error(int rows, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(rows) * kHidden), res(x.size()), w(kHidden);
  for (float& v : x) v = normal(rng);
  for (float& v : res) v = 2.0f * normal(rng);
  for (float& v : w) v = 1.0f + 0.2f * normal(rng);
  std::vector<T> dx = host::to_device<T>(x, &x), dres = host::to_device<T>(res, &res), dw = host::to_device<T>(w, &w);
  std::vector<T> out(x.size(), from_float<T>(-9.0f)), res_out(x.size(), from_float<T>(-9.0f));
  RmsNormArgs<T> a{};
  a.x = dx.data();
  a.weight = dw.data();
  a.out = out.data();
  a.residual = dres.data();
  a.residual_out = res_out.data();
  a.eps = 1e-6f;
  a.rows = rows;
  EXPECT_EQ(host::launch({rows, 1, 1}, kThreads, [&] { rmsnorm<T, kHidden, kThreads, kLoadBytes, kAdd>(a); }), "");
  std::vector<float> want(x.size()), want_res(x.size());
  RmsNormShape s{.rows = rows, .hidden = kHidden, .eps = a.eps};
  rmsnorm_reference(s, x.data(), w.data(), want.data(), kAdd ? res.data() : nullptr,
                    kAdd ? want_res.data() : nullptr);
  double err = host::max_error(out, want);
  if (kAdd) err = std::max(err, host::max_error(res_out, want_res));
  return err;
}

TEST(RmsNormOnHost, MatchesTheReference) {
  std::mt19937 rng(5);
  // One wave of 16-byte vectors over a row that leaves threads idle.
  EXPECT_LT((norm_error<float, 200, 32, 16, false>(3, rng)), 1e-6);
  // Four waves, two vectors per thread, the second partly past the row.
  EXPECT_LT((norm_error<float, 1000, 128, 16, false>(2, rng)), 1e-6);
  EXPECT_LT((norm_error<float, 1000, 128, 8, true>(2, rng)), 1e-6);
  // bf16 rows of the real width, 256 threads; the residual sum rounds to bf16.
  EXPECT_LT((norm_error<bf16, 4096, 256, 16, false>(2, rng)), 4e-3);
  EXPECT_LT((norm_error<bf16, 4096, 256, 16, true>(2, rng)), 8e-3);
  EXPECT_LT((norm_error<f16, 520, 64, 16, true>(3, rng)), 1e-3);
}

template <typename T, typename Op, int kInter, int kThreads, int kLoadBytes, int kVecsPerThread>
double act_error(GatedAct act, int rows, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> gu(static_cast<size_t>(rows) * 2 * kInter);
  for (float& v : gu) v = normal(rng);
  std::vector<T> dgu = host::to_device<T>(gu, &gu);
  std::vector<T> out(static_cast<size_t>(rows) * kInter, from_float<T>(-9.0f));
  GatedActArgs<T> a{dgu.data(), out.data(), rows};
  constexpr int kPerBlock = kThreads * (kLoadBytes / static_cast<int>(sizeof(T))) * kVecsPerThread;
  EXPECT_EQ(host::launch({(kInter + kPerBlock - 1) / kPerBlock, rows, 1}, kThreads,
                         [&] { gated_act<T, Op, kInter, kThreads, kLoadBytes, kVecsPerThread>(a); }),
            "");
  std::vector<float> want(out.size());
  gated_act_reference(act, rows, kInter, gu.data(), want.data());
  return host::max_error(out, want);
}

// The kernel's exp2/tanh are the host's here; on the GPU they are the fast
// approximations (op_check holds those to the bf16 bar). Bounds: f32 1e-7
// seen; 16-bit outputs round by up to half an ulp of the largest (bf16
// 3.9e-3, f16 4.9e-4), twice where the residual sum rounds first.
TEST(GatedActOnHost, MatchesTheReference) {
  std::mt19937 rng(9);
  EXPECT_LT((act_error<float, SiluOp, 1000, 64, 16, 2>(GatedAct::kSilu, 3, rng)), 1e-6);
  EXPECT_LT((act_error<float, GeluTanhOp, 1000, 64, 16, 2>(GatedAct::kGeluTanh, 3, rng)), 1e-6);
  EXPECT_LT((act_error<bf16, SiluOp, 12288, 256, 16, 2>(GatedAct::kSilu, 2, rng)), 4e-3);
  EXPECT_LT((act_error<f16, GeluTanhOp, 776, 32, 8, 4>(GatedAct::kGeluTanh, 2, rng)), 1e-3);
}

}  // namespace
}  // namespace ft
