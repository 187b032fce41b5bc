#include "jit/kernel_spec.h"

#include <gtest/gtest.h>

#include "jit/catalog.h"
#include "jit/kernel_sources.h"

namespace ft {
namespace {

TEST(KernelSpec, GeneratedSourceInstantiatesTheTemplate) {
  KernelSpec s = rmsnorm_spec(*find_target("gfx1150"), DType::kBF16, 4096);
  EXPECT_EQ(s.name, "ft_rmsnorm_bf16_h4096");
  std::string src = generate_source(s);
  EXPECT_NE(src.find("#include \"rmsnorm.hip\""), std::string::npos);
  EXPECT_NE(src.find("extern \"C\" __global__ void FT_LAUNCH_BOUNDS(256) ft_rmsnorm_bf16_h4096("), std::string::npos);
  EXPECT_NE(src.find("ft::rmsnorm<ft::bf16,4096,256,16,false>(args)"), std::string::npos);
  KernelSpec fused = rmsnorm_spec(*find_target("gfx1150"), DType::kBF16, 4096, true);
  EXPECT_EQ(fused.name, "ft_add_rmsnorm_bf16_h4096");
  EXPECT_NE(generate_source(fused).find("ft::rmsnorm<ft::bf16,4096,256,16,true>(args)"), std::string::npos);
  auto headers = included_headers(src);
  ASSERT_TRUE(headers.ok()) << headers.status().to_string();
  ASSERT_EQ(headers->size(), 3u);  // in include order, each once
  EXPECT_EQ((*headers)[0].first, "ft_device.h");
  EXPECT_EQ((*headers)[1].first, "quant_x.h");
  EXPECT_EQ((*headers)[2].first, "rmsnorm.hip");
  KernelSpec q8 = rmsnorm_spec(*find_target("gfx1150"), DType::kBF16, 4096, true, true);
  EXPECT_EQ(q8.name, "ft_add_rmsnorm_bf16_h4096_q8");
  EXPECT_NE(generate_source(q8).find("ft::rmsnorm<ft::bf16,4096,256,16,true,true>(args)"), std::string::npos);
  // `ft-jit warm --arch` covers a quantized model's decode norms: the first
  // layer's plain norm with the q8 output as well as the residual ones.
  size_t found = 0;
  for (const auto& spec : kernel_catalog(*find_target("gfx1150")))
    found += spec.name == "ft_rmsnorm_bf16_h4096_q8" || spec.name == "ft_add_rmsnorm_bf16_h4096_q8";
  EXPECT_EQ(found, 2u);
}

// The quantized GEMV loads its first weights before it waits for the kernel
// before, so its entry must not wait first; every other kernel's entry does.
TEST(KernelSpec, QuantizedGemvWaitsForThePreviousKernelItself) {
  const TargetFacts& t = *find_target("sm_90");
  const std::string quant = generate_source(gemv_spec(t, DType::kBF16, GgmlType::kQ4_K, 4096, 1));
  EXPECT_EQ(quant.find("grid_dependency_begin"), std::string::npos);
  EXPECT_NE(quant.find("ft::gemv_quant<ft::bf16,ft::QuantQ4_K,1,4096,128,4>(args)"), std::string::npos);
  const std::string dense = generate_source(gemv_spec(t, DType::kBF16, GgmlType::kBF16, 4096, 1));
  EXPECT_NE(dense.find("ft::grid_dependency_begin(); ft::gemv_dense<"), std::string::npos);
  // The kernel's own call, after its first weight loads.
  auto src = kernel_source("gemv.hip");
  ASSERT_TRUE(src.ok());
  const size_t body = src->find("FT_DEVICE void gemv_quant_blocks(");
  ASSERT_NE(body, std::string::npos);
  EXPECT_NE(src->find("grid_dependency_begin();", body), std::string::npos);
}

// Two weights of different GGUF types in one launch (Q4_K_M's q|k and v):
// the second type follows the first in the template, the kernel waits itself
// like gemv_quant, and the name tells both types.
TEST(KernelSpec, TwoTypeGemvNamesBothTypesAndWaitsItself) {
  const TargetFacts& t = *find_target("sm_90");
  const KernelSpec s = gemv2_spec(t, DType::kBF16, GgmlType::kQ4_K, GgmlType::kQ6_K, 4096, 1);
  EXPECT_EQ(s.name, "ft_gemv_bf16_q4_k_q6_k_k4096_m1");
  EXPECT_TRUE(s.waits_itself);
  const std::string src = generate_source(s);
  EXPECT_EQ(src.find("grid_dependency_begin"), std::string::npos);
  EXPECT_NE(src.find("ft::gemv_quant2<ft::bf16,ft::QuantQ4_K,ft::QuantQ6_K,1,4096,128,4>(args)"), std::string::npos);
  EXPECT_NE(s.name, gemv2_spec(t, DType::kBF16, GgmlType::kQ6_K, GgmlType::kQ4_K, 4096, 1).name);
}

// Which quantized GEMVs run persistent: one step of K per wave (4 waves of
// 32 lanes: 16 Q4_K / Q6_K blocks, 32 Q4_0 blocks, 64 Q8_0 blocks a round).
TEST(KernelSpec, GemvStepsPerWaveFollowTheBlockLayout) {
  const TargetFacts& t = *find_target("sm_90");
  EXPECT_EQ(gemv_steps_per_wave(t, GgmlType::kQ4_K, 4096), 1);
  EXPECT_EQ(gemv_steps_per_wave(t, GgmlType::kQ6_K, 4096), 1);
  EXPECT_EQ(gemv_steps_per_wave(t, GgmlType::kQ4_K, 12288), 3);
  EXPECT_EQ(gemv_steps_per_wave(t, GgmlType::kQ4_K, 3584), 1);  // 14 blocks: a partial step
  EXPECT_EQ(gemv_steps_per_wave(t, GgmlType::kQ8_0, 4096), 2);
  EXPECT_EQ(gemv_steps_per_wave(t, GgmlType::kQ4_0, 1024), 1);
  EXPECT_EQ(gemv_steps_per_wave(t, GgmlType::kBF16, 4096), 0);
  // Wave 64 (gfx942): twice the blocks per step.
  EXPECT_EQ(gemv_steps_per_wave(*find_target("gfx942"), GgmlType::kQ4_K, 8192), 1);
}

// The host's steps per wave (which decides the persistent grid) from the
// kernel's own constants: each quant struct's kParts and kElems as
// gemv.hip declares them, so a change on one side fails here.
TEST(KernelSpec, GemvStepsPerWaveMatchTheKernelConstants) {
  auto src = kernel_source("gemv.hip");
  ASSERT_TRUE(src.ok());
  auto constant = [&](const std::string& type, const std::string& name) {
    const size_t at = src->find("struct " + type + " {");
    if (at == std::string::npos) return -1;
    const size_t end = src->find("\n};", at);
    const size_t c = src->find(name + " = ", at);
    if (c == std::string::npos || c > end) return -1;
    return std::atoi(src->c_str() + c + name.size() + 3);
  };
  const std::pair<GgmlType, const char*> types[] = {{GgmlType::kQ8_0, "QuantQ8_0"},
                                                    {GgmlType::kQ4_0, "QuantQ4_0"},
                                                    {GgmlType::kQ4_K, "QuantQ4_K"},
                                                    {GgmlType::kQ5_K, "QuantQ5_K"},
                                                    {GgmlType::kQ6_K, "QuantQ6_K"}};
  for (const auto& [type, name] : types) {
    const int parts = constant(name, "kParts"), elems = constant(name, "kElems");
    ASSERT_GT(parts, 0) << name;
    ASSERT_GT(elems, 0) << name;
    for (const char* arch : {"sm_90", "gfx1150", "gfx942"}) {
      const TargetFacts& t = *find_target(arch);
      const int waves = t.tiles.gemv.block_threads / t.wave_size;
      for (int k : catalog_gemv_k_sizes()) {
        if (k % elems != 0) continue;
        const int per_step = t.wave_size / parts;
        const int steps = (k / elems + per_step - 1) / per_step;
        EXPECT_EQ(gemv_steps_per_wave(t, type, k), (steps + waves - 1) / waves) << name << " " << arch << " k " << k;
      }
    }
  }
}

TEST(KernelSpec, AmdFlagsAreExplicitAndNeverNvidiaOnly) {
  for (const auto& t : all_targets()) {
    if (!t.is_amd()) continue;
    auto id = parse_target_id(std::string(t.name));
    ASSERT_TRUE(id.ok());
    for (const char* tc : {"clang", "hiprtc"}) {
      auto flags = compile_flags(*id, tc);
      for (const auto& f : flags) EXPECT_FALSE(is_nvidia_only_flag(f)) << t.name << " " << tc << ": " << f;
      auto has = [&](const std::string& f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); };
      EXPECT_TRUE(has(t.wave_size == 64 ? "-mwavefrontsize64" : "-mno-wavefrontsize64")) << t.name;
      if (t.alt_wave_size) EXPECT_TRUE(has("-mno-cumode") || has("-mcumode")) << t.name;
      EXPECT_TRUE(has("-DFT_AMD=1"));
      EXPECT_TRUE(has("-DFT_WAVE_SIZE=" + std::to_string(t.wave_size)));
      EXPECT_TRUE(has("--offload-arch=" + std::string(t.name)));
    }
  }
  auto h = parse_target_id("sm_90");
  auto nv = compile_flags(*h, "nvrtc");
  EXPECT_NE(std::find(nv.begin(), nv.end(), "--gpu-architecture=sm_90a"), nv.end());
  EXPECT_NE(std::find(nv.begin(), nv.end(), "-DFT_NVIDIA=1"), nv.end());
}

TEST(KernelSpec, TargetIdFeaturesReachTheCompiler) {
  auto id = parse_target_id("gfx90a:xnack-");
  ASSERT_TRUE(id.ok());
  auto flags = compile_flags(*id, "clang");
  EXPECT_NE(std::find(flags.begin(), flags.end(), "--offload-arch=gfx90a:xnack-"), flags.end());
}

TEST(KernelSpec, CatalogNamesAreUniqueAndTilesComeFromTheTarget) {
  for (const auto& t : all_targets()) {
    auto specs = kernel_catalog(t);
    ASSERT_GT(specs.size(), 50u);
    std::set<std::string> names;
    for (const auto& s : specs) {
      EXPECT_TRUE(names.insert(s.name).second) << s.name;
      if (s.family == "activation") EXPECT_EQ(s.block_threads, t.tiles.act.block_threads);
      if (s.family == "rmsnorm") {
        // The tile's threads, doubled for wide rows.
        EXPECT_GE(s.block_threads, t.tiles.norm.block_threads) << s.name;
        EXPECT_EQ(s.block_threads % t.tiles.norm.block_threads, 0) << s.name;
        EXPECT_EQ(s.template_args[2], std::to_string(s.block_threads)) << s.name;
      }
    }
  }
}

TEST(KernelSpec, RopeLanesKeepEachRunToOneVectorLoad) {
  // A lane loads two runs of head_dim / (2 lanes) elements: at most 16 bytes each.
  EXPECT_EQ(rope_lanes_per_head(16, DType::kBF16, 128), 16);  // 8-byte runs
  EXPECT_EQ(rope_lanes_per_head(8, DType::kBF16, 128), 8);    // 16-byte runs
  EXPECT_EQ(rope_lanes_per_head(8, DType::kBF16, 256), 16);
  EXPECT_EQ(rope_lanes_per_head(8, DType::kF32, 256), 32);
  EXPECT_EQ(rope_lanes_per_head(32, DType::kF32, 256), 32);
  EXPECT_EQ(rope_lanes_per_head(16, DType::kF16, 64), 16);  // 4-byte runs: narrower is allowed
  // The spec's block and template follow the lanes; the name tells them apart.
  const TargetFacts& t = *find_target("sm_90");
  const KernelSpec tile = rope_spec(t, DType::kBF16, 128, true, true);
  EXPECT_EQ(tile.block_threads, t.tiles.rope.lanes_per_head * t.tiles.rope.heads_per_block);
  const KernelSpec eight = rope_spec(t, DType::kBF16, 128, true, true, 8);
  EXPECT_EQ(eight.block_threads, 8 * t.tiles.rope.heads_per_block);
  EXPECT_EQ(eight.template_args[4], "8");
  EXPECT_NE(eight.name, tile.name);
  EXPECT_EQ(rope_spec(t, DType::kF32, 256, true, true, 8).block_threads, 32 * t.tiles.rope.heads_per_block);
}

TEST(KernelSpec, WideNormRowsGetMoreThreads) {
  const TargetFacts& t = *find_target("sm_90");
  ASSERT_EQ(t.tiles.norm.block_threads, 256);
  ASSERT_EQ(t.tiles.norm.load_bytes, 16);
  // At most 8 vectors of 16 bytes per thread, up to 1024 threads.
  EXPECT_EQ(rmsnorm_spec(t, DType::kBF16, 4096).block_threads, 256);
  EXPECT_EQ(rmsnorm_spec(t, DType::kBF16, 16384).block_threads, 256);
  EXPECT_EQ(rmsnorm_spec(t, DType::kBF16, 16392).block_threads, 512);
  EXPECT_EQ(rmsnorm_spec(t, DType::kBF16, 20480, true).block_threads, 512);
  EXPECT_EQ(rmsnorm_spec(t, DType::kBF16, 65536).block_threads, 1024);
  EXPECT_EQ(rmsnorm_spec(t, DType::kBF16, 131072).block_threads, 1024);
  EXPECT_EQ(rmsnorm_spec(t, DType::kF32, 8192).block_threads, 256);
  EXPECT_EQ(rmsnorm_spec(t, DType::kF32, 8196).block_threads, 512);
  // The wider blocks up to 512 threads ask for two of them per SM; the tile's own block asks nothing.
  EXPECT_EQ(rmsnorm_spec(t, DType::kBF16, 4096).min_blocks, 0);
  EXPECT_NE(generate_source(rmsnorm_spec(t, DType::kBF16, 4096)).find("FT_LAUNCH_BOUNDS(256) ft_rmsnorm"),
            std::string::npos);
  EXPECT_EQ(rmsnorm_spec(t, DType::kBF16, 20480).min_blocks, 2);
  EXPECT_NE(generate_source(rmsnorm_spec(t, DType::kBF16, 20480)).find("FT_LAUNCH_BOUNDS_MIN(512, 2) ft_rmsnorm"),
            std::string::npos);
  EXPECT_EQ(rmsnorm_spec(t, DType::kBF16, 65536).min_blocks, 0) << "two blocks of 1024 threads: 32 registers";
}

}  // namespace
}  // namespace ft
