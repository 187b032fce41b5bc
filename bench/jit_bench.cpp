// jit_bench: what the kernel JIT costs on this machine.
//
//   cold warm : the whole catalog for one target into an empty cache
//   hot warm  : the same again, all cache hits (in process, and as `ft-jit warm`)
//   lookup    : one cache hit through CompileService::get (hash, SQLite read, checksum)
//
// Targets (issue "JIT foundation"): hot warm >= 50x faster than cold; a hit < 1 ms.
// usage: jit_bench [--arch gfx1150] [--jobs N] [--lookups N]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "jit/catalog.h"
#include "jit/compile_service.h"
#include "jit/subprocess.h"
#include "runtime/base/files.h"
#include "runtime/base/log.h"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

// Runs every spec through the service on `jobs` threads; returns per-kernel compile ms of misses.
std::vector<double> warm(ft::CompileService& service, const std::vector<ft::KernelSpec>& specs,
                         const ft::TargetId& target, int jobs, int* failures) {
  std::atomic<size_t> next{0};
  std::atomic<int> failed{0};
  std::vector<double> ms(specs.size(), -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t)
    threads.emplace_back([&] {
      for (size_t i; (i = next++) < specs.size();) {
        auto k = service.get(specs[i], target);
        if (!k.ok()) {
          ++failed;
          std::fprintf(stderr, "%s\n", k.status().to_string().c_str());
        } else if (!k->from_cache) {
          ms[i] = k->compile_ms;
        }
      }
    });
  for (auto& t : threads) t.join();
  *failures = failed;
  std::vector<double> out;
  for (double m : ms)
    if (m >= 0) out.push_back(m);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string arch = "gfx1150";
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int lookups = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--arch")) arch = argv[i + 1];
    else if (!std::strcmp(argv[i], "--jobs")) jobs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--lookups")) lookups = std::atoi(argv[i + 1]);
  }
  ft::log::set_level(ft::log::Level::kWarn);
  auto target = ft::parse_target_id(arch);
  auto dir = ft::make_temp_dir("ft-jit-bench-");
  if (!target.ok() || !dir.ok()) {
    std::fprintf(stderr, "jit_bench: %s\n", (!target.ok() ? target.status() : dir.status()).to_string().c_str());
    return 2;
  }
  auto cache = ft::CodeObjectCache::open(ft::CacheOptions{.dir = *dir});
  auto service = ft::CompileService::create(cache->get(), ft::CompileServiceOptions{.jobs = jobs});
  if (!service.ok()) {
    std::fprintf(stderr, "jit_bench: %s\n", service.status().to_string().c_str());
    return 2;
  }
  auto specs = ft::kernel_catalog(*target->facts);
  auto tc = (*service)->toolchain_for(*target);
  if (!tc.ok()) {
    std::fprintf(stderr, "jit_bench: %s\n", tc.status().to_string().c_str());
    return 2;
  }

  int failures = 0;
  auto t0 = Clock::now();
  std::vector<double> compile_ms = warm(**service, specs, *target, jobs, &failures);
  double cold_s = seconds_since(t0);
  t0 = Clock::now();
  int hot_failures = 0;
  warm(**service, specs, *target, jobs, &hot_failures);
  double hot_s = seconds_since(t0);

  // The same hot warm as a user runs it: a new process that opens the cache,
  // finds its toolchains and reads every row.
  t0 = Clock::now();
  auto cli = ft::run_process({"/usr/bin/env", "FT_CACHE_DIR=" + *dir, "FT_LOG_LEVEL=warn",
                              ft::executable_dir() + "/ft-jit", "warm", "--arch", arch},
                             "");
  double cli_s = seconds_since(t0);

  std::vector<double> lookup_us;
  for (int i = 0; i < lookups; ++i) {
    auto t = Clock::now();
    auto k = (*service)->get(specs[static_cast<size_t>(i) % specs.size()], *target);
    lookup_us.push_back(seconds_since(t) * 1e6);
    if (!k.ok() || !k->from_cache) ++hot_failures;
  }
  (void)ft::remove_tree(*dir);

  std::printf("jit_bench: %s with %s, %zu kernels, %d jobs on %u hardware threads\n", target->to_string().c_str(),
              (*tc)->identity().c_str(), specs.size(), jobs, std::thread::hardware_concurrency());
  std::printf("%-34s %12s %14s\n", "measure", "value", "target");
  std::printf("%-34s %10.2f s %14s\n", "cold warm (all compiled)", cold_s, "");
  std::printf("%-34s %9.0f ms %14s\n", "  per-kernel compile p50", percentile(compile_ms, 0.5), "");
  std::printf("%-34s %9.0f ms %14s\n", "  per-kernel compile max", percentile(compile_ms, 1.0), "");
  std::printf("%-34s %9.1f ms %14s\n", "hot warm, in process (all hits)", hot_s * 1e3, "");
  std::printf("%-34s %9.0f x %14s\n", "  cold / hot", cold_s / hot_s, ">= 50 x");
  std::printf("%-34s %9.1f ms %14s\n", "hot warm, ft-jit process", cli_s * 1e3, "");
  std::printf("%-34s %9.0f x %14s\n", "  cold / hot (process)", cold_s / cli_s, "");
  std::printf("%-34s %9.1f us %14s\n", "cache hit via get(), p50", percentile(lookup_us, 0.5), "< 1000 us");
  std::printf("%-34s %9.1f us %14s\n", "cache hit via get(), p99", percentile(lookup_us, 0.99), "");
  if (failures || hot_failures || !cli.ok() || !cli->exited_ok()) {
    std::printf("FAILURES: cold %d, hot %d, ft-jit %s\n", failures, hot_failures,
                cli.ok() ? cli->describe().c_str() : cli.status().message().c_str());
    return 1;
  }
  return 0;
}
