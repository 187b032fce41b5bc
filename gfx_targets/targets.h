// Facts per GPU target: the one source of truth that the JIT, the launchers
// and `ft-jit inspect` read. Capabilities come from this table, never from
// comparing compute-capability numbers (a ROCm device reports its gfx
// generation, and (11,5) >= (8,9) is true).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gfx_targets/tiles.h"
#include "runtime/base/status.h"

namespace ft {

enum class Vendor { kAmd, kNvidia };

enum class MatrixCore {
  kNone,
  kWmmaGfx11,  // v_wmma_*: A/B replicated across the two half-waves (RDNA3/3.5)
  kWmmaGfx12,  // v_wmma_* gfx12 form: no replication, different builtins (RDNA4)
  kMfma,       // v_mfma_* (CDNA)
  kMmaSync,    // mma.sync (Ampere, Ada)
  kWgmma,      // wgmma.mma_async (Hopper, sm_90a)
};

enum class Fp8Kind { kNone, kFnuz, kOcp };

// Integer / packed dot instructions worth specializing on.
enum DotOp : uint32_t {
  kDotNone = 0,
  kDotSdot4 = 1u << 0,     // v_dot4_i32_i8 (gfx9 with dot insts)
  kDotSudot4 = 1u << 1,    // v_dot4_i32_iu8 (gfx11, gfx12: mixed signedness)
  kDotDp4a = 1u << 2,      // dp4a (NVIDIA sm_61+)
  kDotF32F16 = 1u << 3,    // v_dot2_f32_f16
  kDotF32Bf16 = 1u << 4,   // v_dot2_f32_bf16
};

struct TargetFacts {
  std::string_view name;         // "gfx1150", "sm_90"
  std::string_view products;     // "Radeon 890M (Ryzen AI 300)"
  std::string_view family;       // "RDNA 3.5"
  Vendor vendor;
  std::string_view compile_arch; // what the compiler is told: "gfx1150", "sm_90a"
  int wave_size;                 // the wave size ft compiles for (passed explicitly)
  int alt_wave_size;             // the other mode the hardware has (64 on RDNA), 0 if none
  bool wgp_mode;                 // gfx10+: compile in WGP mode (-mno-cumode); false: CU mode
  // Occupancy inputs. AMD: per SIMD, in registers per lane; NVIDIA: the SM
  // is modelled as one "SIMD" holding 65536 / 32 = 2048 registers per lane.
  int simds_per_cu;
  int max_waves_per_simd;
  int vgprs_per_simd;            // register file per SIMD, per lane
  int vgpr_granule;              // allocation granule, per lane
  int max_vgprs_per_wave;        // addressable registers per wave (arch VGPRs)
  int lds_bytes_per_block;       // largest LDS / shared allocation one block may have
  int lds_bytes_per_cu;          // LDS / shared memory per CU (WGP on RDNA in WGP mode) or SM
  MatrixCore matrix_core;
  Fp8Kind fp8;
  uint32_t dot_ops;
  bool has_xnack;                // the target-ID feature exists on this chip
  bool has_sramecc;
  Tiles tiles;

  bool is_amd() const { return vendor == Vendor::kAmd; }
  bool has_dot(DotOp op) const { return (dot_ops & op) != 0; }
};

// A target with its target-ID features, e.g. "gfx90a:sramecc+:xnack-".
struct TargetId {
  const TargetFacts* facts = nullptr;
  std::map<std::string, bool> features;  // "xnack" -> false for "xnack-"

  // Canonical text: name, then features in name order ("gfx90a:sramecc+:xnack-").
  std::string to_string() const;
  // What the compiler gets: compile_arch plus features ("gfx90a:xnack-", "sm_90a").
  std::string compile_target() const;
};

std::span<const TargetFacts> all_targets();
// Looks a target up by its name or compile arch ("sm_90a" finds sm_90).
const TargetFacts* find_target(std::string_view name);
// Parses "gfx90a:xnack-:sramecc+". An unknown chip or feature is an error that
// lists what is known.
Result<TargetId> parse_target_id(std::string_view text);

const char* vendor_name(Vendor v);
const char* matrix_core_name(MatrixCore m);
const char* fp8_name(Fp8Kind f);
std::string dot_ops_names(uint32_t ops);

// Resident waves per SIMD (AMD) or warps per SM (NVIDIA) for a kernel using
// `vgprs` (+ `agprs` on gfx90a-class chips) per lane, `lds_bytes` per block and
// `block_threads` threads per block. 0 means it cannot launch.
int occupancy_waves(const TargetFacts& t, int vgprs, int agprs, int lds_bytes, int block_threads);

}  // namespace ft
