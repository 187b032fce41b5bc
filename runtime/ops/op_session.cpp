#include "runtime/ops/op_session.h"

#include "runtime/base/log.h"

namespace ft {

Result<OpSession> open_op_session(const std::string& device, const CompileServiceOptions& jit_options) {
  OpSession s;
  FT_ASSIGN_OR_RETURN(s.backend, open_backend(device));
  if (s.backend->kind() == DeviceKind::kCpu) {
    s.ops = std::make_unique<OpContext>(s.backend.get());
    return s;
  }
  FT_ASSIGN_OR_RETURN(TargetId target, parse_target_id(s.backend->info().arch));
  if (auto cache = CodeObjectCache::open(CacheOptions{}); cache.ok()) s.cache = std::move(*cache);
  else log::warn("kernel cache unavailable ({}); kernels are compiled on every start", cache.status().message());
  FT_ASSIGN_OR_RETURN(s.jit, CompileService::create(s.cache.get(), jit_options));
  s.ops = std::make_unique<OpContext>(s.backend.get(), s.jit.get(), std::move(target));
  return s;
}

}  // namespace ft
