// Everything an OpContext needs on one device, opened together: the backend,
// and on GPUs the code-object cache and the compile service. What tools,
// checks, benchmarks and the engine open before they run ops.
#pragma once

#include <memory>
#include <string>

#include "runtime/ops/op_context.h"

namespace ft {

struct OpSession {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<CodeObjectCache> cache;  // null on the CPU, or when the cache cannot open
  std::unique_ptr<CompileService> jit;     // null on the CPU
  std::unique_ptr<OpContext> ops;          // declared last: destroyed first
};

// `device`: cpu | cuda:N | hip:N | auto. The cache is FT_CACHE_DIR's (an
// unopenable cache is a warning; kernels are then compiled on every start).
Result<OpSession> open_op_session(const std::string& device, const CompileServiceOptions& jit_options = {});

}  // namespace ft
