// What a host launcher needs to run an op on a device: the backend, the
// compile service and the target, plus the kernels already loaded. On the CPU
// backend there is no compiler and no target: launchers run their C++
// reference on host memory instead (f32 activations).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "jit/compile_service.h"
#include "runtime/base/dtype.h"
#include "runtime/device/backend.h"

namespace ft {

class OpContext {
 public:
  OpContext(Backend* backend, CompileService* jit, TargetId target)
      : backend_(backend), jit_(jit), target_(std::move(target)) {}
  // The CPU backend.
  explicit OpContext(Backend* backend) : backend_(backend) {}
  ~OpContext();
  OpContext(const OpContext&) = delete;
  OpContext& operator=(const OpContext&) = delete;

  Backend& backend() { return *backend_; }
  bool on_cpu() const { return backend_->kind() == DeviceKind::kCpu; }
  // Only for GPU contexts.
  const TargetFacts& facts() const { return *target_.facts; }
  const TargetId& target() const { return target_; }
  // Compiles (or fetches from the cache) and loads `spec` once per context.
  Result<KernelHandle> kernel(const KernelSpec& spec);
  // How many blocks of `spec` (at spec.block_threads) stay resident at once
  // on the whole device: the per-CU occupancy from the compiled kernel's
  // registers and LDS times the CU count, at least 1. For persistent kernels
  // that size their grid to it.
  Result<int> resident_blocks(const KernelSpec& spec);

  // A device scratch buffer of at least `bytes`, owned by the context and
  // reused by every op that needs temporary space (it grows, never shrinks;
  // contents do not survive between ops). Grow it before a graph capture.
  Result<DeviceBuffer> scratch(size_t bytes);
  // The scratch buffer as it stands (null before the first use): a captured
  // graph that used it is stale once this changes.
  DeviceBuffer current_scratch() const { return scratch_; }

  // Planning: with a recorder set, kernel() only records each distinct spec
  // (in first-use order) and hands back a null handle, so a forward pass on
  // a planning backend lists exactly the kernels a real one would run.
  void record_kernels(std::vector<KernelSpec>* recorder) { recorder_ = recorder; }

 private:
  Backend* backend_;
  CompileService* jit_ = nullptr;
  TargetId target_;
  struct Loaded {
    KernelHandle handle;
    int resident_blocks = 1;
  };
  Result<const Loaded*> load(const KernelSpec& spec);
  std::map<std::string, Loaded> loaded_;
  std::vector<KernelSpec>* recorder_ = nullptr;
  DeviceBuffer scratch_;
};

// A CPU-backend buffer as a host pointer.
template <typename T>
T* host_ptr(DeviceBuffer b) {
  return reinterpret_cast<T*>(b.ptr);
}

// On the CPU backend activations are f32; anything else is kUnsupported.
Status check_cpu_dtype(const char* op, DType dtype);

}  // namespace ft
