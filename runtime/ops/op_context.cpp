#include "runtime/ops/op_context.h"

namespace ft {

Result<KernelHandle> OpContext::kernel(const KernelSpec& spec) {
  if (auto it = loaded_.find(spec.name); it != loaded_.end()) return it->second;
  FT_ASSIGN_OR_RETURN(CompiledKernel compiled, jit_->get(spec, target_));
  FT_ASSIGN_OR_RETURN(KernelHandle handle, backend_->load_kernel(compiled.code_object, compiled.symbol));
  loaded_.emplace(spec.name, handle);
  return handle;
}

}  // namespace ft
