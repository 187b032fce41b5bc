// ft-jit: the kernel JIT's command line: list targets, prebuild the code-object
// cache with no GPU, inspect register use and ISA, manage the cache.
#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/base/log.h"
#include "tools/ft_jit/commands.h"

namespace {

constexpr const char* kUsage =
    "usage: ft-jit <command> [options]\n"
    "\n"
    "Build and look at FreeToken's GPU kernels for any target, no GPU needed.\n"
    "\n"
    "commands:\n"
    "  targets [--json]                  the GPU targets ft knows, with their facts\n"
    "  warm --arch A [--model PATH] [--jobs N] [--json]\n"
    "                                   compile the kernel catalog (or one model's kernels) for A\n"
    "  inspect [--arch A] [--kernel K] [--isa] [--json]\n"
    "                                    registers, spills, LDS, scratch and occupancy per kernel;\n"
    "                                    --isa prints the machine code\n"
    "  cache stats|list|prune|clear      look at or trim the code-object cache\n"
    "\n"
    "Run 'ft-jit <command> --help' for a command's options.\n"
    "environment: FT_CACHE_DIR (cache location), FT_TOOLCHAIN (clang|hiprtc|nvrtc),\n"
    "             FT_CLANG (clang++ to use), FT_LOG_LEVEL (debug|info|warn|error)\n";

}  // namespace

int main(int argc, char** argv) {
  ft::log::init_from_env();
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("ft-jit %s\n", FT_VERSION);
    return 0;
  }
  std::string cmd = argv[1];
  if (cmd == "targets") return ft::tools::cmd_targets(argc - 2, argv + 2);
  if (cmd == "warm") return ft::tools::cmd_warm(argc - 2, argv + 2);
  if (cmd == "inspect") return ft::tools::cmd_inspect(argc - 2, argv + 2);
  if (cmd == "cache") return ft::tools::cmd_cache(argc - 2, argv + 2);
  std::fprintf(stderr, "ft-jit: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
  return 2;
}
