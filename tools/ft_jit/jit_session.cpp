#include "tools/ft_jit/jit_session.h"

#include <cstdio>
#include <filesystem>

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

}  // namespace ft::tools
