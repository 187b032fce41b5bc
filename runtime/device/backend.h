// One interface over the devices ft runs on: device query, buffers, copies,
// code-object loading, kernel launch and timing.
//
// Backends: "cuda:N" and "hip:N" (driver / runtime APIs through dlopen), "cpu" (host memory; the ops
// run their C++ reference implementations, multithreaded). A DeviceBuffer's
// ptr is a device address on a GPU and a host address on the CPU backend.
//
// Thread safety: a Backend is used from one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/base/status.h"

namespace ft {

enum class DeviceKind { kCpu, kCuda, kHip };

struct DeviceInfo {
  std::string name;        // "NVIDIA H200"
  std::string arch;        // target name in gfx_targets: "sm_90", "gfx1150"
  int64_t total_bytes = 0;
  int compute_units = 0;   // SMs or CUs
};

struct DeviceBuffer {
  uint64_t ptr = 0;        // device address
  size_t bytes = 0;
};

// `bytes` bytes of b from `offset` on (the caller keeps it in range).
inline DeviceBuffer slice(DeviceBuffer b, size_t offset, size_t bytes) { return {b.ptr + offset, bytes}; }

// Host memory for copies the host queues without waiting (alloc_host):
// page-locked on GPUs, plain memory on the CPU backend.
struct HostBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
};

struct KernelHandle {
  void* function = nullptr;
};

// An instantiated graph of captured launches (CUgraphExec / hipGraphExec_t).
struct GraphHandle {
  void* exec = nullptr;
};

struct LaunchDims {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceKind kind() const = 0;
  // False for the planning stand-in (make_planning_backend), whose buffers
  // hold nothing: callers skip the host work of preparing their contents.
  virtual bool holds_data() const { return true; }
  virtual const DeviceInfo& info() const = 0;
  // Bytes that can still be allocated now (for sizing the KV cache).
  virtual Result<int64_t> free_bytes() = 0;
  virtual Result<DeviceBuffer> alloc(size_t bytes) = 0;
  virtual void free(DeviceBuffer buffer) = 0;
  virtual Status copy_to_device(DeviceBuffer dst, const void* src, size_t bytes) = 0;
  virtual Status copy_to_host(void* dst, DeviceBuffer src, size_t bytes) = 0;
  // Host memory the device copies from and to directly (page-locked on
  // GPUs, unless FT_PINNED_HOST=0; the CPU backend and that setting give
  // plain memory). Free it with free_host.
  virtual Result<HostBuffer> alloc_host(size_t bytes);
  virtual void free_host(HostBuffer buffer);
  // Queued copies between alloc_host memory and the device, in stream order
  // with launches: they may return before the copy is done, so the host
  // leaves `src` unchanged (upload) and does not read `dst` (download) until
  // synchronize(). Not capturable. The default copies synchronously.
  virtual Status upload(DeviceBuffer dst, HostBuffer src, size_t bytes);
  virtual Status download(HostBuffer dst, DeviceBuffer src, size_t bytes);
  virtual Status fill_bytes(DeviceBuffer dst, uint8_t value) = 0;
  virtual Status copy_on_device(DeviceBuffer dst, DeviceBuffer src, size_t bytes) = 0;
  // `rows` rows of `width` bytes from src (rows `src_pitch` bytes apart) to
  // dst (rows `dst_pitch` apart), both on the device: a column block of a
  // row-major matrix.
  virtual Status copy_2d(DeviceBuffer dst, size_t dst_pitch, DeviceBuffer src, size_t src_pitch, size_t width,
                         size_t rows) = 0;
  // Loads a code object (cubin / hsaco) and finds `symbol` in it. The module
  // lives as long as the backend.
  virtual Result<KernelHandle> load_kernel(const std::string& code_object, const std::string& symbol) = 0;
  // Launches `kernel` with one by-value argument struct of `args_bytes` bytes.
  virtual Status launch(KernelHandle kernel, const LaunchDims& dims, const void* args, size_t args_bytes) = 0;
  // Whether later launches may overlap the previous kernel's tail
  // (programmatic dependent launch on sm_90+; on by default where the device
  // has it, memory order unchanged). Kernels that fill the GPU lose by it:
  // early-launched blocks hold SM resources while they wait.
  virtual void set_launch_overlap(bool) {}
  virtual Status synchronize() = 0;
  // Graph capture: between begin_capture() and end_capture(), launches and
  // device-side copies are recorded instead of run; replay() runs them again
  // with the same arguments (the buffers' contents may change between
  // replays). Host copies are not capturable. kUnsupported on the CPU.
  virtual Status begin_capture() = 0;
  virtual Result<GraphHandle> end_capture() = 0;
  virtual Status replay(GraphHandle graph) = 0;
  virtual void destroy_graph(GraphHandle graph) = 0;
  // Times `repeats` back-to-back runs of `work` with device events; returns
  // the mean milliseconds per run.
  virtual Result<double> time_ms(const std::function<Status()>& work, int repeats) = 0;
};

// "cuda:0". A missing driver or device is a clear error.
Result<std::unique_ptr<Backend>> open_cuda_backend(int ordinal);
// "hip:N": the HIP runtime through dlopen (libamdhip64.so.7/.6/.5); the gfx
// target comes from the kernel driver's topology (/sys/class/kfd).
Result<std::unique_ptr<Backend>> open_hip_backend(int ordinal);
// Host memory; ops run on `threads` OpenMP threads (0: FT_CPU_THREADS, else
// every core).
Result<std::unique_ptr<Backend>> open_cpu_backend(int threads = 0);
// Checks a copy_2d request against the buffers (shared by the backends).
Status check_2d(DeviceBuffer dst, size_t dst_pitch, DeviceBuffer src, size_t src_pitch, size_t width, size_t rows);

// A backend that runs nothing: buffers are fake addresses, copies and
// launches do nothing. It stands in for a GPU of `arch` when planning which
// kernels a model needs (ft-jit warm --model) on a machine without one.
std::unique_ptr<Backend> make_planning_backend(DeviceKind kind, const std::string& arch);
// "cpu", "cuda:N", "hip:N", "cuda"/"hip" (= :0) or "auto" (the first GPU
// found, NVIDIA then AMD, else the CPU). An unknown name or a missing device is an error naming what exists.
Result<std::unique_ptr<Backend>> open_backend(std::string_view device);

}  // namespace ft
