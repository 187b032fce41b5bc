// The prefill GEMM kernels (kernel_src/gemm.hip) without a GPU: every target
// in gfx_targets compiles them with no spills and within its LDS, and the
// machine code uses the matrix core that TargetFacts names (v_wmma_ on RDNA3/4,
// v_mfma_ on CDNA, mma.sync in the PTX on sm_80/sm_89, wgmma on sm_90a). Plus the launcher's
// contract on the CPU backend.
#include <unistd.h>

#include <gtest/gtest.h>

#include "jit/catalog.h"
#include "jit/compile_service.h"
#include "runtime/base/files.h"
#include "runtime/device/backend.h"
#include "runtime/ops/gemm.h"
#include "tests/jit/test_util.h"

namespace ft {
namespace {

using testing::bin_dir;
using testing::ScratchDir;

CompileService& service() { return testing::test_compile_service(); }

std::string objdump() {
  for (int v = 22; v >= 17; --v) {
    std::string p = "/usr/bin/llvm-objdump-" + std::to_string(v);
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return ::access("/usr/bin/llvm-objdump", X_OK) == 0 ? "/usr/bin/llvm-objdump" : "";
}

// AMD: the disassembly of the code object; NVIDIA: NVRTC's PTX.
std::string machine_code(const KernelSpec& spec, const TargetId& target, const std::string& code_object) {
  if (!target.facts->is_amd()) {
    auto ptx = service().ptx(spec, target);
    EXPECT_TRUE(ptx.ok()) << ptx.status().to_string();
    return ptx.ok() ? *ptx : "";
  }
  ScratchDir dir;
  const std::string file = dir.path() + "/code.o";
  EXPECT_TRUE(write_file_atomic(file, code_object.data(), code_object.size()).ok());
  auto out = run_process({objdump(), "-d", "--mcpu=" + std::string(target.facts->compile_arch), file}, "");
  EXPECT_TRUE(out.ok() && out->exited_ok()) << spec.name << " " << target.to_string();
  return out.ok() ? out->output : "";
}

// The instruction each matrix-core kind must produce.
const char* expected_instruction(MatrixCore m) {
  switch (m) {
    case MatrixCore::kWmmaGfx11: case MatrixCore::kWmmaGfx12: return "v_wmma_f32_16x16x16_";
    case MatrixCore::kMfma: return "v_mfma_f32_32x32x8";
    case MatrixCore::kMmaSync: return "mma.sync.aligned.m16n8k16.row.col.f32";
    case MatrixCore::kWgmma: return "wgmma.mma_async.sync.aligned.m64n";
    case MatrixCore::kNone: return "";
  }
  return "";
}

class GemmTarget : public ::testing::TestWithParam<const char*> {};

TEST_P(GemmTarget, CompilesWithoutSpillsOnTheMatrixCore) {
  ASSERT_FALSE(objdump().empty()) << "llvm-objdump (llvm-19) is needed to read AMD ISA";
  auto target = parse_target_id(GetParam());
  ASSERT_TRUE(target.ok());
  const TargetFacts& facts = *target->facts;
  ASSERT_TRUE(valid(facts.tiles.gemm)) << facts.name;
  // The large tile, and the few-rows tile where the target has one (the
  // per-warp kernel: mma.sync on every NVIDIA target, Hopper included).
  for (bool small : {false, true}) {
    if (small && facts.tiles.gemm_small.block_m == 0) continue;
    if (small) {
      EXPECT_TRUE(valid(facts.tiles.gemm_small)) << facts.name;
    }
    const MatrixCore core = small && facts.matrix_core == MatrixCore::kWgmma ? MatrixCore::kMmaSync : facts.matrix_core;
    for (DType dt : {DType::kBF16, DType::kF16, DType::kF32}) {
      for (int k : {4096, 12288}) {
        KernelSpec spec = gemm_spec(facts, dt, k, small);
        auto compiled = service().get(spec, *target);
        ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
        const KernelResources& r = compiled->resources;
        EXPECT_FALSE(r.has_spills()) << spec.name << " on " << facts.name << ": vgpr spills " << r.vgpr_spills
                                     << ", spill stores " << r.spill_store_bytes;
        EXPECT_EQ(r.scratch_bytes, 0) << spec.name << " on " << facts.name;
        EXPECT_LE(r.lds_bytes, facts.lds_bytes_per_block) << spec.name << " on " << facts.name;
        const int regs = r.register_count();
        EXPECT_GT(occupancy_waves(facts, r, spec.block_threads), 0)
            << spec.name << " on " << facts.name << " cannot launch: " << regs << " registers, " << r.lds_bytes
            << " bytes LDS";
        if (dt == DType::kF32 || k != 4096) continue;  // the ISA check once per type
        const std::string isa = machine_code(spec, *target, compiled->code_object);
        const std::string want = expected_instruction(core);
        EXPECT_NE(isa.find(want), std::string::npos) << spec.name << " on " << facts.name << " has no " << want;
        if (core == MatrixCore::kMmaSync) {
          EXPECT_NE(isa.find("ldmatrix.sync.aligned.m8n8.x4"), std::string::npos) << facts.name;
          EXPECT_NE(isa.find("cp.async"), std::string::npos) << facts.name;
          EXPECT_NE(isa.find(dt == DType::kBF16 ? ".bf16.bf16.f32" : ".f16.f16.f32"), std::string::npos);
        } else if (core == MatrixCore::kWgmma) {
          // Both operands from shared memory (descriptors), staged by cp.async, fenced for the async proxy.
          EXPECT_NE(isa.find(dt == DType::kBF16 ? ".f32.bf16.bf16" : ".f32.f16.f16"), std::string::npos) << facts.name;
          EXPECT_NE(isa.find("fence.proxy.async.shared::cta"), std::string::npos) << facts.name;
          EXPECT_NE(isa.find("wgmma.wait_group.sync.aligned"), std::string::npos) << facts.name;
        } else {
          // No NVIDIA PTX may reach an AMD build, and the other matrix-core kinds must not appear.
          EXPECT_EQ(isa.find(facts.matrix_core == MatrixCore::kMfma ? "v_wmma" : "v_mfma"), std::string::npos);
        }
      }
    }
  }
}

TEST_P(GemmTarget, DequantKernelsCompileWithoutSpills) {
  auto target = parse_target_id(GetParam());
  ASSERT_TRUE(target.ok());
  // Every weight type once, alternating the output type.
  const std::pair<GgmlType, DType> cases[] = {
      {GgmlType::kF32, DType::kF16},  {GgmlType::kF16, DType::kBF16}, {GgmlType::kBF16, DType::kF16},
      {GgmlType::kQ4_0, DType::kBF16}, {GgmlType::kQ8_0, DType::kF16}, {GgmlType::kQ4_K, DType::kBF16},
      {GgmlType::kQ5_K, DType::kF16}, {GgmlType::kQ6_K, DType::kBF16}};
  for (auto [w, dt] : cases) {
    auto compiled = service().get(gemm_dequant_spec(*target->facts, dt, w), *target);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    EXPECT_FALSE(compiled->resources.has_spills()) << compiled->symbol << " on " << GetParam();
    if (w != GgmlType::kQ4_K) continue;
    // A group's 32 outputs leave in 16-byte stores, not 32 narrow ones (at
    // 2 bytes a store the pass ran at a twentieth of the copy bandwidth).
    const KernelSpec spec = gemm_dequant_spec(*target->facts, dt, w);
    const std::string isa = machine_code(spec, *target, compiled->code_object);
    if (target->facts->is_amd()) {
      EXPECT_TRUE(isa.find("global_store_b128") != std::string::npos || isa.find("global_store_dwordx4") != std::string::npos)
          << spec.name << " on " << GetParam();
      EXPECT_EQ(isa.find("global_store_b16"), std::string::npos) << spec.name << " on " << GetParam();
      EXPECT_EQ(isa.find("global_store_short"), std::string::npos) << spec.name << " on " << GetParam();
    } else {
      EXPECT_NE(isa.find("st.global.v4"), std::string::npos) << spec.name << " on " << GetParam();
      EXPECT_EQ(isa.find("st.global.u16"), std::string::npos) << spec.name << " on " << GetParam();
      EXPECT_EQ(isa.find("st.global.b16"), std::string::npos) << spec.name << " on " << GetParam();
    }
  }
}

TEST_P(GemmTarget, FewRowQuantizedKernelsDecodeWithWideLoadsOnTheMatrixCore) {
  auto target = parse_target_id(GetParam());
  ASSERT_TRUE(target.ok());
  const TargetFacts& facts = *target->facts;
  // The few-row kernel is the per-wave one: mma.sync on Hopper as elsewhere.
  const MatrixCore core = facts.matrix_core == MatrixCore::kWgmma ? MatrixCore::kMmaSync : facts.matrix_core;
  const std::pair<GgmlType, DType> cases[] = {{GgmlType::kQ4_K, DType::kBF16}, {GgmlType::kQ4_K, DType::kF16},
                                              {GgmlType::kQ6_K, DType::kBF16}, {GgmlType::kQ5_K, DType::kF16},
                                              {GgmlType::kQ8_0, DType::kBF16}, {GgmlType::kQ4_0, DType::kF16}};
  for (auto [w, dt] : cases) {
    const KernelSpec spec = gemm_q_spec(facts, dt, w);
    auto compiled = service().get(spec, *target);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const KernelResources& r = compiled->resources;
    EXPECT_FALSE(r.has_spills()) << spec.name << " on " << facts.name;
    EXPECT_EQ(r.scratch_bytes, 0) << spec.name << " on " << facts.name;
    EXPECT_LE(r.lds_bytes, facts.lds_bytes_per_block) << spec.name << " on " << facts.name;
    EXPECT_GT(occupancy_waves(facts, r, spec.block_threads), 0) << spec.name << " on " << facts.name;
    if (w != GgmlType::kQ4_K) continue;
    const std::string isa = machine_code(spec, *target, compiled->code_object);
    EXPECT_NE(isa.find(expected_instruction(core)), std::string::npos) << spec.name << " on " << facts.name;
    // A Q4_K group is 3 wide loads (d, dmin and scales; two 16-byte runs of
    // nibbles), no byte loads: bytewise it was 46 loads a group.
    if (facts.is_amd()) {
      EXPECT_TRUE(isa.find("global_load_b128") != std::string::npos ||
                  isa.find("global_load_dwordx4") != std::string::npos)
          << spec.name << " on " << facts.name;
      EXPECT_EQ(isa.find("global_load_u8"), std::string::npos) << spec.name << " on " << facts.name;
      EXPECT_EQ(isa.find("global_load_ubyte"), std::string::npos) << spec.name << " on " << facts.name;
    } else {
      EXPECT_NE(isa.find("ld.global.v4.u32"), std::string::npos) << spec.name << " on " << facts.name;
      EXPECT_EQ(isa.find("ld.global.u8"), std::string::npos) << spec.name << " on " << facts.name;
    }
  }
  auto reduce = service().get(gemm_q_reduce_spec(DType::kBF16), *target);
  ASSERT_TRUE(reduce.ok()) << reduce.status().to_string();
  EXPECT_FALSE(reduce->resources.has_spills());
}

// NVIDIA's register-fragment kernel: every type and x tile compiles without
// spills, with x's three step buffers its only LDS and one barrier a step,
// decodes W with wide loads into packed pairs and multiplies on mma.sync; AMD targets do not
// have it (gemm_q serves them).
TEST_P(GemmTarget, RegisterFragmentQuantizedKernelsOnNvidiaOnly) {
  auto target = parse_target_id(GetParam());
  ASSERT_TRUE(target.ok());
  const TargetFacts& facts = *target->facts;
  for (GgmlType w : {GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kQ8_0, GgmlType::kQ4_0}) {
    const bool expect = !facts.is_amd() && w != GgmlType::kQ4_0;
    EXPECT_EQ(gemm_qr_supported(facts, w), expect) << ggml_traits(w).name << " on " << facts.name;
    if (!expect) continue;
    for (int x_tiles : {2, 4}) {
      const KernelSpec spec = gemm_qr_spec(facts, w == GgmlType::kQ5_K ? DType::kF16 : DType::kBF16, w, x_tiles);
      auto compiled = service().get(spec, *target);
      ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
      const KernelResources& r = compiled->resources;
      EXPECT_FALSE(r.has_spills()) << spec.name << " on " << facts.name;
      EXPECT_EQ(r.scratch_bytes, 0) << spec.name << " on " << facts.name;
      // Three buffers of 8 * x_tiles rows of 256 elements (2 bytes each).
      EXPECT_EQ(r.lds_bytes, 3 * 8 * x_tiles * 256 * 2) << spec.name << " on " << facts.name;
      EXPECT_GT(occupancy_waves(facts, r, spec.block_threads), 0) << spec.name << " on " << facts.name;
      const std::string isa = machine_code(spec, *target, compiled->code_object);
      EXPECT_NE(isa.find(expected_instruction(MatrixCore::kMmaSync)), std::string::npos) << spec.name;
      EXPECT_EQ(isa.find("ld.global.u8"), std::string::npos) << spec.name << " on " << facts.name;
      EXPECT_NE(isa.find("cp.async"), std::string::npos) << spec.name << " on " << facts.name;
      // K-quant elements become T pairs by a byte permute and packed fmas
      // (Q8_0's bytes, to 255, exceed bf16's magic: the f32 path).
      if (w != GgmlType::kQ8_0) {
        EXPECT_NE(isa.find("prmt.b32"), std::string::npos) << spec.name << " on " << facts.name;
        EXPECT_NE(isa.find(w == GgmlType::kQ5_K ? "fma.rn.f16x2" : "fma.rn.bf16x2"), std::string::npos)
            << spec.name << " on " << facts.name;
      }
    }
  }
}

// Where gemm_q hands the product to gemm_qr (no FT_GEMM_QR set, as in CI):
// NVIDIA only, every type but Q4_0, the 16-row x tile up to 16 rows and the
// 32-row tile above.
TEST(GemmQr, RouteByTypeAndRows) {
  ASSERT_EQ(std::getenv("FT_GEMM_QR"), nullptr);
  const TargetFacts& sm90 = *parse_target_id("sm_90")->facts;
  const TargetFacts& sm80 = *parse_target_id("sm_80")->facts;
  const TargetFacts& gfx = *parse_target_id("gfx1150")->facts;
  EXPECT_EQ(gemm_qr_x_rows(sm90, GgmlType::kQ4_K, 9), 16);
  EXPECT_EQ(gemm_qr_x_rows(sm80, GgmlType::kQ8_0, 16), 16);
  EXPECT_EQ(gemm_qr_x_rows(sm90, GgmlType::kQ4_K, 17), 32);
  EXPECT_EQ(gemm_qr_x_rows(sm90, GgmlType::kQ8_0, 64), 32);
  EXPECT_EQ(gemm_qr_x_rows(sm90, GgmlType::kQ6_K, 32), 32);
  EXPECT_EQ(gemm_qr_x_rows(sm90, GgmlType::kQ5_K, 12), 16);
  EXPECT_EQ(gemm_qr_x_rows(sm90, GgmlType::kQ4_0, 12), 0);
  EXPECT_EQ(gemm_qr_x_rows(gfx, GgmlType::kQ4_K, 12), 0);
  // The few-row path's reach: 128 rows where gemm_qr serves the type, else
  // gemm_q's 64 (32 for Q6_K).
  EXPECT_EQ(gemm_q_max_rows(sm90, GgmlType::kQ6_K), 128);
  EXPECT_EQ(gemm_q_max_rows(sm80, GgmlType::kQ4_K), 128);
  EXPECT_EQ(gemm_q_max_rows(sm90, GgmlType::kQ4_0), 64);
  EXPECT_EQ(gemm_q_max_rows(gfx, GgmlType::kQ6_K), 32);
  EXPECT_EQ(gemm_q_max_rows(gfx, GgmlType::kQ8_0), 64);
}

// gemm_qr's K splits (no FT_GEMM_QR_SPLITS, as in CI) on an H100's 132 SMs:
// the 32-row tile keeps 3 blocks per SM (396 on the device), the 16-row
// tile 4 (528), Q8_0's 32-row tile 2 (264). Each case below was timed with
// every listed split count (bench/RESULTS.md, twenty-first session).
TEST(GemmQr, SplitsFillWholeWaves) {
  ASSERT_EQ(std::getenv("FT_GEMM_QR_SPLITS"), nullptr);
  // Q4_K down (K = 12288: 48 steps), 32 rows: 64 blocks; 6 splits fill one
  // wave (384 blocks) where 16 take 2.6 (31.0 against 33.4 us).
  EXPECT_EQ(gemm_qr_splits(64, 48, 396), 6);
  // Q4_K o_proj (K = 4096: 16 steps), 32 rows: 4 splits fill 65% of a
  // wave (16.4 us), 8 fill it (13.7).
  EXPECT_EQ(gemm_qr_splits(64, 16, 396), 8);
  // gate|up, 16 rows: 192 blocks; 2 splits fill 73% (33.7 us), 4 and 8
  // more than a wave (26.6, 27.2).
  EXPECT_EQ(gemm_qr_splits(192, 16, 528), 8);
  // Q8_0 down, 64 rows: 128 blocks; 2 splits fill 97% of a wave (61.4 us
  // against 66.4 and 65.8 with 3 and 8).
  EXPECT_EQ(gemm_qr_splits(128, 48, 264), 2);
  // Enough blocks already: no split.
  EXPECT_EQ(gemm_qr_splits(768, 16, 396), 1);
  // Every split at least 2 steps: K = 256 and 512 never split.
  EXPECT_EQ(gemm_qr_splits(1, 1, 528), 1);
  EXPECT_EQ(gemm_qr_splits(1, 2, 528), 1);
  // Short of 90% of a wave at any count: the most splits, at most 16 and
  // dividing the steps.
  EXPECT_EQ(gemm_qr_splits(1, 64, 528), 16);
  EXPECT_EQ(gemm_qr_splits(1, 30, 528), 15);
  // Residency unknown (a planning pass): counted as one block.
  EXPECT_EQ(gemm_qr_splits(64, 48, 0), 1);
}

// Every target the project ships except gfx950, which clang-19 and the
// ROCm 5.2 hipRTC on the CI machine do not know (checked below).
INSTANTIATE_TEST_SUITE_P(AllTargets, GemmTarget,
                         ::testing::Values("gfx1150", "gfx1151", "gfx1100", "gfx1101", "gfx1102", "gfx1200",
                                           "gfx1201", "gfx90a", "gfx942", "sm_80", "sm_89", "sm_90"));

TEST(GemmTargets, EveryTargetIsCoveredOrHasNoToolchain) {
  for (const auto& t : all_targets()) {
    if (t.name != "gfx950") continue;
    auto id = parse_target_id(t.name);
    ASSERT_TRUE(id.ok());
    auto tc = service().toolchain_for(*id);
    if (!tc.ok()) continue;  // no compiler here knows gfx950: nothing to check
    auto compiled = service().get(gemm_spec(t, DType::kBF16, 4096), *id);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    EXPECT_FALSE(compiled->resources.has_spills());
  }
}

TEST(GemmCatalog, HasThe8BShapesForBothSixteenBitTypes) {
  const TargetFacts& t = *find_target("gfx1151");
  auto specs = kernel_catalog(t);
  for (const char* name : {"ft_gemm_bf16_k4096", "ft_gemm_bf16_k12288", "ft_gemm_f16_k4096", "ft_gemm_f16_k12288",
                           "ft_gemm_dequant_q4_k_to_bf16", "ft_gemm_dequant_q8_0_to_f16"}) {
    bool found = false;
    for (const auto& s : specs) found = found || s.name == name;
    EXPECT_TRUE(found) << name;
  }
}

TEST(GemmCatalog, TileArgumentsComeFromTheTarget) {
  for (const char* name : {"gfx1151", "gfx942", "sm_90"}) {
    const TargetFacts& t = *find_target(name);
    KernelSpec s = gemm_spec(t, DType::kBF16, 4096);
    const GemmTile& g = t.tiles.gemm;
    ASSERT_EQ(s.template_args.size(), 8u);
    EXPECT_EQ(s.template_args[1], "4096");
    EXPECT_EQ(s.template_args[2], std::to_string(g.block_m));
    EXPECT_EQ(s.template_args[3], std::to_string(g.block_n));
    EXPECT_EQ(s.template_args[7], std::to_string(g.stages));
    EXPECT_EQ(s.block_threads, g.warps_m * g.warps_n * t.wave_size) << name;
  }
  // CDNA runs wave64: 4 waves = 256 threads; RDNA and NVIDIA 8 x 32.
  EXPECT_EQ(gemm_spec(*find_target("gfx942"), DType::kBF16, 4096).block_threads, 256);
  EXPECT_EQ(gemm_spec(*find_target("gfx1100"), DType::kBF16, 4096).block_threads, 256);
}

TEST(GemmCatalog, FewRowsTileOnNvidiaOnly) {
  // NVIDIA: the small tile takes batched-decode rows (9..64) when K is a
  // multiple of its K tile; AMD targets have none yet and run the large tile.
  for (const char* name : {"sm_80", "sm_89", "sm_90"}) {
    const TargetFacts& t = *find_target(name);
    EXPECT_TRUE(gemm_small_fits(t, DType::kBF16, 32, 4096)) << name;
    EXPECT_TRUE(gemm_small_fits(t, DType::kF16, 64, 12288)) << name;
    EXPECT_FALSE(gemm_small_fits(t, DType::kBF16, 65, 4096)) << name;
    EXPECT_FALSE(gemm_small_fits(t, DType::kF32, 32, 4096)) << name;
    EXPECT_FALSE(gemm_small_fits(t, DType::kBF16, 32, 4096 + 32)) << name;
    const KernelSpec s = gemm_spec(t, DType::kBF16, 4096, true);
    EXPECT_EQ(s.function, "ft::gemm") << name;
    EXPECT_EQ(s.name, "ft_gemm_small_bf16_k4096");
    EXPECT_EQ(s.template_args[2], std::to_string(t.tiles.gemm_small.block_m));
    bool listed = false;
    for (const auto& spec : kernel_catalog(t)) listed = listed || spec.name == s.name;
    EXPECT_TRUE(listed) << name;
  }
  for (const char* name : {"gfx1151", "gfx942"}) {
    const TargetFacts& t = *find_target(name);
    EXPECT_FALSE(gemm_small_fits(t, DType::kBF16, 32, 4096)) << name;
    EXPECT_EQ(gemm_spec(t, DType::kBF16, 4096, true).name, "ft_gemm_bf16_k4096") << name;
  }
}

TEST(GemmLauncher, CpuBackendIsUnsupported) {
  auto cpu = open_cpu_backend(1);
  ASSERT_TRUE(cpu.ok());
  OpContext ctx(cpu->get());
  std::vector<float> x(64 * 32), w(32 * 32), y(64 * 32);
  auto buf = [](std::vector<float>& v) { return DeviceBuffer{reinterpret_cast<uint64_t>(v.data()), v.size() * 4}; };
  WeightView view{GgmlType::kF32, 32, 32, buf(w)};
  Status st = gemm(ctx, DType::kF32, view, buf(x), 64, buf(y));
  EXPECT_EQ(st.code(), ErrorCode::kUnsupported);
  EXPECT_NE(st.message().find("GPU only"), std::string::npos) << st.message();
}

TEST(GemmLauncher, FewRowQuantizedPathIsForGpusAndItsShapes) {
  auto cpu = open_cpu_backend(1);
  ASSERT_TRUE(cpu.ok());
  OpContext ctx(cpu->get());
  WeightView q4{GgmlType::kQ4_K, 4096, 4096, {}};
  std::vector<float> x(32 * 256), y(32 * 64);
  auto buf = [](std::vector<float>& v) { return DeviceBuffer{reinterpret_cast<uint64_t>(v.data()), v.size() * 4}; };
  EXPECT_FALSE(gemm_q_fits(ctx, DType::kBF16, q4, 32, buf(x)));  // the CPU backend runs matmul's reference
  Status st = gemm_q(ctx, DType::kBF16, q4, buf(x), 32, buf(y), 4096);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("few-row"), std::string::npos) << st.message();
}

TEST(GemmLauncher, ScratchBytes) {
  WeightView same{GgmlType::kBF16, 4096, 4096, {}};
  EXPECT_EQ(gemm_scratch_bytes(DType::kBF16, same), 0u);
  WeightView quant{GgmlType::kQ4_K, 4096, 4096, {}};
  EXPECT_EQ(gemm_scratch_bytes(DType::kBF16, quant), 4096u * 4096u * 2u);
  EXPECT_EQ(gemm_scratch_bytes(DType::kF16, same), 4096u * 4096u * 2u);
}

}  // namespace
}  // namespace ft
