#include "runtime/ops/op_context.h"

#include <algorithm>

namespace ft {

Result<const OpContext::Loaded*> OpContext::load(const KernelSpec& spec) {
  if (auto it = loaded_.find(spec.name); it != loaded_.end()) return &it->second;
  if (recorder_) {
    recorder_->push_back(spec);
    return &loaded_.emplace(spec.name, Loaded{}).first->second;
  }
  if (on_cpu() || !jit_ || !target_.facts)
    return FT_ERROR(ErrorCode::kInternal, "kernel {} requested on a context without a GPU target", spec.name);
  FT_ASSIGN_OR_RETURN(CompiledKernel compiled, jit_->get(spec, target_));
  FT_ASSIGN_OR_RETURN(KernelHandle handle, backend_->load_kernel(compiled.code_object, compiled.symbol));
  const TargetFacts& t = *target_.facts;
  const int waves = occupancy_waves(t, compiled.resources, spec.block_threads);
  const int waves_per_block = (spec.block_threads + t.wave_size - 1) / t.wave_size;
  const int per_cu = waves * t.simds_per_cu / waves_per_block;
  Loaded l{handle, std::max(1, per_cu * std::max(1, backend_->info().compute_units))};
  return &loaded_.emplace(spec.name, l).first->second;
}

Result<KernelHandle> OpContext::kernel(const KernelSpec& spec) {
  FT_ASSIGN_OR_RETURN(const Loaded* l, load(spec));
  return l->handle;
}

Result<int> OpContext::resident_blocks(const KernelSpec& spec) {
  FT_ASSIGN_OR_RETURN(const Loaded* l, load(spec));
  return l->resident_blocks;
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
