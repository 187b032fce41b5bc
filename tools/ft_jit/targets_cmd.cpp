#include <cstdio>

#include <nlohmann/json.hpp>

#include "gfx_targets/targets.h"
#include "tools/common/cli_args.h"
#include "tools/ft_jit/commands.h"

namespace ft::tools {

int cmd_targets(int argc, char** argv) {
  auto args = CliArgs::parse({.flags = {"--json"}}, argc, argv);
  if (args.ok() && args->help()) {
    std::printf("usage: ft-jit targets [--json]\nThe GPU targets ft compiles for, with the facts that shape its kernels.\n");
    return 0;
  }
  if (!args.ok() || !args->positional().empty()) {
    std::fprintf(stderr, "ft-jit targets: %s\n", args.ok() ? "unexpected argument" : args.status().message().c_str());
    return 2;
  }
  if (args->has("--json")) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& t : all_targets()) {
      out.push_back({{"name", t.name}, {"vendor", vendor_name(t.vendor)}, {"family", t.family},
                     {"products", t.products}, {"compile_arch", t.compile_arch}, {"wave_size", t.wave_size},
                     {"alt_wave_size", t.alt_wave_size}, {"wgp_mode", t.wgp_mode},
                     {"lds_bytes_per_block", t.lds_bytes_per_block}, {"lds_bytes_per_cu", t.lds_bytes_per_cu},
                     {"vgprs_per_simd", t.vgprs_per_simd}, {"vgpr_granule", t.vgpr_granule},
                     {"max_waves_per_simd", t.max_waves_per_simd}, {"matrix_core", matrix_core_name(t.matrix_core)},
                     {"fp8", fp8_name(t.fp8)}, {"dot", dot_ops_names(t.dot_ops)},
                     {"target_id_features", t.has_xnack ? nlohmann::json{"xnack", "sramecc"} : nlohmann::json::array()}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%-8s %-6s %-9s %-5s %-7s %-11s %-10s %-26s %s\n", "target", "vendor", "family", "wave", "LDS/blk",
              "regs/granule", "mma", "dot", "products");
  for (const auto& t : all_targets()) {
    std::string wave = std::to_string(t.wave_size) + (t.alt_wave_size ? "/" + std::to_string(t.alt_wave_size) : "");
    std::printf("%-8.*s %-6s %-9.*s %-5s %-7s %-11s %-10s %-26s %.*s\n", (int)t.name.size(), t.name.data(),
                vendor_name(t.vendor), (int)t.family.size(), t.family.data(), wave.c_str(),
                (std::to_string(t.lds_bytes_per_block / 1024) + "K").c_str(),
                (std::to_string(t.vgprs_per_simd) + "/" + std::to_string(t.vgpr_granule)).c_str(),
                matrix_core_name(t.matrix_core), dot_ops_names(t.dot_ops).c_str(), (int)t.products.size(),
                t.products.data());
  }
  return 0;
}

}  // namespace ft::tools
