#include <unistd.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "jit/catalog.h"
#include "jit/warm.h"
#include "runtime/engine/kernel_plan.h"
#include "runtime/model/weights.h"
#include "tools/common/cli_args.h"
#include "tools/ft_jit/commands.h"
#include "tools/ft_jit/jit_session.h"

namespace ft::tools {

namespace {

static_assert(kDefaultMaxBatch == 32, "kWarmHelp states the default --max-batch");
constexpr const char* kWarmHelp =
    "usage: ft-jit warm --arch A [--model PATH] [--jobs N] [--toolchain T] [--kernel SUBSTR] [--json]\n"
    "Compiles kernels for target A (e.g. gfx1150, gfx90a:xnack-, sm_90) into the\n"
    "code-object cache, in parallel, with no GPU needed. A second run is all cache hits.\n"
    "  --model PATH    exactly the kernels this model (GGUF file or safetensors folder)\n"
    "                  needs, as ft-serve would run it; default: the whole catalog\n"
    "  --max-batch N   with --model: sequences per step to plan for (default 32)\n"
    "  --ctx N         with --model: context length to plan for (default 4096)\n"
    "  --jobs N        compile processes (default: one per core)\n"
    "  --toolchain T   clang, hiprtc or nvrtc (default: the first that supports A)\n"
    "  --kernel SUBSTR only kernels whose name contains SUBSTR\n"
    "  --json          print one JSON object: arch, kernels, compiled, cached, failed, spills, seconds\n"
    "Exits 1 when any kernel failed to compile; a kernel that spills registers is named (a\n"
    "warning: it runs, slower).\n";

}  // namespace

int cmd_warm(int argc, char** argv) {
  auto parsed = CliArgs::parse({.value_options = {"--arch", "--jobs", "--toolchain", "--kernel", "--model",
                                                  "--max-batch", "--ctx"},
                                .flags = {"--json"}},
                               argc, argv);
  if (parsed.ok() && parsed->help()) {
    std::fputs(kWarmHelp, stdout);
    return 0;
  }
  auto jobs = parsed.ok() ? parsed->get_int("--jobs", 0) : Result<int64_t>(parsed.status());
  auto max_batch = jobs.ok() ? parsed->get_int("--max-batch", kDefaultMaxBatch) : jobs;
  auto ctx = max_batch.ok() ? parsed->get_int("--ctx", 4096) : max_batch;
  if (!ctx.ok() || !parsed->has("--arch") || !parsed->positional().empty() || *max_batch < 1 || *ctx < 2) {
    std::fprintf(stderr, "ft-jit warm: %s\n\n%s",
                 !ctx.ok() ? ctx.status().message().c_str()
                 : !parsed->has("--arch") ? "--arch is required"
                 : !parsed->positional().empty() ? "unexpected argument"
                                                 : "--max-batch and --ctx must be positive",
                 kWarmHelp);
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
  std::vector<KernelSpec> all;
  if (args.has("--model")) {
    auto weights = WeightSet::open(args.get("--model"));
    if (!weights.ok()) {
      std::fprintf(stderr, "ft-jit warm: %s\n", weights.status().to_string().c_str());
      return 1;
    }
    auto plan = plan_kernels(*weights, session->target,
                             PlanOptions{static_cast<int>(*max_batch), 512, 16, static_cast<int>(*ctx)});
    if (!plan.ok()) {
      std::fprintf(stderr, "ft-jit warm: planning the kernels of %s: %s\n", args.get("--model").c_str(),
                   plan.status().to_string().c_str());
      return 1;
    }
    all = std::move(*plan);
  } else {
    all = kernel_catalog(*session->target.facts);
  }
  std::vector<KernelSpec> specs;
  for (auto& s : all)
    if (s.name.find(args.get("--kernel")) != std::string::npos) specs.push_back(std::move(s));

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
