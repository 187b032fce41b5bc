// The CUDA driver API through dlopen("libcuda.so.1"): ft links no CUDA library,
// so the same binary runs on a machine with only the driver installed.
#include <dlfcn.h>

#include <vector>

#include "runtime/device/backend.h"

namespace ft {
namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUevent = void*;
using CUdeviceptr = unsigned long long;

constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrCcMajor = 75;
constexpr int kAttrCcMinor = 76;

struct DriverApi {
  CUresult (*init)(unsigned);
  CUresult (*get_error_string)(CUresult, const char**);
  CUresult (*device_get_count)(int*);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*device_get_name)(char*, int, CUdevice);
  CUresult (*device_get_attribute)(int*, int, CUdevice);
  CUresult (*device_total_mem)(size_t*, CUdevice);
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice);
  CUresult (*primary_ctx_release)(CUdevice);
  CUresult (*ctx_set_current)(CUcontext);
  CUresult (*ctx_synchronize)();
  CUresult (*mem_alloc)(CUdeviceptr*, size_t);
  CUresult (*mem_get_info)(size_t*, size_t*);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*memcpy_htod)(CUdeviceptr, const void*, size_t);
  CUresult (*memcpy_dtoh)(void*, CUdeviceptr, size_t);
  CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*memcpy_dtod)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*module_load_data)(CUmodule*, const void*);
  CUresult (*module_unload)(CUmodule);
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*);
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            CUstream, void**, void**);
  CUresult (*event_create)(CUevent*, unsigned);
  CUresult (*event_record)(CUevent, CUstream);
  CUresult (*event_synchronize)(CUevent);
  CUresult (*event_elapsed)(float*, CUevent, CUevent);
  CUresult (*event_destroy)(CUevent);
};

template <typename Fn>
bool bind(void* lib, std::initializer_list<const char*> names, Fn*& out) {
  for (const char* n : names)
    if ((out = reinterpret_cast<Fn*>(::dlsym(lib, n)))) return true;
  return false;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(DriverApi api, CUdevice dev, CUcontext ctx, DeviceInfo info)
      : api_(api), dev_(dev), ctx_(ctx), info_(std::move(info)) {}
  ~CudaBackend() override {
    api_.ctx_set_current(ctx_);
    for (CUmodule m : modules_) api_.module_unload(m);
    api_.primary_ctx_release(dev_);
  }

  DeviceKind kind() const override { return DeviceKind::kCuda; }
  const DeviceInfo& info() const override { return info_; }
  Result<int64_t> free_bytes() override {
    size_t free = 0, total = 0;
    FT_RETURN_IF_ERROR(check(api_.mem_get_info(&free, &total), "cuMemGetInfo"));
    return static_cast<int64_t>(free);
  }

  Result<DeviceBuffer> alloc(size_t bytes) override {
    CUdeviceptr p = 0;
    FT_RETURN_IF_ERROR(check(api_.mem_alloc(&p, bytes ? bytes : 1), "cuMemAlloc"));
    return DeviceBuffer{p, bytes};
  }
  void free(DeviceBuffer b) override {
    if (b.ptr) api_.mem_free(b.ptr);
  }
  Status copy_to_device(DeviceBuffer dst, const void* src, size_t bytes) override {
    if (bytes > dst.bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "copy of {} bytes into a {}-byte buffer", bytes, dst.bytes);
    return check(api_.memcpy_htod(dst.ptr, src, bytes), "cuMemcpyHtoD");
  }
  Status copy_to_host(void* dst, DeviceBuffer src, size_t bytes) override {
    if (bytes > src.bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "copy of {} bytes from a {}-byte buffer", bytes, src.bytes);
    return check(api_.memcpy_dtoh(dst, src.ptr, bytes), "cuMemcpyDtoH");
  }
  Status fill_bytes(DeviceBuffer dst, uint8_t value) override {
    return check(api_.memset_d8(dst.ptr, value, dst.bytes), "cuMemsetD8");
  }
  Status copy_on_device(DeviceBuffer dst, DeviceBuffer src, size_t bytes) override {
    if (bytes > dst.bytes || bytes > src.bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "device copy of {} bytes overruns a buffer", bytes);
    return check(api_.memcpy_dtod(dst.ptr, src.ptr, bytes), "cuMemcpyDtoD");
  }
  Result<KernelHandle> load_kernel(const std::string& code_object, const std::string& symbol) override {
    CUmodule m = nullptr;
    FT_RETURN_IF_ERROR(check(api_.module_load_data(&m, code_object.data()), "cuModuleLoadData"));
    modules_.push_back(m);
    CUfunction f = nullptr;
    FT_RETURN_IF_ERROR(check(api_.module_get_function(&f, m, symbol.c_str()), "cuModuleGetFunction(" + symbol + ")"));
    return KernelHandle{f};
  }
  Status launch(KernelHandle k, const LaunchDims& d, const void* args, size_t) override {
    void* params[] = {const_cast<void*>(args)};
    return check(api_.launch_kernel(static_cast<CUfunction>(k.function), d.grid[0], d.grid[1], d.grid[2], d.block[0],
                                    d.block[1], d.block[2], d.shared_bytes, nullptr, params, nullptr),
                 "cuLaunchKernel");
  }
  Status synchronize() override { return check(api_.ctx_synchronize(), "cuCtxSynchronize"); }

  Result<double> time_ms(const std::function<Status()>& work, int repeats) override {
    CUevent start = nullptr, stop = nullptr;
    FT_RETURN_IF_ERROR(check(api_.event_create(&start, 0), "cuEventCreate"));
    FT_RETURN_IF_ERROR(check(api_.event_create(&stop, 0), "cuEventCreate"));
    Status s = check(api_.event_record(start, nullptr), "cuEventRecord");
    for (int i = 0; s.ok() && i < repeats; ++i) s = work();
    if (s.ok()) s = check(api_.event_record(stop, nullptr), "cuEventRecord");
    if (s.ok()) s = check(api_.event_synchronize(stop), "cuEventSynchronize");
    float ms = 0;
    if (s.ok()) s = check(api_.event_elapsed(&ms, start, stop), "cuEventElapsedTime");
    api_.event_destroy(start);
    api_.event_destroy(stop);
    if (!s.ok()) return s;
    return static_cast<double>(ms) / repeats;
  }

 private:
  Status check(CUresult rc, const std::string& what) const {
    if (rc == 0) return Status();
    const char* msg = nullptr;
    api_.get_error_string(rc, &msg);
    return Status(ErrorCode::kDevice, fmt::format("{} failed on cuda:{} ({}): {} (error {})", what, dev_, info_.name,
                                                  msg ? msg : "unknown", rc));
  }

  DriverApi api_;
  CUdevice dev_;
  CUcontext ctx_;
  DeviceInfo info_;
  std::vector<CUmodule> modules_;
};

}  // namespace

Result<std::unique_ptr<Backend>> open_cuda_backend(int ordinal) {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return FT_ERROR(ErrorCode::kNotFound, "no NVIDIA driver: cannot load libcuda.so.1 ({})", ::dlerror());
  DriverApi a{};
  bool ok = bind(lib, {"cuInit"}, a.init) && bind(lib, {"cuGetErrorString"}, a.get_error_string) &&
            bind(lib, {"cuDeviceGetCount"}, a.device_get_count) && bind(lib, {"cuDeviceGet"}, a.device_get) &&
            bind(lib, {"cuDeviceGetName"}, a.device_get_name) &&
            bind(lib, {"cuDeviceGetAttribute"}, a.device_get_attribute) &&
            bind(lib, {"cuDeviceTotalMem_v2"}, a.device_total_mem) &&
            bind(lib, {"cuDevicePrimaryCtxRetain"}, a.primary_ctx_retain) &&
            bind(lib, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, a.primary_ctx_release) &&
            bind(lib, {"cuCtxSetCurrent"}, a.ctx_set_current) && bind(lib, {"cuCtxSynchronize"}, a.ctx_synchronize) &&
            bind(lib, {"cuMemAlloc_v2"}, a.mem_alloc) && bind(lib, {"cuMemGetInfo_v2"}, a.mem_get_info) && bind(lib, {"cuMemFree_v2"}, a.mem_free) &&
            bind(lib, {"cuMemcpyHtoD_v2"}, a.memcpy_htod) && bind(lib, {"cuMemcpyDtoH_v2"}, a.memcpy_dtoh) &&
            bind(lib, {"cuMemsetD8_v2"}, a.memset_d8) && bind(lib, {"cuMemcpyDtoD_v2"}, a.memcpy_dtod) && bind(lib, {"cuModuleLoadData"}, a.module_load_data) &&
            bind(lib, {"cuModuleUnload"}, a.module_unload) &&
            bind(lib, {"cuModuleGetFunction"}, a.module_get_function) &&
            bind(lib, {"cuLaunchKernel"}, a.launch_kernel) && bind(lib, {"cuEventCreate"}, a.event_create) &&
            bind(lib, {"cuEventRecord"}, a.event_record) && bind(lib, {"cuEventSynchronize"}, a.event_synchronize) &&
            bind(lib, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, a.event_elapsed) &&
            bind(lib, {"cuEventDestroy_v2", "cuEventDestroy"}, a.event_destroy);
  if (!ok) return FT_ERROR(ErrorCode::kNotFound, "libcuda.so.1 lacks a driver API entry point ft needs");
  if (int rc = a.init(0); rc != 0)
    return FT_ERROR(ErrorCode::kDevice, "cuInit failed (error {}): no usable NVIDIA GPU or driver", rc);
  int count = 0;
  a.device_get_count(&count);
  if (ordinal < 0 || ordinal >= count)
    return FT_ERROR(ErrorCode::kNotFound, "cuda:{} does not exist ({} NVIDIA device(s) found)", ordinal, count);
  CUdevice dev = 0;
  a.device_get(&dev, ordinal);
  DeviceInfo info;
  char name[256] = {};
  a.device_get_name(name, sizeof name, dev);
  info.name = name;
  int major = 0, minor = 0;
  a.device_get_attribute(&major, kAttrCcMajor, dev);
  a.device_get_attribute(&minor, kAttrCcMinor, dev);
  a.device_get_attribute(&info.compute_units, kAttrMultiprocessorCount, dev);
  info.arch = fmt::format("sm_{}{}", major, minor);
  size_t total = 0;
  a.device_total_mem(&total, dev);
  info.total_bytes = static_cast<int64_t>(total);
  CUcontext ctx = nullptr;
  if (int rc = a.primary_ctx_retain(&ctx, dev); rc != 0)
    return FT_ERROR(ErrorCode::kDevice, "cannot create a context on cuda:{} (error {})", ordinal, rc);
  a.ctx_set_current(ctx);
  return std::unique_ptr<Backend>(new CudaBackend(a, dev, ctx, std::move(info)));
}

}  // namespace ft
