#include "gfx_targets/targets.h"

#include <algorithm>
#include <array>

namespace ft {
namespace {

constexpr Tiles kDefaultTiles{
    .norm = {.block_threads = 256, .load_bytes = 16},
    .act = {.block_threads = 256, .load_bytes = 16, .vectors_per_thread = 2},
    // Decode: 4 waves, 256-token partitions; the LDS is 8-17 KiB (scores, then
    // per-wave sums), so registers set the occupancy (see attention.hip).
    // gfx1150 (1024 VGPRs per SIMD): chosen for >= 4 waves per SIMD with 128
    // bytes of K in flight per lane; `ft-jit inspect --arch gfx1150 --kernel
    // attn_decode` shows 111-163 VGPRs -> 5-9 waves (group 4: 156 -> 6), ~100
    // KB in flight per WGP, far more than LPDDR5X needs. jit_test's FtJitWarm
    // holds every decode kernel to the floor.
    // Prefill FMA: 64 rows x 4 lanes, 32-key f32 tiles = 33 KiB of LDS.
    // RoPE: 32 lanes per head, 4-byte runs at head_dim 128 bf16. At 16384
    // tokens it took about the same time on the H100 and the H200 (145 and
    // 132 us), so it is bound by instruction issue rather than memory: 16
    // lanes (FT_ROPE_LANES=16, 8-byte runs) halve the loads, stores,
    // shuffles and address arithmetic per byte; not yet timed.
    .rope = {.lanes_per_head = 32, .heads_per_block = 4, .heads_per_group = 4},
    .attn = {.decode_waves = 4, .decode_partition = 256, .prefill_rows = 64, .prefill_split = 4,
             .prefill_keys = 32},
};
static_assert(valid(kDefaultTiles.norm) && valid(kDefaultTiles.act));

constexpr Tiles with_gemm(Tiles t, GemmTile g, GemmTile small = {}) {
  t.gemm = g;
  t.gemm_small = small;
  return t;
}
// GEMM tiles. NVIDIA: 8 warps of 64x32 (mma.sync 16x8x16), 3 cp.async stages
// of 16 KiB = 48 KiB, the static shared-memory limit (no opt-in needed).
// RDNA: 8 wave32 of 64x32 (WMMA 16x16: 8 accumulator tiles = 64 VGPRs).
// CDNA: 4 wave64 of 64x64 (MFMA 32x32: 4 accumulator tiles = 64 registers).
constexpr GemmTile kNvidiaGemm{.block_m = 128, .block_n = 128, .block_k = 32, .warps_m = 2, .warps_n = 4, .stages = 3};
constexpr GemmTile kRdnaGemm{.block_m = 128, .block_n = 128, .block_k = 32, .warps_m = 2, .warps_n = 4, .stages = 2};
// Hopper wgmma: 2 warpgroups of 64 x 128 (m64n128k16, 64 accumulators per
// thread), 3 stages of 16 KiB within the 48 KiB static limit.
constexpr GemmTile kHopperGemm{.block_m = 128, .block_n = 128, .block_k = 32, .warps_m = 8, .warps_n = 1, .stages = 3};
// Small-M (batched decode) on NVIDIA: 4 warps of 16x16 over a 32x32 tile,
// K 64 at a time in 4 cp.async stages (32 KiB), so the 4096-wide projections
// run 128 blocks instead of 32. Hopper runs it with mma.sync too (wgmma's
// 64-row minimum would waste most of a 32-row tile). AMD: none yet.
constexpr GemmTile kNvidiaSmallGemm{.block_m = 32, .block_n = 32, .block_k = 64, .warps_m = 2, .warps_n = 2, .stages = 4};
constexpr GemmTile kCdnaGemm{.block_m = 128, .block_n = 128, .block_k = 32, .warps_m = 2, .warps_n = 2, .stages = 2};
static_assert(valid(kNvidiaGemm) && valid(kHopperGemm) && valid(kRdnaGemm) && valid(kCdnaGemm) && valid(kNvidiaSmallGemm));
static_assert(valid(kDefaultTiles.rope) && valid(kDefaultTiles.attn));

constexpr Tiles with_gemv(Tiles t, GemvTile g) {
  t.gemv = g;
  return t;
}
// GEMV tiles (decode): 4 waves split K; 4 rows per block at m <= 2, 2 at
// m >= 4. gfx1150 (1024 VGPRs per SIMD): chosen for >= 8 waves per SIMD,
// i.e. <= 128 VGPRs, at m <= 2, which every kernel up to K = 4096 keeps
// (76-101 VGPRs: 9-12 waves) and the longer-K pipelined ones do not: Q6_K
// at K >= 8192 135 (7 waves), Q5_K 179 (5: the compiler spends them on the
// branch-free K-quant scales; capping it at 128 spills); the m = 8 kernels
// take 71-224 (4-12 waves). Every decode kernel keeps >= 4 (jit_test's
// FtJitWarm checks both floors). `ft-jit inspect --arch gfx1150 --kernel
// gemv` shows it. H200: a 4096-row weight is 1024 blocks, ~31 warps per SM.
constexpr GemvTile kNvidiaGemv{.block_threads = 128, .rows = 4, .rows_wide_m = 2};
constexpr GemvTile kRdnaGemv{.block_threads = 128, .rows = 4, .rows_wide_m = 2};
constexpr GemvTile kCdnaGemv{.block_threads = 256, .rows = 4, .rows_wide_m = 2};
static_assert(valid(kNvidiaGemv) && valid(kRdnaGemv) && valid(kCdnaGemv));

constexpr uint32_t kRdna3Dots = kDotSudot4 | kDotF32F16 | kDotF32Bf16;
constexpr uint32_t kCdnaDots = kDotSdot4 | kDotF32F16;

// RDNA: the register file per SIMD is 1024 or 1536 VGPRs per lane (wave32),
// allocated in granules of 16 or 24; 16 waves per SIMD at most. In WGP mode a
// workgroup spans the WGP's 4 SIMDs and its 128 KiB LDS.
constexpr TargetFacts rdna(std::string_view name, std::string_view products, std::string_view family,
                           int vgprs, MatrixCore mma, Fp8Kind fp8) {
  return TargetFacts{
      .name = name, .products = products, .family = family, .vendor = Vendor::kAmd, .compile_arch = name,
      .wave_size = 32, .alt_wave_size = 64, .wgp_mode = true,
      .simds_per_cu = 4, .max_waves_per_simd = 16, .vgprs_per_simd = vgprs,
      .vgpr_granule = vgprs == 1536 ? 24 : 16, .max_vgprs_per_wave = 256,
      .lds_bytes_per_block = 64 * 1024, .lds_bytes_per_cu = 128 * 1024,
      .matrix_core = mma, .fp8 = fp8, .dot_ops = kRdna3Dots,
      .has_xnack = false, .has_sramecc = false, .tiles = with_gemv(with_gemm(kDefaultTiles, kRdnaGemm), kRdnaGemv)};
}

// CDNA: wave64 only; 512 unified VGPR+AGPR per lane per SIMD, granule 8,
// 8 waves per SIMD, 4 SIMDs per CU.
constexpr TargetFacts cdna(std::string_view name, std::string_view products, std::string_view family,
                           int lds_bytes, Fp8Kind fp8) {
  return TargetFacts{
      .name = name, .products = products, .family = family, .vendor = Vendor::kAmd, .compile_arch = name,
      .wave_size = 64, .alt_wave_size = 0, .wgp_mode = false,
      .simds_per_cu = 4, .max_waves_per_simd = 8, .vgprs_per_simd = 512,
      .vgpr_granule = 8, .max_vgprs_per_wave = 512,
      .lds_bytes_per_block = lds_bytes, .lds_bytes_per_cu = lds_bytes,
      .matrix_core = MatrixCore::kMfma, .fp8 = fp8, .dot_ops = kCdnaDots,
      .has_xnack = true, .has_sramecc = true, .tiles = with_gemv(with_gemm(kDefaultTiles, kCdnaGemm), kCdnaGemv)};
}

// NVIDIA: 65536 registers per SM (2048 per lane of a warp), allocated per warp
// in units of 256 (8 per lane), at most 255 per thread.
constexpr TargetFacts nvidia(std::string_view name, std::string_view compile_arch, std::string_view products,
                             std::string_view family, int max_warps, int smem_block, int smem_sm,
                             MatrixCore mma, Fp8Kind fp8) {
  return TargetFacts{
      .name = name, .products = products, .family = family, .vendor = Vendor::kNvidia,
      .compile_arch = compile_arch, .wave_size = 32, .alt_wave_size = 0, .wgp_mode = false,
      .simds_per_cu = 1, .max_waves_per_simd = max_warps, .vgprs_per_simd = 2048,
      .vgpr_granule = 8, .max_vgprs_per_wave = 255,
      .lds_bytes_per_block = smem_block, .lds_bytes_per_cu = smem_sm,
      .matrix_core = mma, .fp8 = fp8, .dot_ops = kDotDp4a,
      .has_xnack = false, .has_sramecc = false, .tiles = with_gemv(with_gemm(kDefaultTiles, mma == MatrixCore::kWgmma ? kHopperGemm : kNvidiaGemm, kNvidiaSmallGemm), kNvidiaGemv)};
}

constexpr std::array kTargets = {
    rdna("gfx1150", "Radeon 890M / 880M (Ryzen AI 300)", "RDNA 3.5", 1024, MatrixCore::kWmmaGfx11, Fp8Kind::kNone),
    rdna("gfx1151", "Radeon 8060S (Ryzen AI Max)", "RDNA 3.5", 1536, MatrixCore::kWmmaGfx11, Fp8Kind::kNone),
    rdna("gfx1100", "Radeon RX 7900 XTX / XT, PRO W7900", "RDNA 3", 1536, MatrixCore::kWmmaGfx11, Fp8Kind::kNone),
    rdna("gfx1101", "Radeon RX 7800 XT / 7700 XT", "RDNA 3", 1536, MatrixCore::kWmmaGfx11, Fp8Kind::kNone),
    rdna("gfx1102", "Radeon RX 7600", "RDNA 3", 1024, MatrixCore::kWmmaGfx11, Fp8Kind::kNone),
    rdna("gfx1200", "Radeon RX 9060 XT", "RDNA 4", 1536, MatrixCore::kWmmaGfx12, Fp8Kind::kOcp),
    rdna("gfx1201", "Radeon RX 9070 XT / 9070", "RDNA 4", 1536, MatrixCore::kWmmaGfx12, Fp8Kind::kOcp),
    cdna("gfx90a", "Instinct MI210 / MI250X", "CDNA 2", 64 * 1024, Fp8Kind::kNone),
    cdna("gfx942", "Instinct MI300X / MI300A / MI325X", "CDNA 3", 64 * 1024, Fp8Kind::kFnuz),
    cdna("gfx950", "Instinct MI350X / MI355X", "CDNA 4", 160 * 1024, Fp8Kind::kOcp),
    nvidia("sm_80", "sm_80", "A100, A30", "Ampere", 64, 163 * 1024, 164 * 1024, MatrixCore::kMmaSync, Fp8Kind::kNone),
    nvidia("sm_89", "sm_89", "L4, L40S, RTX 4090", "Ada", 48, 99 * 1024, 100 * 1024, MatrixCore::kMmaSync, Fp8Kind::kOcp),
    nvidia("sm_90", "sm_90a", "H100, H200, GH200", "Hopper", 64, 227 * 1024, 228 * 1024, MatrixCore::kWgmma,
           Fp8Kind::kOcp),
};

std::string known_names() {
  std::string out;
  for (const auto& t : kTargets) {
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

}  // namespace

std::span<const TargetFacts> all_targets() { return kTargets; }

const TargetFacts* find_target(std::string_view name) {
  for (const auto& t : kTargets)
    if (t.name == name || t.compile_arch == name) return &t;
  return nullptr;
}

Result<TargetId> parse_target_id(std::string_view text) {
  size_t colon = text.find(':');
  std::string_view base = text.substr(0, colon);
  const TargetFacts* facts = find_target(base);
  if (!facts)
    return FT_ERROR(ErrorCode::kNotFound, "unknown target '{}'; known targets: {}", std::string(base), known_names());
  TargetId id{facts, {}};
  while (colon != std::string_view::npos) {
    size_t next = text.find(':', colon + 1);
    std::string_view feature = text.substr(colon + 1, next == std::string_view::npos ? next : next - colon - 1);
    colon = next;
    if (feature.size() < 2 || (feature.back() != '+' && feature.back() != '-'))
      return FT_ERROR(ErrorCode::kInvalidArgument,
                      "bad target-ID feature '{}' in '{}': expected a name followed by + or -, e.g. xnack-",
                      std::string(feature), std::string(text));
    std::string fname(feature.substr(0, feature.size() - 1));
    bool supported = (fname == "xnack" && facts->has_xnack) || (fname == "sramecc" && facts->has_sramecc);
    if (!supported)
      return FT_ERROR(ErrorCode::kInvalidArgument, "target {} has no target-ID feature '{}'{}", facts->name, fname,
                      facts->has_xnack ? " (it has xnack and sramecc)" : " (it has none)");
    if (id.features.count(fname))
      return FT_ERROR(ErrorCode::kInvalidArgument, "target-ID feature '{}' given twice in '{}'", fname,
                      std::string(text));
    id.features[fname] = feature.back() == '+';
  }
  return id;
}

static std::string feature_suffix(const std::map<std::string, bool>& features) {
  std::string out;
  for (const auto& [name, on] : features) out += ":" + name + (on ? "+" : "-");
  return out;
}

std::string TargetId::to_string() const { return std::string(facts->name) + feature_suffix(features); }
std::string TargetId::compile_target() const { return std::string(facts->compile_arch) + feature_suffix(features); }

const char* vendor_name(Vendor v) { return v == Vendor::kAmd ? "amd" : "nvidia"; }

const char* matrix_core_name(MatrixCore m) {
  switch (m) {
    case MatrixCore::kNone: return "none";
    case MatrixCore::kWmmaGfx11: return "wmma-gfx11";
    case MatrixCore::kWmmaGfx12: return "wmma-gfx12";
    case MatrixCore::kMfma: return "mfma";
    case MatrixCore::kMmaSync: return "mma.sync";
    case MatrixCore::kWgmma: return "wgmma";
  }
  return "?";
}

const char* fp8_name(Fp8Kind f) {
  switch (f) {
    case Fp8Kind::kNone: return "none";
    case Fp8Kind::kFnuz: return "fnuz";
    case Fp8Kind::kOcp: return "ocp";
  }
  return "?";
}

std::string dot_ops_names(uint32_t ops) {
  static constexpr std::pair<DotOp, const char*> kNames[] = {
      {kDotSdot4, "sdot4"}, {kDotSudot4, "sudot4"}, {kDotDp4a, "dp4a"},
      {kDotF32F16, "dot2-f32-f16"}, {kDotF32Bf16, "dot2-f32-bf16"}};
  std::string out;
  for (auto [op, name] : kNames) {
    if (!(ops & op)) continue;
    if (!out.empty()) out += ",";
    out += name;
  }
  return out.empty() ? "none" : out;
}

int occupancy_waves(const TargetFacts& t, int vgprs, int agprs, int lds_bytes, int block_threads) {
  // gfx90a-class chips allocate arch VGPRs (rounded to 4) and AGPRs from one file.
  int regs = agprs > 0 ? (std::max(vgprs, 0) + 3) / 4 * 4 + agprs : std::max(vgprs, 1);
  int alloc = (std::max(regs, 1) + t.vgpr_granule - 1) / t.vgpr_granule * t.vgpr_granule;
  if (alloc > t.vgprs_per_simd || lds_bytes > t.lds_bytes_per_block) return 0;
  int waves = std::min(t.max_waves_per_simd, t.vgprs_per_simd / alloc);
  if (block_threads > 0) {
    // Whole blocks only: a block's waves are spread over the CU's SIMDs.
    int waves_per_block = (block_threads + t.wave_size - 1) / t.wave_size;
    int blocks = waves * t.simds_per_cu / waves_per_block;
    if (lds_bytes > 0) blocks = std::min(blocks, t.lds_bytes_per_cu / lds_bytes);
    waves = std::min(waves, blocks * waves_per_block / t.simds_per_cu);
  }
  return waves;
}

}  // namespace ft
