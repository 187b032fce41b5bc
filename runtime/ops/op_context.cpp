#include "runtime/ops/op_context.h"

namespace ft {

Result<KernelHandle> OpContext::kernel(const KernelSpec& spec) {
  if (recorder_) {
    if (loaded_.emplace(spec.name, KernelHandle{}).second) recorder_->push_back(spec);
    return KernelHandle{};
  }
  if (on_cpu() || !jit_ || !target_.facts)
    return FT_ERROR(ErrorCode::kInternal, "kernel {} requested on a context without a GPU target", spec.name);
  if (auto it = loaded_.find(spec.name); it != loaded_.end()) return it->second;
  FT_ASSIGN_OR_RETURN(CompiledKernel compiled, jit_->get(spec, target_));
  FT_ASSIGN_OR_RETURN(KernelHandle handle, backend_->load_kernel(compiled.code_object, compiled.symbol));
  loaded_.emplace(spec.name, handle);
  return handle;
}

OpContext::~OpContext() {
  if (scratch_.ptr) backend_->free(scratch_);
}

Result<DeviceBuffer> OpContext::scratch(size_t bytes) {
  if (scratch_.ptr && scratch_.bytes >= bytes) return scratch_;
  if (scratch_.ptr) {
    FT_RETURN_IF_ERROR(backend_->synchronize());  // work in flight may still use it
    backend_->free(scratch_);
    scratch_ = {};
  }
  FT_ASSIGN_OR_RETURN(scratch_, backend_->alloc(bytes));
  return scratch_;
}

Status check_cpu_dtype(const char* op, DType dtype) {
  if (dtype == DType::kF32) return Status();
  return FT_ERROR(ErrorCode::kUnsupported, "{}: the cpu backend computes in f32, not {}", op, dtype_name(dtype));
}

}  // namespace ft
