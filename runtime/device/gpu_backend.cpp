// The GPU backends: the CUDA driver API (dlopen "libcuda.so.1") and the HIP
// runtime (dlopen "libamdhip64.so.7/.6/.5"). Both expose the same calls with
// the same shapes (module load, launch, async copies, events, stream capture
// and graphs), so one class drives either through a table of entry points.
// ft links no vendor library: the same binary runs where only a driver is.
//
// Everything runs on one non-blocking stream the backend owns, so a decode
// step can be captured into a graph and replayed.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <filesystem>
#include <vector>

#include "runtime/base/env.h"
#include "runtime/device/backend.h"
#include "runtime/device/kfd_topology.h"

namespace ft {
namespace {

using Ptr = unsigned long long;  // CUdeviceptr / hipDeviceptr_t (a pointer: same ABI on x86-64)
using Handle = void*;

// CUlaunchAttribute and CUlaunchConfig as cuda.h (12.0 and later) lays them
// out: an enum id padded to 8 bytes and a 64-byte value union.
struct CuLaunchAttribute {
  int id;
  int pad;
  unsigned value[16];
};
static_assert(sizeof(CuLaunchAttribute) == 72);
struct CuLaunchConfig {
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
  Handle stream;
  CuLaunchAttribute* attrs;
  unsigned num_attrs;
};
static_assert(sizeof(CuLaunchConfig) == 56);

// Entry points shared by both APIs (int results: CUresult / hipError_t, 0 = success).
struct GpuApi {
  const char* vendor;  // "cuda" or "hip"
  int (*init)(unsigned);
  int (*device_get_count)(int*);
  int (*device_get)(int*, int);
  int (*device_get_name)(char*, int, int);
  int (*device_get_attribute)(int*, int, int);
  int (*device_total_mem)(size_t*, int);
  int (*mem_get_info)(size_t*, size_t*);
  int (*mem_alloc)(Ptr*, size_t);
  int (*mem_free)(Ptr);
  // Page-locked host memory (cuMemHostAlloc / hipHostMalloc, flags 0); optional.
  int (*host_alloc)(void**, size_t, unsigned) = nullptr;
  int (*host_free)(void*) = nullptr;
  int (*memcpy_htod_async)(Ptr, const void*, size_t, Handle);
  int (*memcpy_dtoh_async)(void*, Ptr, size_t, Handle);
  int (*memcpy_dtod_async)(Ptr, Ptr, size_t, Handle);
  int (*memset_d8_async)(Ptr, unsigned char, size_t, Handle);
  // 2-D device copies: cuMemcpy2DAsync takes a descriptor, hipMemcpy2DAsync
  // plain arguments.
  int (*cu_memcpy_2d_async)(const void*, Handle) = nullptr;
  int (*hip_memcpy_2d_async)(Ptr, size_t, Ptr, size_t, size_t, size_t, int, Handle) = nullptr;
  int (*module_load_data)(Handle*, const void*);
  int (*module_unload)(Handle);
  int (*module_get_function)(Handle*, Handle, const char*);
  int (*launch_kernel)(Handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Handle, void**,
                       void**);
  // cuLaunchKernelEx (CUDA 12+), for programmatic dependent launch; optional.
  int (*cu_launch_kernel_ex)(const void*, Handle, void**, void**) = nullptr;
  int (*stream_create)(Handle*, unsigned);
  int (*stream_destroy)(Handle);
  int (*stream_synchronize)(Handle);
  int (*stream_begin_capture)(Handle, int);
  int (*stream_end_capture)(Handle, Handle*);
  int (*graph_instantiate)(Handle*, Handle, unsigned long long);
  int (*graph_launch)(Handle, Handle);
  int (*graph_exec_destroy)(Handle);
  int (*graph_destroy)(Handle);
  int (*event_create)(Handle*, unsigned);
  int (*event_record)(Handle, Handle);
  int (*event_synchronize)(Handle);
  int (*event_elapsed)(float*, Handle, Handle);
  int (*event_destroy)(Handle);
  // CUDA: context per device. HIP: the current device.
  int (*primary_ctx_retain)(Handle*, int) = nullptr;
  int (*primary_ctx_release)(int) = nullptr;
  int (*ctx_set_current)(Handle) = nullptr;
  int (*set_device)(int) = nullptr;
  // Error text: cuGetErrorString(rc, &s) or hipGetErrorString(rc).
  int (*cu_error_string)(int, const char**) = nullptr;
  const char* (*hip_error_string)(int) = nullptr;
  int multiprocessor_attribute = 0;
  int stream_non_blocking = 1;
  int capture_mode_relaxed = 2;  // both: 2 = relaxed (other threads may use the API)

  std::string error_text(int rc) const {
    const char* s = nullptr;
    if (cu_error_string) cu_error_string(rc, &s);
    if (hip_error_string) s = hip_error_string(rc);
    return s ? s : "unknown error";
  }
};

template <typename Fn>
bool bind(void* lib, std::initializer_list<const char*> names, Fn*& out) {
  for (const char* n : names)
    if ((out = reinterpret_cast<Fn*>(::dlsym(lib, n)))) return true;
  return false;
}

class GpuBackend final : public Backend {
 public:
  GpuBackend(GpuApi api, DeviceKind kind, int ordinal, Handle ctx, DeviceInfo info)
      : api_(api), kind_(kind), ordinal_(ordinal), ctx_(ctx), info_(std::move(info)) {}
  ~GpuBackend() override {
    make_current();
    if (stream_) {
      api_.stream_synchronize(stream_);
      api_.stream_destroy(stream_);
    }
    for (Handle m : modules_) api_.module_unload(m);
    for (void* p : pinned_blocks_) api_.host_free(p);
    if (api_.primary_ctx_release) api_.primary_ctx_release(ordinal_);
  }

  Status start() {
    make_current();
    // Programmatic dependent launch on sm_90 and later (FT_PDL=0 turns it off).
    int sm = 0;
    if (kind_ == DeviceKind::kCuda && api_.cu_launch_kernel_ex && std::sscanf(info_.arch.c_str(), "sm_%d", &sm) == 1)
      pdl_ = sm >= 90 && !env_off("FT_PDL");
    pinned_ = api_.host_alloc && api_.host_free && !env_off("FT_PINNED_HOST");
    return check(api_.stream_create(&stream_, api_.stream_non_blocking), "stream create");
  }

  DeviceKind kind() const override { return kind_; }
  const DeviceInfo& info() const override { return info_; }
  Result<int64_t> free_bytes() override {
    bind();
    size_t free = 0, total = 0;
    FT_RETURN_IF_ERROR(check(api_.mem_get_info(&free, &total), "memory info"));
    return static_cast<int64_t>(free);
  }

  Result<DeviceBuffer> alloc(size_t bytes) override {
    bind();
    Ptr p = 0;
    FT_RETURN_IF_ERROR(check(api_.mem_alloc(&p, bytes ? bytes : 1), fmt::format("allocating {} bytes", bytes)));
    return DeviceBuffer{p, bytes};
  }
  void free(DeviceBuffer b) override {
    bind();
    if (b.ptr) api_.mem_free(b.ptr);
  }
  Status copy_to_device(DeviceBuffer dst, const void* src, size_t bytes) override {
    bind();
    if (bytes > dst.bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "copy of {} bytes into a {}-byte buffer", bytes, dst.bytes);
    FT_RETURN_IF_ERROR(check(api_.memcpy_htod_async(dst.ptr, src, bytes, stream_), "host-to-device copy"));
    return synchronize();  // the source may be pageable memory the caller reuses
  }
  Status copy_to_host(void* dst, DeviceBuffer src, size_t bytes) override {
    bind();
    if (bytes > src.bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "copy of {} bytes from a {}-byte buffer", bytes, src.bytes);
    FT_RETURN_IF_ERROR(check(api_.memcpy_dtoh_async(dst, src.ptr, bytes, stream_), "device-to-host copy"));
    return synchronize();
  }
  Result<HostBuffer> alloc_host(size_t bytes) override {
    if (!pinned_) return Backend::alloc_host(bytes);
    bind();
    void* p = nullptr;
    // Where memory cannot be locked (a low RLIMIT_MEMLOCK), plain memory
    // serves: its copies only wait.
    if (api_.host_alloc(&p, bytes ? bytes : 1, 0) != 0 || !p) return Backend::alloc_host(bytes);
    pinned_blocks_.insert(p);
    return HostBuffer{p, bytes};
  }
  void free_host(HostBuffer b) override {
    if (!pinned_blocks_.erase(b.ptr)) return Backend::free_host(b);
    bind();
    api_.host_free(b.ptr);
  }
  // From page-locked memory the copy is queued and the call returns; from
  // plain memory (FT_PINNED_HOST=0) it is the synchronous copy.
  Status upload(DeviceBuffer dst, HostBuffer src, size_t bytes) override {
    if (!pinned_blocks_.count(src.ptr)) return Backend::upload(dst, src, bytes);
    FT_RETURN_IF_ERROR(queued_copy_fits("upload", bytes, src.bytes, dst.bytes));
    return check(api_.memcpy_htod_async(dst.ptr, src.ptr, bytes, stream_), "host-to-device copy");
  }
  Status download(HostBuffer dst, DeviceBuffer src, size_t bytes) override {
    if (!pinned_blocks_.count(dst.ptr)) return Backend::download(dst, src, bytes);
    FT_RETURN_IF_ERROR(queued_copy_fits("download", bytes, dst.bytes, src.bytes));
    return check(api_.memcpy_dtoh_async(dst.ptr, src.ptr, bytes, stream_), "device-to-host copy");
  }
  Status fill_bytes(DeviceBuffer dst, uint8_t value) override {
    bind();
    return check(api_.memset_d8_async(dst.ptr, value, dst.bytes, stream_), "memset");
  }
  Status copy_on_device(DeviceBuffer dst, DeviceBuffer src, size_t bytes) override {
    bind();
    if (bytes > dst.bytes || bytes > src.bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "device copy of {} bytes overruns a buffer", bytes);
    return check(api_.memcpy_dtod_async(dst.ptr, src.ptr, bytes, stream_), "device-to-device copy");
  }
  Status copy_2d(DeviceBuffer dst, size_t dst_pitch, DeviceBuffer src, size_t src_pitch, size_t width,
                 size_t rows) override {
    bind();
    FT_RETURN_IF_ERROR(check_2d(dst, dst_pitch, src, src_pitch, width, rows));
    if (rows == 0 || width == 0) return Status();
    if (api_.hip_memcpy_2d_async)
      return check(api_.hip_memcpy_2d_async(dst.ptr, dst_pitch, src.ptr, src_pitch, width, rows, 3 /* device to device */,
                                            stream_),
                   "2-D device copy");
    // CUDA_MEMCPY2D: source fields, destination fields, then the extent.
    struct Side {
      size_t x_bytes, y;
      int memory_type;  // CU_MEMORYTYPE_DEVICE = 2
      const void* host;
      Ptr device;
      void* array;
      size_t pitch;
    };
    struct {
      Side src, dst;
      size_t width_bytes, height;
    } desc{{0, 0, 2, nullptr, src.ptr, nullptr, src_pitch}, {0, 0, 2, nullptr, dst.ptr, nullptr, dst_pitch}, width, rows};
    return check(api_.cu_memcpy_2d_async(&desc, stream_), "2-D device copy");
  }
  Result<KernelHandle> load_kernel(const std::string& code_object, const std::string& symbol) override {
    bind();
    Handle m = nullptr;
    FT_RETURN_IF_ERROR(check(api_.module_load_data(&m, code_object.data()), "module load"));
    modules_.push_back(m);
    Handle f = nullptr;
    FT_RETURN_IF_ERROR(check(api_.module_get_function(&f, m, symbol.c_str()), "module get function (" + symbol + ")"));
    return KernelHandle{f};
  }
  Status launch(KernelHandle k, const LaunchDims& d, const void* args, size_t) override {
    bind();
    void* params[] = {const_cast<void*>(args)};
    if (pdl_ && overlap_) {
      // Programmatic stream serialization: the kernel may launch while the
      // previous one finishes; its entry waits for it (kernel_src/ft_device.h).
      CuLaunchAttribute attr{};
      attr.id = 6;  // CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
      attr.value[0] = 1;
      const CuLaunchConfig config{d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1], d.block[2],
                                  d.shared_bytes, stream_, &attr, 1};
      return check(api_.cu_launch_kernel_ex(&config, k.function, params, nullptr), "kernel launch");
    }
    return check(api_.launch_kernel(k.function, d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1], d.block[2],
                                    d.shared_bytes, stream_, params, nullptr),
                 "kernel launch");
  }
  void set_launch_overlap(bool on) override { overlap_ = on; }
  Status synchronize() override {
    bind();
    return check(api_.stream_synchronize(stream_), "stream synchronize");
  }

  Status begin_capture() override {
    bind();
    return check(api_.stream_begin_capture(stream_, api_.capture_mode_relaxed), "begin stream capture");
  }
  Result<GraphHandle> end_capture() override {
    bind();
    Handle graph = nullptr, exec = nullptr;
    FT_RETURN_IF_ERROR(check(api_.stream_end_capture(stream_, &graph), "end stream capture"));
    Status s = check(api_.graph_instantiate(&exec, graph, 0), "graph instantiate");
    api_.graph_destroy(graph);
    if (!s.ok()) return s;
    return GraphHandle{exec};
  }
  Status replay(GraphHandle g) override {
    bind();
    return check(api_.graph_launch(g.exec, stream_), "graph launch");
  }
  void destroy_graph(GraphHandle g) override {
    bind();
    if (g.exec) api_.graph_exec_destroy(g.exec);
  }

  Result<double> time_ms(const std::function<Status()>& work, int repeats) override {
    bind();
    Handle start = nullptr, stop = nullptr;
    FT_RETURN_IF_ERROR(check(api_.event_create(&start, 0), "event create"));
    FT_RETURN_IF_ERROR(check(api_.event_create(&stop, 0), "event create"));
    Status s = check(api_.event_record(start, stream_), "event record");
    for (int i = 0; s.ok() && i < repeats; ++i) s = work();
    if (s.ok()) s = check(api_.event_record(stop, stream_), "event record");
    if (s.ok()) s = check(api_.event_synchronize(stop), "event synchronize");
    float ms = 0;
    if (s.ok()) s = check(api_.event_elapsed(&ms, start, stop), "event elapsed time");
    api_.event_destroy(start);
    api_.event_destroy(stop);
    if (!s.ok()) return s;
    return static_cast<double>(ms) / repeats;
  }

 private:
  // The context is current per thread: a backend used from a thread other
  // than the one that opened it (the engine's loop) makes it current there
  // first. A per-backend id (not the address, which can be reused) marks
  // which backend this thread last bound.
  void bind() {
    thread_local uint64_t bound = 0;
    if (bound != id_) {
      make_current();
      bound = id_;
    }
  }
  void make_current() {
    if (api_.ctx_set_current) api_.ctx_set_current(ctx_);
    if (api_.set_device) api_.set_device(ordinal_);
  }
  // Binds the context; an error where `bytes` overruns either side.
  Status queued_copy_fits(const char* what, size_t bytes, size_t host_bytes, size_t device_bytes) {
    bind();
    if (bytes > host_bytes || bytes > device_bytes)
      return FT_ERROR(ErrorCode::kInvalidArgument, "{} of {} bytes between {} host and {} device bytes", what, bytes,
                      host_bytes, device_bytes);
    return Status();
  }
  Status check(int rc, const std::string& what) const {
    if (rc == 0) return Status();
    return Status(ErrorCode::kDevice, fmt::format("{} failed on {}:{} ({}): {} (error {})", what, api_.vendor, ordinal_,
                                                  info_.name, api_.error_text(rc), rc));
  }

  GpuApi api_;
  DeviceKind kind_;
  int ordinal_;
  Handle ctx_;
  DeviceInfo info_;
  Handle stream_ = nullptr;
  bool pdl_ = false;     // the device and driver have programmatic dependent launch
  bool overlap_ = true;  // set_launch_overlap()
  bool pinned_ = false;  // alloc_host gives page-locked memory
  std::set<void*> pinned_blocks_;  // alloc_host's page-locked blocks
  std::vector<Handle> modules_;
  const uint64_t id_ = [] {
    static std::atomic<uint64_t> next{1};
    return next++;
  }();
};

// Common tail of both openers: device count, name, memory, then the backend.
Result<std::unique_ptr<Backend>> open_device(const GpuApi& a, DeviceKind kind, int ordinal, std::string arch) {
  int count = 0;
  a.device_get_count(&count);
  if (ordinal < 0 || ordinal >= count)
    return FT_ERROR(ErrorCode::kNotFound, "{}:{} does not exist ({} device(s) found)", a.vendor, ordinal, count);
  int dev = 0;
  a.device_get(&dev, ordinal);
  DeviceInfo info;
  char name[256] = {};
  a.device_get_name(name, sizeof name, dev);
  info.name = name;
  info.arch = std::move(arch);
  a.device_get_attribute(&info.compute_units, a.multiprocessor_attribute, dev);
  size_t total = 0;
  a.device_total_mem(&total, dev);
  info.total_bytes = static_cast<int64_t>(total);
  Handle ctx = nullptr;
  if (a.primary_ctx_retain) {
    if (int rc = a.primary_ctx_retain(&ctx, dev); rc != 0)
      return FT_ERROR(ErrorCode::kDevice, "cannot create a context on {}:{} ({})", a.vendor, ordinal, a.error_text(rc));
  }
  auto backend = std::make_unique<GpuBackend>(a, kind, ordinal, ctx, std::move(info));
  FT_RETURN_IF_ERROR(backend->start());
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace

Result<std::unique_ptr<Backend>> open_cuda_backend(int ordinal) {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return FT_ERROR(ErrorCode::kNotFound, "no NVIDIA driver: cannot load libcuda.so.1 ({})", ::dlerror());
  GpuApi a{};
  a.vendor = "cuda";
  a.multiprocessor_attribute = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
  bool ok = bind(lib, {"cuInit"}, a.init) && bind(lib, {"cuGetErrorString"}, a.cu_error_string) &&
            bind(lib, {"cuDeviceGetCount"}, a.device_get_count) && bind(lib, {"cuDeviceGet"}, a.device_get) &&
            bind(lib, {"cuDeviceGetName"}, a.device_get_name) &&
            bind(lib, {"cuDeviceGetAttribute"}, a.device_get_attribute) &&
            bind(lib, {"cuDeviceTotalMem_v2"}, a.device_total_mem) && bind(lib, {"cuMemGetInfo_v2"}, a.mem_get_info) &&
            bind(lib, {"cuDevicePrimaryCtxRetain"}, a.primary_ctx_retain) &&
            bind(lib, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, a.primary_ctx_release) &&
            bind(lib, {"cuCtxSetCurrent"}, a.ctx_set_current) && bind(lib, {"cuMemAlloc_v2"}, a.mem_alloc) &&
            bind(lib, {"cuMemFree_v2"}, a.mem_free) && bind(lib, {"cuMemcpyHtoDAsync_v2"}, a.memcpy_htod_async) &&
            bind(lib, {"cuMemcpyDtoHAsync_v2"}, a.memcpy_dtoh_async) &&
            bind(lib, {"cuMemcpyDtoDAsync_v2"}, a.memcpy_dtod_async) &&
            bind(lib, {"cuMemsetD8Async"}, a.memset_d8_async) &&
            bind(lib, {"cuMemcpy2DAsync_v2"}, a.cu_memcpy_2d_async) && bind(lib, {"cuModuleLoadData"}, a.module_load_data) &&
            bind(lib, {"cuModuleUnload"}, a.module_unload) &&
            bind(lib, {"cuModuleGetFunction"}, a.module_get_function) &&
            bind(lib, {"cuLaunchKernel"}, a.launch_kernel) && bind(lib, {"cuStreamCreate"}, a.stream_create) &&
            bind(lib, {"cuStreamDestroy_v2"}, a.stream_destroy) &&
            bind(lib, {"cuStreamSynchronize"}, a.stream_synchronize) &&
            bind(lib, {"cuStreamBeginCapture_v2"}, a.stream_begin_capture) &&
            bind(lib, {"cuStreamEndCapture"}, a.stream_end_capture) &&
            bind(lib, {"cuGraphInstantiateWithFlags"}, a.graph_instantiate) &&
            bind(lib, {"cuGraphLaunch"}, a.graph_launch) && bind(lib, {"cuGraphExecDestroy"}, a.graph_exec_destroy) &&
            bind(lib, {"cuGraphDestroy"}, a.graph_destroy) && bind(lib, {"cuEventCreate"}, a.event_create) &&
            bind(lib, {"cuEventRecord"}, a.event_record) && bind(lib, {"cuEventSynchronize"}, a.event_synchronize) &&
            bind(lib, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, a.event_elapsed) &&
            bind(lib, {"cuEventDestroy_v2", "cuEventDestroy"}, a.event_destroy);
  bind(lib, {"cuLaunchKernelEx"}, a.cu_launch_kernel_ex);  // optional: CUDA 12+
  bind(lib, {"cuMemHostAlloc"}, a.host_alloc);            // optional: page-locked host memory
  bind(lib, {"cuMemFreeHost"}, a.host_free);
  if (!ok) return FT_ERROR(ErrorCode::kNotFound, "libcuda.so.1 lacks a driver API entry point ft needs (driver too old?)");
  if (int rc = a.init(0); rc != 0)
    return FT_ERROR(ErrorCode::kDevice, "cuInit failed (error {}): no usable NVIDIA GPU or driver", rc);
  int count = 0;
  a.device_get_count(&count);
  if (ordinal < 0 || ordinal >= count)
    return FT_ERROR(ErrorCode::kNotFound, "cuda:{} does not exist ({} NVIDIA device(s) found)", ordinal, count);
  int dev = 0, major = 0, minor = 0;
  a.device_get(&dev, ordinal);
  a.device_get_attribute(&major, 75, dev);  // compute capability major / minor
  a.device_get_attribute(&minor, 76, dev);
  return open_device(a, DeviceKind::kCuda, ordinal, fmt::format("sm_{}{}", major, minor));
}

std::string gfx_name_from_target_version(uint32_t v) {
  if (v == 0) return "";
  const uint32_t major = v / 10000, minor = v / 100 % 100, stepping = v % 100;
  return fmt::format("gfx{}{:x}{:x}", major, minor, stepping);
}

std::vector<std::string> kfd_gpu_arches(const std::string& topology) {
  std::vector<std::pair<int, std::string>> found;
  std::error_code ec;
  for (const auto& node : std::filesystem::directory_iterator(topology, ec)) {
    std::ifstream in(node.path() / "properties");
    std::string key;
    uint64_t value = 0;
    while (in >> key >> value) {
      if (key == "gfx_target_version" && value != 0) {
        int index = std::atoi(node.path().filename().c_str());
        found.emplace_back(index, gfx_name_from_target_version(static_cast<uint32_t>(value)));
      }
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

Result<std::unique_ptr<Backend>> open_hip_backend(int ordinal) {
  void* lib = nullptr;
  for (const char* name : {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"})
    if ((lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
  if (!lib) return FT_ERROR(ErrorCode::kNotFound, "no ROCm runtime: cannot load libamdhip64.so.7/.6/.5 ({})", ::dlerror());
  GpuApi a{};
  a.vendor = "hip";
  a.multiprocessor_attribute = 63;  // hipDeviceAttributeMultiprocessorCount (ROCm 5 and 6)
  bool ok = bind(lib, {"hipInit"}, a.init) && bind(lib, {"hipGetErrorString"}, a.hip_error_string) &&
            bind(lib, {"hipGetDeviceCount"}, a.device_get_count) && bind(lib, {"hipDeviceGet"}, a.device_get) &&
            bind(lib, {"hipDeviceGetName"}, a.device_get_name) &&
            bind(lib, {"hipDeviceGetAttribute"}, a.device_get_attribute) &&
            bind(lib, {"hipDeviceTotalMem"}, a.device_total_mem) && bind(lib, {"hipMemGetInfo"}, a.mem_get_info) &&
            bind(lib, {"hipSetDevice"}, a.set_device) && bind(lib, {"hipMalloc"}, a.mem_alloc) &&
            bind(lib, {"hipFree"}, a.mem_free) && bind(lib, {"hipMemcpyHtoDAsync"}, a.memcpy_htod_async) &&
            bind(lib, {"hipMemcpyDtoHAsync"}, a.memcpy_dtoh_async) &&
            bind(lib, {"hipMemcpyDtoDAsync"}, a.memcpy_dtod_async) &&
            bind(lib, {"hipMemsetD8Async"}, a.memset_d8_async) &&
            bind(lib, {"hipMemcpy2DAsync"}, a.hip_memcpy_2d_async) && bind(lib, {"hipModuleLoadData"}, a.module_load_data) &&
            bind(lib, {"hipModuleUnload"}, a.module_unload) &&
            bind(lib, {"hipModuleGetFunction"}, a.module_get_function) &&
            bind(lib, {"hipModuleLaunchKernel"}, a.launch_kernel) &&
            bind(lib, {"hipStreamCreateWithFlags"}, a.stream_create) &&
            bind(lib, {"hipStreamDestroy"}, a.stream_destroy) &&
            bind(lib, {"hipStreamSynchronize"}, a.stream_synchronize) &&
            bind(lib, {"hipStreamBeginCapture"}, a.stream_begin_capture) &&
            bind(lib, {"hipStreamEndCapture"}, a.stream_end_capture) &&
            bind(lib, {"hipGraphInstantiateWithFlags"}, a.graph_instantiate) &&
            bind(lib, {"hipGraphLaunch"}, a.graph_launch) && bind(lib, {"hipGraphExecDestroy"}, a.graph_exec_destroy) &&
            bind(lib, {"hipGraphDestroy"}, a.graph_destroy) &&
            bind(lib, {"hipEventCreateWithFlags"}, a.event_create) && bind(lib, {"hipEventRecord"}, a.event_record) &&
            bind(lib, {"hipEventSynchronize"}, a.event_synchronize) &&
            bind(lib, {"hipEventElapsedTime"}, a.event_elapsed) && bind(lib, {"hipEventDestroy"}, a.event_destroy);
  bind(lib, {"hipHostMalloc", "hipHostAlloc"}, a.host_alloc);  // optional: page-locked host memory
  bind(lib, {"hipHostFree"}, a.host_free);
  if (!ok) return FT_ERROR(ErrorCode::kNotFound, "the ROCm runtime lacks a HIP entry point ft needs (ROCm too old?)");
  if (int rc = a.init(0); rc != 0)
    return FT_ERROR(ErrorCode::kDevice, "hipInit failed ({}): no usable AMD GPU or driver", a.error_text(rc));
  // The gfx target from the kernel driver's topology (HIP's device-properties
  // struct changes layout between ROCm releases).
  std::vector<std::string> arches = kfd_gpu_arches("/sys/class/kfd/kfd/topology/nodes");
  if (ordinal < 0 || ordinal >= static_cast<int>(arches.size()))
    return FT_ERROR(ErrorCode::kNotFound, "hip:{} does not exist ({} AMD GPU(s) in /sys/class/kfd)", ordinal, arches.size());
  return open_device(a, DeviceKind::kHip, ordinal, arches[ordinal]);
}

}  // namespace ft
