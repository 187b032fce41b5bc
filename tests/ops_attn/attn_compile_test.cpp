// The RoPE and attention kernels without a GPU: for every target in
// gfx_targets, a representative subset of the catalog's rope/attention
// kernels (every kernel template, both head dims, small and large groups)
// compiles with no spills, no scratch and a usable occupancy; on NVIDIA the
// prefill runs on mma.sync. A target no installed compiler knows (gfx950
// with clang-19) is skipped, saying so. (The whole catalog, 72 of these per
// target, is `ft-jit warm`'s job: at about a second per compile it is too
// slow for a 2-core CI run across 13 targets; the subset takes ~100 s.)
#include <algorithm>

#include <gtest/gtest.h>

#include "jit/catalog.h"
#include "jit/compile_service.h"
#include "tests/jit/test_util.h"

namespace ft {
namespace {

using testing::bin_dir;

CompileService& service() { return testing::test_compile_service(); }

std::vector<KernelSpec> subset(const TargetFacts& t) {
  return {
      rope_spec(t, DType::kBF16, 128, true, true),
      rope_spec(t, DType::kF16, 64, false, false),
      rope_spec(t, DType::kBF16, 128, true, true, 8),  // 8 lanes per head: 16-byte runs
      attention_decode_spec(t, DType::kBF16, 128, 4, 16),
      attention_decode_spec(t, DType::kBF16, 128, 8, 16),  // the most q registers
      // Blocks of twice the waves, for launches of few (sequence, KV head) pairs.
      attention_decode_spec(t, DType::kBF16, 128, 4, 16, 2 * t.tiles.attn.decode_waves),
      attention_decode_spec(t, DType::kBF16, 128, 8, 16, 2 * t.tiles.attn.decode_waves),
      attention_decode_spec(t, DType::kF16, 64, 7, 16),
      attention_decode_spec(t, DType::kF16, 128, 1, 16),
      attention_prefill_spec(t, DType::kBF16, 128, 4, 16),
      attention_prefill_spec(t, DType::kF16, 64, 7, 16),
      attention_prefill_spec(t, DType::kBF16, 128, 1, 16),
  };
}

class AttnTarget : public ::testing::TestWithParam<std::string> {};

TEST_P(AttnTarget, SubsetCompilesWithoutSpills) {
  auto target = parse_target_id(GetParam());
  ASSERT_TRUE(target.ok());
  const TargetFacts& facts = *target->facts;
  ASSERT_TRUE(valid(facts.tiles.rope) && valid(facts.tiles.attn)) << facts.name;
  // gfx950 is newer than clang-19 and the ROCm 5.2 hipRTC of this machine.
  if (auto tc = service().toolchain_for(*target); !tc.ok()) GTEST_SKIP() << tc.status().to_string();
  for (const KernelSpec& spec : subset(facts)) {
    auto compiled = service().get(spec, *target);
    ASSERT_TRUE(compiled.ok()) << spec.name << " on " << facts.name << ": " << compiled.status().to_string();
    const KernelResources& r = compiled->resources;
    EXPECT_FALSE(r.has_spills()) << spec.name << " on " << facts.name;
    EXPECT_EQ(r.scratch_bytes, 0) << spec.name << " on " << facts.name;
    EXPECT_LE(r.lds_bytes, facts.lds_bytes_per_block) << spec.name;
    const int regs = r.register_count();
    const int waves = occupancy_waves(facts, r, spec.block_threads);
    // Decode is memory-bound: it needs several resident waves per SIMD (warps
    // per SM on NVIDIA) to keep loads in flight.
    const int floor = spec.function == "ft::attention_decode" ? (facts.is_amd() ? facts.max_waves_per_simd / 4 : 8) : 1;
    EXPECT_GE(waves, floor) << spec.name << " on " << facts.name << ": " << regs << " registers, " << r.lds_bytes
                            << " bytes LDS";
    if (!facts.is_amd() && spec.function == "ft::attention_prefill_mma") {
      auto ptx = service().ptx(spec, *target);
      ASSERT_TRUE(ptx.ok()) << ptx.status().to_string();
      EXPECT_NE(ptx->find("mma.sync.aligned.m16n8k16.row.col.f32"), std::string::npos) << spec.name;
      EXPECT_NE(ptx->find("ldmatrix.sync.aligned.m8n8.x4.trans"), std::string::npos) << spec.name;
      // Its registers sit just under occupancy cliffs that small source
      // changes have crossed (168 for three blocks at head_dim 128 on sm_80,
      // 128 for four at head_dim 64 on sm_90): keep the blocks per SM.
      const bool d64 = spec.name.find("_d64_") != std::string::npos;
      const bool g1 = spec.name.find("_g1_") != std::string::npos;
      int want = 1;
      if (facts.name == "sm_80" && !g1) want = 12;
      if (facts.name == "sm_90" && d64) want = 16;
      EXPECT_GE(waves, want) << spec.name << " on " << facts.name << ": " << regs << " registers";
    }
    if (spec.function == "ft::attention_prefill_wgmma") {
      auto ptx = service().ptx(spec, *target);
      ASSERT_TRUE(ptx.ok()) << ptx.status().to_string();
      EXPECT_NE(ptx->find("wgmma.mma_async.sync.aligned.m64n64k16.f32"), std::string::npos) << spec.name;
      // Three blocks per SM (168 registers or fewer): the one-warpgroup block
      // leans on its neighbours to fill the tensor cores during its softmax.
      EXPECT_GE(waves, 12) << spec.name << ": " << regs << " registers";
    }
  }
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const auto& t : all_targets()) names.emplace_back(t.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Targets, AttnTarget, ::testing::ValuesIn(target_names()),
                         [](const auto& info) { return info.param; });

TEST(AttnCatalog, CoversTheModelShapesAndTakesTilesFromTheTarget) {
  for (const auto& t : all_targets()) {
    int rope = 0, decode = 0, prefill = 0;
    for (const auto& s : kernel_catalog(t)) {
      rope += s.function == "ft::rope_qk_norm_kv_write";
      decode += s.function == "ft::attention_decode";
      prefill += s.function == "ft::attention_prefill_mma" || s.function == "ft::attention_prefill_fma" ||
                 s.function == "ft::attention_prefill_wgmma";
    }
    const auto all_shapes = catalog_attention_shapes();
    const int shapes = static_cast<int>(all_shapes.size());
    // Decode also in blocks of twice the waves, for groups of 2 or more.
    const int grouped = static_cast<int>(
        std::count_if(all_shapes.begin(), all_shapes.end(), [](auto shape) { return shape.second >= 2; }));
    EXPECT_EQ(rope, 2 * 2 * 3) << t.name;  // f16/bf16 x head_dim 64/128 x (NORM, NEOX, NEOX + q/k norm)
    EXPECT_EQ(decode, 2 * (shapes + grouped)) << t.name;
    EXPECT_EQ(prefill, 2 * shapes) << t.name;
  }
  // The prefill kernel follows the matrix cores the target has: wgmma on
  // Hopper and mma.sync on other NVIDIA targets for 16-bit types; the f32-FMA
  // kernel on AMD (no WMMA/MFMA attention yet) and for f32, with its tile from
  // the target's AttnTile.
  for (const auto& t : all_targets()) {
    for (DType dt : {DType::kBF16, DType::kF16, DType::kF32}) {
      KernelSpec s = attention_prefill_spec(t, dt, 128, 4, 16);
      const bool mma = !t.is_amd() && dt != DType::kF32;
      const bool wgmma = mma && t.matrix_core == MatrixCore::kWgmma;
      EXPECT_EQ(s.function, wgmma ? "ft::attention_prefill_wgmma"
                            : mma ? "ft::attention_prefill_mma"
                                  : "ft::attention_prefill_fma")
          << t.name;
      // head_dim 64 stays on mma.sync everywhere (attention_wgmma.h says why).
      EXPECT_EQ(attention_prefill_spec(t, dt, 64, 4, 16).function,
                mma ? "ft::attention_prefill_mma" : "ft::attention_prefill_fma")
          << t.name;
      EXPECT_EQ(attention_prefill_rows(t, dt), mma ? 64 : t.tiles.attn.prefill_rows) << t.name;
      if (!mma) {
        EXPECT_EQ(s.block_threads, t.tiles.attn.prefill_rows * t.tiles.attn.prefill_split) << t.name;
        EXPECT_EQ(s.template_args.back(), std::to_string(t.tiles.attn.prefill_keys)) << t.name;
      }
    }
    KernelSpec d = attention_decode_spec(t, DType::kBF16, 128, 4, 16);
    EXPECT_EQ(d.block_threads, t.tiles.attn.decode_waves * t.wave_size) << t.name;
    EXPECT_EQ(d.template_args.back(), std::to_string(t.tiles.attn.decode_partition)) << t.name;
    KernelSpec wide = attention_decode_spec(t, DType::kBF16, 128, 4, 16, 2 * t.tiles.attn.decode_waves);
    EXPECT_EQ(wide.block_threads, 2 * d.block_threads) << t.name;
    EXPECT_NE(wide.name, d.name) << t.name;
    EXPECT_GE(t.tiles.attn.decode_partition, kMinDecodePartition) << "the workspace is sized for the smallest";
  }
  // Llama-3-8B / Qwen3-8B (128, 4), Qwen2.5-7B (128, 7), Qwen3-0.6B (128, 2), Llama-3.2-1B (64, 4).
  for (auto shape : {std::pair{128, 4}, {128, 7}, {128, 2}, {64, 4}, {128, 8}, {128, 1}, {128, 5}})
    EXPECT_NE(std::find(catalog_attention_shapes().begin(), catalog_attention_shapes().end(), shape),
              catalog_attention_shapes().end());
}

}  // namespace
}  // namespace ft
