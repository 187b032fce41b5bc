#include <unistd.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "jit/warm.h"
#include "tools/common/cli_args.h"
#include "tools/ft_jit/commands.h"
#include "tools/ft_jit/jit_session.h"

namespace ft::tools {

namespace {

std::string warm_help() {
  return std::string(
    "usage: ft-jit warm --arch A [--model PATH] [--jobs N] [--toolchain T] [--kernel SUBSTR] [--json]\n"
    "Compiles kernels for target A (e.g. gfx1150, gfx90a:xnack-, sm_90) into the\n"
    "code-object cache, in parallel, with no GPU needed. A second run is all cache hits.\n"
    ) + kKernelSelectionHelp + (
    "  --jobs N        compile processes (default: one per core)\n"
    "  --toolchain T   clang, hiprtc or nvrtc (default: the first that supports A)\n"
    "  --json          print one JSON object: arch, kernels, compiled, cached, failed, spills, seconds\n"
    "Exits 1 when any kernel failed to compile; a kernel that spills registers is named (a\n"
    "warning: it runs, slower).\n");
}

}  // namespace

int cmd_warm(int argc, char** argv) {
  auto parsed = CliArgs::parse({.value_options = {"--arch", "--jobs", "--toolchain", "--kernel", "--model",
                                                  "--max-batch", "--ctx"},
                                .flags = {"--json"}},
                               argc, argv);
  if (parsed.ok() && parsed->help()) {
    std::fputs(warm_help().c_str(), stdout);
    return 0;
  }
  auto jobs = parsed.ok() ? parsed->get_int("--jobs", 0) : Result<int64_t>(parsed.status());
  const Result<PlanOptions> plan_options =
      jobs.ok() ? kernel_plan_options(*parsed) : Result<PlanOptions>(jobs.status());
  const Status& selection = plan_options.status();
  if (!selection.ok() || !parsed->has("--arch") || !parsed->positional().empty()) {
    std::fprintf(stderr, "ft-jit warm: %s\n\n%s",
                 !selection.ok() ? selection.user_message().c_str()
                 : !parsed->has("--arch") ? "--arch is required"
                                          : "unexpected argument",
                 warm_help().c_str());
    return 2;
  }
  const CliArgs& args = *parsed;
  auto session = open_session(args.get("--arch"), static_cast<int>(*jobs), args.get("--toolchain"));
  if (!session) return 1;
  auto tc = session->service->toolchain_for(session->target);
  if (!tc.ok()) {
    std::fprintf(stderr, "ft-jit warm: %s\n", tc.status().message().c_str());
    return 1;
  }
  auto selected = selected_kernels(args, *plan_options, session->target);
  if (!selected.ok()) {
    std::fprintf(stderr, "ft-jit warm: %s\n", selected.status().user_message().c_str());
    return 1;
  }
  const std::vector<KernelSpec>& specs = *selected;

  const bool json = args.has("--json");
  const bool progress = !json && ::isatty(2);
  WarmResult r = warm_kernels(*session->service, session->target, specs, [&](const WarmProgress& p) {
    if (!progress) return;
    std::fprintf(stderr, "\r\033[K[%zu/%zu] %s %s", p.done, p.total,
                 p.ok ? (p.from_cache ? "cached" : "compiled") : "FAILED", p.spec->name.c_str());
    std::fflush(stderr);
  });
  if (progress) std::fprintf(stderr, "\r\033[K");
  for (const auto& f : r.failures) std::fprintf(stderr, "ft-jit warm: %s\n", f.c_str());
  for (const auto& s : r.spills) std::fprintf(stderr, "ft-jit warm: warning: %s\n", s.c_str());
  const double p50 = r.compile_ms.empty() ? 0 : r.compile_ms[r.compile_ms.size() / 2];
  const double max = r.compile_ms.empty() ? 0 : r.compile_ms.back();
  if (json) {
    nlohmann::json out = {{"arch", session->target.to_string()}, {"toolchain", (*tc)->identity()},
                          {"kernels", specs.size()}, {"compiled", r.compiled}, {"cached", r.cached},
                          {"failed", r.failed}, {"spills", r.spills.size()}, {"seconds", r.seconds}, {"compile_ms_p50", p50},
                          {"compile_ms_max", max}, {"cache", session->cache->path()}};
    if (args.has("--model")) out["model"] = args.get("--model");
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("warm %s with %s: %zu kernels%s, %d compiled, %d cached, %d failed in %.2f s",
                session->target.to_string().c_str(), (*tc)->identity().c_str(), specs.size(),
                args.has("--model") ? " (model plan)" : "", r.compiled, r.cached, r.failed, r.seconds);
    if (!r.compile_ms.empty()) std::printf(" (compile p50 %.0f ms, max %.0f ms)", p50, max);
    std::printf("\ncache: %s\n", session->cache->path().c_str());
  }
  return r.failed > 0 ? 1 : 0;
}

}  // namespace ft::tools
