// What warm and inspect share: the cache, the compile service and the target.
#pragma once

#include <memory>
#include <string>

#include "cache/code_object_cache.h"
#include "jit/compile_service.h"

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

}  // namespace ft::tools
