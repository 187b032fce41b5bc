#include "tools/ft_jit/jit_session.h"

#include <cstdio>
#include <filesystem>

#include "jit/catalog.h"
#include "runtime/engine/kernel_plan.h"
#include "runtime/model/weights.h"

namespace ft::tools {

std::unique_ptr<CodeObjectCache> open_cache_or_report() {
  auto cache = CodeObjectCache::open(CacheOptions{});
  if (!cache.ok()) {
    std::fprintf(stderr, "ft-jit: cannot open the code-object cache: %s\n", cache.status().to_string().c_str());
    return nullptr;
  }
  return std::move(cache).value();
}

std::unique_ptr<JitSession> open_session(const std::string& arch, int jobs, const std::string& toolchain) {
  auto target = parse_target_id(arch);
  if (!target.ok()) {
    std::fprintf(stderr, "ft-jit: %s\n", target.status().message().c_str());
    return nullptr;
  }
  auto session = std::make_unique<JitSession>();
  session->target = *target;
  session->cache = open_cache_or_report();
  if (!session->cache) return nullptr;
  CompileServiceOptions options;
  options.jobs = jobs;
  options.toolchain = toolchain;
  if (!session->cache->in_memory())
    options.probe_file = std::filesystem::path(session->cache->path()).parent_path() / "toolchain-probes.json";
  auto service = CompileService::create(session->cache.get(), options);
  if (!service.ok()) {
    std::fprintf(stderr, "ft-jit: %s\n", service.status().message().c_str());
    return nullptr;
  }
  session->service = std::move(service).value();
  return session;
}

Result<PlanOptions> kernel_plan_options(const CliArgs& args) {
  PlanOptions po;
  FT_ASSIGN_OR_RETURN(const int64_t max_batch, args.get_int("--max-batch", po.max_batch));
  FT_ASSIGN_OR_RETURN(const int64_t ctx, args.get_int("--ctx", po.max_context));
  if (max_batch < 1 || max_batch > 4096 || ctx < 2 || ctx > (1 << 24))
    return FT_ERROR(ErrorCode::kInvalidArgument, "--max-batch must be 1 to 4096 and --ctx 2 to 16777216");
  po.max_batch = static_cast<int>(max_batch);
  po.max_context = static_cast<int>(ctx);
  return po;
}

Result<std::vector<KernelSpec>> selected_kernels(const CliArgs& args, const PlanOptions& plan_options,
                                                 const TargetId& target) {
  std::vector<KernelSpec> all;
  if (args.has("--model")) {
    FT_ASSIGN_OR_RETURN(WeightSet weights, WeightSet::open(args.get("--model")));
    auto plan = plan_kernels(weights, target, plan_options);
    if (!plan.ok())
      return FT_ERROR(plan.status().code(), "planning the kernels of {}: {}", args.get("--model"),
                      plan.status().message());
    all = std::move(*plan);
  } else {
    all = kernel_catalog(*target.facts);
  }
  std::vector<KernelSpec> specs;
  for (auto& s : all)
    if (s.name.find(args.get("--kernel")) != std::string::npos) specs.push_back(std::move(s));
  return specs;
}

}  // namespace ft::tools
