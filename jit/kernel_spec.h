// A KernelSpec names one kernel instantiation: which op family (.hip file),
// which device function template with which template arguments, and the
// argument struct it takes. The JIT turns it into a tiny translation unit
//
//   #include "rmsnorm.hip"
//   extern "C" __global__ void FT_LAUNCH_BOUNDS(256)
//   ft_rmsnorm_bf16_h4096(ft::RmsNormArgs<ft::bf16> a) { ft::rmsnorm<ft::bf16, 4096, 256, 16>(a); }
//
// so every toolchain sees the same source and the entry symbol is a plain
// C name (no mangling differences between hipRTC, clang and NVRTC).
#pragma once

#include <string>
#include <vector>

#include "gfx_targets/targets.h"

namespace ft {

struct KernelSpec {
  std::string name;                        // the entry symbol, unique per instantiation
  std::string family;                      // op family = kernel_src/<family>.hip
  std::string function;                    // device function template, "ft::rmsnorm"
  std::vector<std::string> template_args;  // {"ft::bf16", "4096", "256", "16"}
  std::string args_type;                   // "ft::RmsNormArgs<ft::bf16>"
  int block_threads = 256;                 // launch bound
  // Blocks per SM that the registers should allow (NVIDIA: __launch_bounds__'s
  // second argument; AMD takes the block size only); 0: no such bound. The
  // compile service drops it where it would make the kernel spill.
  int min_blocks = 0;
  // The device function calls grid_dependency_begin() itself, after issuing
  // loads of what no kernel writes (weights); otherwise the entry calls it
  // before anything else.
  bool waits_itself = false;

  std::string template_args_text() const;  // "ft::bf16,4096,256,16"
};

// The translation unit for `spec` (see above).
std::string generate_source(const KernelSpec& spec);

// The compile flags for `target` with `toolchain` ("clang", "hiprtc",
// "nvrtc"), in canonical order. Vendor and wave size are always explicit.
std::vector<std::string> compile_flags(const TargetId& target, const std::string& toolchain);

// Flags that only nvcc/NVRTC understand; never allowed in an AMD compile.
bool is_nvidia_only_flag(const std::string& flag);

}  // namespace ft
