// Compiling a list of kernels for one target in parallel (cache hits are
// fetched), as `ft-jit warm` and the engine's startup do.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "jit/compile_service.h"

namespace ft {

struct WarmProgress {
  size_t done = 0;
  size_t total = 0;
  const KernelSpec* spec = nullptr;
  bool ok = true;
  bool from_cache = false;
};

struct WarmResult {
  size_t kernels = 0;
  int compiled = 0;
  int cached = 0;
  int failed = 0;
  std::vector<std::string> failures;  // compile errors, one line each
  std::vector<std::string> spills;    // kernels that compiled with register spills (they run, slower)
  std::vector<double> compile_ms;     // of the compiled ones, sorted
  double seconds = 0;
};

// Runs service.jobs() threads over `specs`; `on_progress` (may be null) is
// called under a lock after each kernel.
WarmResult warm_kernels(CompileService& service, const TargetId& target, const std::vector<KernelSpec>& specs,
                        const std::function<void(const WarmProgress&)>& on_progress = nullptr);

}  // namespace ft
