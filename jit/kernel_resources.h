// What a compiled kernel uses of the machine, read from its code object
// (AMD: the AMDGPU metadata note) or from the compiler's report (NVIDIA:
// ptxas). Stored per cache entry; shown by `ft-jit inspect`.
#pragma once

#include <algorithm>
#include <string>

#include "gfx_targets/targets.h"

namespace ft {

struct KernelResources {
  std::string symbol;          // kernel symbol in the code object
  // AMD (from .amdhsa.kernels); -1 where the vendor has no such field.
  int vgprs = -1;              // .vgpr_count
  int sgprs = -1;              // .sgpr_count
  int agprs = -1;              // .agpr_count (gfx90a+ accumulation registers)
  int vgpr_spills = 0;         // .vgpr_spill_count
  int sgpr_spills = 0;         // .sgpr_spill_count
  // NVIDIA (from ptxas -v); -1 on AMD.
  int registers = -1;          // registers per thread
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  // Both vendors.
  int lds_bytes = 0;           // AMD .group_segment_fixed_size, NVIDIA static smem
  int scratch_bytes = 0;       // AMD .private_segment_fixed_size, NVIDIA stack frame
  int wavefront_size = 0;      // .wavefront_size (32 on NVIDIA)
  int max_workgroup_size = 0;  // .max_flat_workgroup_size / launch bounds; 0 when unknown

  bool has_spills() const {
    return vgpr_spills > 0 || sgpr_spills > 0 || spill_store_bytes > 0 || spill_load_bytes > 0;
  }
  // Registers per lane (AMD VGPRs) or per thread (NVIDIA).
  int register_count() const { return vgprs >= 0 ? vgprs : registers; }
};

// Resident waves per SIMD (AMD) or warps per SM (NVIDIA) of a kernel with
// these resources launched in blocks of block_threads (gfx_targets'
// occupancy_waves).
inline int occupancy_waves(const TargetFacts& t, const KernelResources& r, int block_threads) {
  return occupancy_waves(t, r.register_count(), std::max(r.agprs, 0), r.lds_bytes, block_threads);
}

}  // namespace ft
