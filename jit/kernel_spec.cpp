#include "jit/kernel_spec.h"

#include <fmt/format.h>

namespace ft {

std::string KernelSpec::template_args_text() const {
  std::string out;
  for (const auto& a : template_args) {
    if (!out.empty()) out += ",";
    out += a;
  }
  return out;
}

std::string generate_source(const KernelSpec& spec) {
  const std::string bounds = spec.min_blocks > 0
                                 ? fmt::format("FT_LAUNCH_BOUNDS_MIN({}, {})", spec.block_threads, spec.min_blocks)
                                 : fmt::format("FT_LAUNCH_BOUNDS({})", spec.block_threads);
  return fmt::format(
      "#include \"{}.hip\"\n"
      "extern \"C\" __global__ void {} {}({} args) {{ {}{}<{}>(args); }}\n", spec.family, bounds, spec.name,
      spec.args_type, spec.waits_itself ? "" : "ft::grid_dependency_begin(); ", spec.function,
      spec.template_args_text());
}

bool is_nvidia_only_flag(const std::string& flag) {
  static const char* kNvidiaOnly[] = {"--expt-relaxed-constexpr", "--use_fast_math", "-use_fast_math",
                                      "-Xptxas", "--ptxas-options", "--gpu-architecture", "-arch=",
                                      "-default-device", "--extra-device-vectorization", "-lineinfo"};
  for (const char* bad : kNvidiaOnly)
    if (flag.rfind(bad, 0) == 0) return true;
  return false;
}

namespace {

std::vector<std::string> vendor_defines(const TargetFacts& t) {
  std::vector<std::string> d = {
      t.is_amd() ? "-DFT_AMD=1" : "-DFT_NVIDIA=1",
      fmt::format("-DFT_WAVE_SIZE={}", t.wave_size),
      fmt::format("-DFT_MATRIX_CORE_{}=1", [&] {
        std::string m = matrix_core_name(t.matrix_core);
        for (auto& c : m) c = (c == '-' || c == '.') ? '_' : static_cast<char>(std::toupper(c));
        return m;
      }()),
  };
  if (t.has_dot(kDotSdot4)) d.push_back("-DFT_HAS_SDOT4=1");
  if (t.has_dot(kDotSudot4)) d.push_back("-DFT_HAS_SUDOT4=1");
  if (t.has_dot(kDotDp4a)) d.push_back("-DFT_HAS_DP4A=1");
  return d;
}

}  // namespace

std::vector<std::string> compile_flags(const TargetId& target, const std::string& toolchain) {
  const TargetFacts& t = *target.facts;
  std::vector<std::string> flags = {"-std=c++17"};
  if (t.is_amd()) {
    flags.push_back("-O3");  // NVRTC optimizes by default and rejects -O3
    // Explicit wave size and CU/WGP mode: the defaults differ between hipRTC versions.
    flags.push_back(t.wave_size == 64 ? "-mwavefrontsize64" : "-mno-wavefrontsize64");
    if (t.alt_wave_size != 0) flags.push_back(t.wgp_mode ? "-mno-cumode" : "-mcumode");
    flags.push_back("-fno-gpu-rdc");
    if (toolchain == "clang") {
      // -fuse-cuid=none: no random per-compile symbol, so the same request
      // gives the same bytes (reproducible code objects, stable cache rows).
      for (const char* f : {"-x", "hip", "-nogpuinc", "-nogpulib", "--offload-device-only",
                            "--no-gpu-bundle-output", "-fuse-cuid=none"})
        flags.push_back(f);
    }
    flags.push_back("--offload-arch=" + target.compile_target());
  } else {
    flags.push_back("--gpu-architecture=" + target.compile_target());
    flags.push_back("--use_fast_math");
    flags.push_back("--ptxas-options=-v");
  }
  for (auto& d : vendor_defines(t)) flags.push_back(std::move(d));
  return flags;
}

}  // namespace ft
