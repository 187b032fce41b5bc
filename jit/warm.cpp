#include "jit/warm.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace ft {

WarmResult warm_kernels(CompileService& service, const TargetId& target, const std::vector<KernelSpec>& specs,
                        const std::function<void(const WarmProgress&)>& on_progress) {
  WarmResult r;
  r.kernels = specs.size();
  std::atomic<size_t> next{0};
  std::mutex mu;
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (size_t i; (i = next++) < specs.size();) {
      auto k = service.get(specs[i], target);
      std::lock_guard lock(mu);
      WarmProgress p{0, specs.size(), &specs[i], k.ok(), k.ok() && k->from_cache};
      if (!k.ok()) {
        ++r.failed;
        r.failures.push_back(k.status().message());
      } else if (k->from_cache) {
        ++r.cached;
      } else {
        ++r.compiled;
        r.compile_ms.push_back(k->compile_ms);
        if (k->resources.has_spills())
          r.spills.push_back(fmt::format("{} spills registers on {}", specs[i].name, target.to_string()));
      }
      p.done = static_cast<size_t>(r.compiled + r.cached + r.failed);
      if (on_progress) on_progress(p);
    }
  };
  std::vector<std::thread> threads;
  const int n = std::max(1, std::min<int>(service.jobs(), static_cast<int>(specs.size())));
  for (int i = 0; i < n; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::sort(r.compile_ms.begin(), r.compile_ms.end());
  return r;
}

}  // namespace ft
