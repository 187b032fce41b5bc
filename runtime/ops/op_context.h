// What a host launcher needs to run an op on a device: the backend, the
// compile service and the target, plus the kernels already loaded.
#pragma once

#include <map>
#include <string>

#include "jit/compile_service.h"
#include "runtime/device/backend.h"

namespace ft {

class OpContext {
 public:
  OpContext(Backend* backend, CompileService* jit, TargetId target)
      : backend_(backend), jit_(jit), target_(std::move(target)) {}

  Backend& backend() { return *backend_; }
  const TargetFacts& facts() const { return *target_.facts; }
  // Compiles (or fetches from the cache) and loads `spec` once per context.
  Result<KernelHandle> kernel(const KernelSpec& spec);

 private:
  Backend* backend_;
  CompileService* jit_;
  TargetId target_;
  std::map<std::string, KernelHandle> loaded_;
};

}  // namespace ft
