#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "jit/catalog.h"
#include "tools/common/cli_args.h"
#include "tools/ft_jit/commands.h"
#include "tools/ft_jit/jit_session.h"

namespace ft::tools {

namespace {

constexpr const char* kWarmHelp =
    "usage: ft-jit warm --arch A [--jobs N] [--toolchain T] [--kernel SUBSTR] [--json]\n"
    "Compiles every kernel of the catalog for target A (e.g. gfx1150, gfx90a:xnack-,\n"
    "sm_90) into the code-object cache, in parallel. A second run is all cache hits.\n"
    "  --jobs N        compile processes (default: one per core)\n"
    "  --toolchain T   clang, hiprtc or nvrtc (default: the first that supports A)\n"
    "  --kernel SUBSTR only kernels whose name contains SUBSTR\n"
    "  --json          print one JSON object: arch, kernels, compiled, cached, failed, seconds\n"
    "Exits 1 when any kernel failed to compile.\n";

}  // namespace

int cmd_warm(int argc, char** argv) {
  auto parsed = CliArgs::parse({.value_options = {"--arch", "--jobs", "--toolchain", "--kernel"}, .flags = {"--json"}},
                               argc, argv);
  if (parsed.ok() && parsed->help()) {
    std::fputs(kWarmHelp, stdout);
    return 0;
  }
  auto jobs = parsed.ok() ? parsed->get_int("--jobs", 0) : Result<int64_t>(parsed.status());
  if (!jobs.ok() || !parsed->has("--arch") || !parsed->positional().empty()) {
    std::fprintf(stderr, "ft-jit warm: %s\n\n%s",
                 !jobs.ok() ? jobs.status().message().c_str()
                 : !parsed->has("--arch") ? "--arch is required"
                                          : "unexpected argument",
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
  std::vector<KernelSpec> specs;
  for (auto& s : kernel_catalog(*session->target.facts))
    if (s.name.find(args.get("--kernel")) != std::string::npos) specs.push_back(std::move(s));

  const bool json = args.has("--json");
  const bool progress = !json && ::isatty(2);
  std::atomic<size_t> next{0};
  std::atomic<int> compiled{0}, cached{0}, failed{0};
  std::mutex out_mu;
  std::vector<double> compile_ms;
  std::vector<std::string> failures;
  auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (size_t i; (i = next++) < specs.size();) {
      auto k = session->service->get(specs[i], session->target);
      std::lock_guard lock(out_mu);
      if (!k.ok()) {
        ++failed;
        failures.push_back(k.status().message());
      } else if (k->from_cache) {
        ++cached;
      } else {
        ++compiled;
        compile_ms.push_back(k->compile_ms);
        if (k->resources.has_spills())
          failures.push_back(fmt::format("{} spills registers on {}", specs[i].name, session->target.to_string()));
      }
      if (progress) {
        int done = compiled + cached + failed;
        std::fprintf(stderr, "\r\033[K[%d/%zu] %s %s", done, specs.size(), k.ok() ? (k->from_cache ? "cached" : "compiled") : "FAILED",
                     specs[i].name.c_str());
        std::fflush(stderr);
      }
    }
  };
  std::vector<std::thread> threads;
  int n_threads = std::max(1, session->service->jobs());
  for (int i = 0; i < n_threads; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress) std::fprintf(stderr, "\r\033[K");
  for (const auto& f : failures) std::fprintf(stderr, "ft-jit warm: %s\n", f.c_str());

  std::sort(compile_ms.begin(), compile_ms.end());
  double p50 = compile_ms.empty() ? 0 : compile_ms[compile_ms.size() / 2];
  double max = compile_ms.empty() ? 0 : compile_ms.back();
  if (json) {
    nlohmann::json out = {{"arch", session->target.to_string()}, {"toolchain", (*tc)->identity()},
                          {"kernels", specs.size()}, {"compiled", compiled.load()}, {"cached", cached.load()},
                          {"failed", failed.load()}, {"seconds", seconds}, {"compile_ms_p50", p50},
                          {"compile_ms_max", max}, {"cache", session->cache->path()}};
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("warm %s with %s: %zu kernels, %d compiled, %d cached, %d failed in %.2f s", session->target.to_string().c_str(),
                (*tc)->identity().c_str(), specs.size(), compiled.load(), cached.load(), failed.load(), seconds);
    if (!compile_ms.empty()) std::printf(" (compile p50 %.0f ms, max %.0f ms)", p50, max);
    std::printf("\ncache: %s\n", session->cache->path().c_str());
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace ft::tools
