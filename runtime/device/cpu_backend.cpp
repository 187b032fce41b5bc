// The CPU backend: buffers are 64-byte aligned host memory and the ops run
// their C++ reference implementations (runtime/ops), on OpenMP threads.
#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "runtime/base/env.h"
#include "runtime/device/backend.h"

namespace ft {
namespace {

int64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return static_cast<int64_t>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGESIZE);
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(DeviceInfo info) : info_(std::move(info)) {}

  DeviceKind kind() const override { return DeviceKind::kCpu; }
  const DeviceInfo& info() const override { return info_; }
  Result<int64_t> free_bytes() override { return mem_available_bytes(); }

  // Device memory is host memory here: alloc_host's 64-byte aligned blocks.
  Result<DeviceBuffer> alloc(size_t bytes) override {
    FT_ASSIGN_OR_RETURN(HostBuffer h, alloc_host(bytes));
    return DeviceBuffer{reinterpret_cast<uint64_t>(h.ptr), bytes};
  }
  void free(DeviceBuffer b) override { free_host({reinterpret_cast<void*>(b.ptr), b.bytes}); }
  Status copy_to_device(DeviceBuffer dst, const void* src, size_t bytes) override {
    if (bytes > dst.bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "copy of {} bytes into a {}-byte buffer", bytes, dst.bytes);
    std::memcpy(reinterpret_cast<void*>(dst.ptr), src, bytes);
    return Status();
  }
  Status copy_to_host(void* dst, DeviceBuffer src, size_t bytes) override {
    if (bytes > src.bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "copy of {} bytes from a {}-byte buffer", bytes, src.bytes);
    std::memcpy(dst, reinterpret_cast<const void*>(src.ptr), bytes);
    return Status();
  }
  Status fill_bytes(DeviceBuffer dst, uint8_t value) override {
    std::memset(reinterpret_cast<void*>(dst.ptr), value, dst.bytes);
    return Status();
  }
  Status copy_on_device(DeviceBuffer dst, DeviceBuffer src, size_t bytes) override {
    if (bytes > dst.bytes || bytes > src.bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "copy of {} bytes overruns a buffer", bytes);
    std::memmove(reinterpret_cast<void*>(dst.ptr), reinterpret_cast<const void*>(src.ptr), bytes);
    return Status();
  }
  Status copy_2d(DeviceBuffer dst, size_t dst_pitch, DeviceBuffer src, size_t src_pitch, size_t width,
                 size_t rows) override {
    FT_RETURN_IF_ERROR(check_2d(dst, dst_pitch, src, src_pitch, width, rows));
    for (size_t r = 0; r < rows; ++r)
      std::memcpy(reinterpret_cast<char*>(dst.ptr) + r * dst_pitch, reinterpret_cast<const char*>(src.ptr) + r * src_pitch,
                  width);
    return Status();
  }
  Result<KernelHandle> load_kernel(const std::string&, const std::string& symbol) override {
    return FT_ERROR(ErrorCode::kUnsupported, "the cpu backend runs no compiled kernels (asked for {})", symbol);
  }
  Status launch(KernelHandle, const LaunchDims&, const void*, size_t) override {
    return FT_ERROR(ErrorCode::kUnsupported, "the cpu backend runs no compiled kernels");
  }
  Status synchronize() override { return Status(); }
  Status begin_capture() override { return FT_ERROR(ErrorCode::kUnsupported, "the cpu backend has no graphs"); }
  Result<GraphHandle> end_capture() override { return FT_ERROR(ErrorCode::kUnsupported, "the cpu backend has no graphs"); }
  Status replay(GraphHandle) override { return FT_ERROR(ErrorCode::kUnsupported, "the cpu backend has no graphs"); }
  void destroy_graph(GraphHandle) override {}
  Result<double> time_ms(const std::function<Status()>& work, int repeats) override {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < repeats; ++i) FT_RETURN_IF_ERROR(work());
    std::chrono::duration<double, std::milli> dt = std::chrono::steady_clock::now() - t0;
    return dt.count() / repeats;
  }

 private:
  DeviceInfo info_;
};

}  // namespace

Result<std::unique_ptr<Backend>> open_cpu_backend(int threads) {
  if (threads <= 0) {
    threads = env_int("FT_CPU_THREADS", [](int v) { return v >= 1; }, "a positive number of threads");
    if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  }
  omp_set_num_threads(threads > 0 ? threads : 1);
  DeviceInfo info;
  info.name = fmt::format("CPU ({} threads)", threads);
  info.arch = "cpu";
  info.total_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  info.compute_units = threads;
  return std::unique_ptr<Backend>(new CpuBackend(std::move(info)));
}

Result<std::unique_ptr<Backend>> open_backend(std::string_view device) {
  auto ordinal_of = [&](std::string_view prefix) -> Result<int> {
    std::string_view rest = device.substr(prefix.size());
    if (rest.empty()) return 0;
    if (rest[0] != ':' || rest.size() == 1) return FT_ERROR(ErrorCode::kInvalidArgument, "bad device '{}': expected {}:N", device, prefix);
    int n = 0;
    for (char c : rest.substr(1)) {
      if (c < '0' || c > '9') return FT_ERROR(ErrorCode::kInvalidArgument, "bad device '{}': expected {}:N", device, prefix);
      n = n * 10 + (c - '0');
    }
    return n;
  };
  if (device == "cpu") return open_cpu_backend();
  if (device.starts_with("cuda")) {
    FT_ASSIGN_OR_RETURN(int n, ordinal_of("cuda"));
    return open_cuda_backend(n);
  }
  if (device.starts_with("hip")) {
    FT_ASSIGN_OR_RETURN(int n, ordinal_of("hip"));
    return open_hip_backend(n);
  }
  if (device == "auto" || device.empty()) {
    if (auto cuda = open_cuda_backend(0); cuda.ok()) return cuda;
    if (auto hip = open_hip_backend(0); hip.ok()) return hip;
    return open_cpu_backend();
  }
  return FT_ERROR(ErrorCode::kInvalidArgument, "unknown device '{}': use cpu, cuda:N, hip:N or auto", device);
}

}  // namespace ft
