// What warm and inspect share: the cache, the compile service and the target.
#pragma once

#include <memory>
#include <string>

#include "cache/code_object_cache.h"
#include "jit/compile_service.h"
#include "jit/kernel_spec.h"
#include "runtime/base/status.h"
#include "runtime/engine/kernel_plan.h"
#include "tools/common/cli_args.h"

namespace ft::tools {

struct JitSession {
  std::unique_ptr<CodeObjectCache> cache;
  std::unique_ptr<CompileService> service;
  TargetId target;
};

// Opens the cache and the compile service for `arch` ("gfx90a:xnack-").
// Prints the reason and returns null on failure.
std::unique_ptr<JitSession> open_session(const std::string& arch, int jobs, const std::string& toolchain);
std::unique_ptr<CodeObjectCache> open_cache_or_report();

// The options that pick the kernels warm and inspect work on, with --kernel.
static_assert(PlanOptions{}.max_batch == 32 && PlanOptions{}.max_context == 4096,
              "kKernelSelectionHelp states the defaults of --max-batch and --ctx");
constexpr const char* kKernelSelectionHelp =
    "  --model PATH    exactly the kernels this model (GGUF file or safetensors folder)\n"
    "                  needs, as ft-serve would run it; default: the whole catalog\n"
    "  --max-batch N   with --model: sequences per step to plan for (default 32)\n"
    "  --ctx N         with --model: context length to plan for (default 4096)\n"
    "  --kernel SUBSTR only kernels whose name contains SUBSTR\n";

// The plan options of --max-batch and --ctx (ft-serve's defaults otherwise);
// numbers out of range are usage errors, checked before any work.
Result<PlanOptions> kernel_plan_options(const CliArgs& args);
// The kernels for `target` that --model (its plan under `plan`) or else the
// catalog gives, those whose name contains --kernel. An unreadable model is
// an error that names it.
Result<std::vector<KernelSpec>> selected_kernels(const CliArgs& args, const PlanOptions& plan,
                                                 const TargetId& target);

}  // namespace ft::tools
