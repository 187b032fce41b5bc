// NVRTC and hipRTC share one C API shape (create, compile, log, code, destroy),
// so one class drives both through a table of dlsym'ed entry points.
#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <set>

#include "jit/toolchain.h"

namespace ft {
namespace {

using Program = void*;
struct RtcApi {
  const char* (*get_error_string)(int);
  int (*version)(int*, int*);
  int (*create_program)(Program*, const char*, const char*, int, const char* const*, const char* const*);
  int (*compile_program)(Program, int, const char* const*);
  int (*get_log_size)(Program, size_t*);
  int (*get_log)(Program, char*);
  int (*get_code_size)(Program, size_t*);
  int (*get_code)(Program, char*);
  int (*destroy_program)(Program*);
  int (*get_ptx_size)(Program, size_t*);  // NVRTC only
  int (*get_ptx)(Program, char*);         // NVRTC only
  int (*num_supported_archs)(int*);   // NVRTC only
  int (*supported_archs)(int*);       // NVRTC only
};

struct RtcFlavor {
  const char* name;         // "nvrtc"
  const char* prefix;       // symbol prefix
  const char* code_symbol;  // "GetCUBIN" / "GetCode"
  Vendor vendor;
  std::vector<const char*> libraries;
};

template <typename Fn>
bool bind(void* lib, const std::string& symbol, Fn*& out) {
  out = reinterpret_cast<Fn*>(::dlsym(lib, symbol.c_str()));
  return out != nullptr;
}

class RtcToolchain final : public Toolchain {
 public:
  RtcToolchain(const RtcFlavor& flavor, void* lib, std::string location, RtcApi api)
      : flavor_(flavor), lib_(lib), location_(std::move(location)), api_(api) {
    int major = 0, minor = 0;
    api_.version(&major, &minor);
    version_ = fmt::format("{}.{}", major, minor);
    // hipRTC inside libamdhip64 reports an API level, not the ROCm release
    // (5.2 says 9.0); the library's file name carries the release.
    if (flavor_.vendor == Vendor::kAmd) {
      std::string file = library_file();
      if (size_t p = file.find(".so."); p != std::string::npos) version_ = file.substr(p + 4);
    }
    if (api_.num_supported_archs && api_.supported_archs) {
      int n = 0;
      if (api_.num_supported_archs(&n) == 0 && n > 0) {
        std::vector<int> archs(static_cast<size_t>(n));
        if (api_.supported_archs(archs.data()) == 0)
          for (int a : archs) sm_archs_.insert(a);
      }
    }
  }

  std::string name() const override { return flavor_.name; }
  std::string version() const override { return version_; }
  std::string location() const override { return location_; }
  Vendor vendor() const override { return flavor_.vendor; }

  bool knows_arch(const std::string& arch) const override {
    if (flavor_.vendor == Vendor::kNvidia) {
      if (arch.rfind("sm_", 0) != 0) return false;
      return sm_archs_.count(std::atoi(arch.c_str() + 3)) > 0;
    }
    // hipRTC has no query for its targets: every gfx name is a candidate and
    // the compile service decides by a trial compile in a throwaway process.
    return arch.rfind("gfx", 0) == 0;
  }

  Result<CompileOutput> compile(const CompileJob& job) const override {
    std::vector<const char*> header_text, header_names, options;
    for (const auto& [n, t] : job.headers) {
      header_names.push_back(n.c_str());
      header_text.push_back(t.c_str());
    }
    for (const auto& f : job.flags) options.push_back(f.c_str());
    Program prog = nullptr;
    int rc = api_.create_program(&prog, job.source.c_str(), job.source_name.c_str(),
                                 static_cast<int>(header_text.size()), header_text.data(), header_names.data());
    if (rc != 0) return FT_ERROR(ErrorCode::kCompileError, "{}CreateProgram: {}", flavor_.prefix, error(rc));
    rc = api_.compile_program(prog, static_cast<int>(options.size()), options.data());
    CompileOutput out;
    size_t log_size = 0;
    if (api_.get_log_size(prog, &log_size) == 0 && log_size > 1) {
      out.log.resize(log_size);
      api_.get_log(prog, out.log.data());
      out.log.resize(log_size - 1);
    }
    auto get_size = api_.get_code_size;
    auto get = api_.get_code;
    if (job.text_assembly) {
      if (!api_.get_ptx_size || !api_.get_ptx) {
        api_.destroy_program(&prog);
        return FT_ERROR(ErrorCode::kUnsupported, "{} has no text assembly output", flavor_.name);
      }
      get_size = api_.get_ptx_size;
      get = api_.get_ptx;
    }
    if (rc == 0) {
      size_t size = 0;
      rc = get_size(prog, &size);
      if (rc == 0) {
        out.code_object.resize(size);
        rc = get(prog, out.code_object.data());
      }
    }
    api_.destroy_program(&prog);
    if (rc != 0 || out.code_object.empty())
      return Status(ErrorCode::kCompileError,
                    fmt::format("{} {}: {}\n{}", flavor_.name, version_, rc ? error(rc) : "no code object", out.log));
    return out;
  }

 private:
  // The real file behind the handle: "/usr/lib/.../libamdhip64.so.5.2.21153".
  std::string library_file() const {
    Dl_info info{};
    char resolved[4096];
    if (::dladdr(reinterpret_cast<void*>(api_.version), &info) == 0 || !info.dli_fname) return location_;
    return ::realpath(info.dli_fname, resolved) ? std::string(resolved) : std::string(info.dli_fname);
  }

  std::string error(int rc) const {
    const char* s = api_.get_error_string ? api_.get_error_string(rc) : nullptr;
    return s ? s : fmt::format("error {}", rc);
  }

  RtcFlavor flavor_;
  void* lib_;  // kept loaded for the life of the process
  std::string location_, version_;
  RtcApi api_;
  std::set<int> sm_archs_;
};

Result<std::unique_ptr<Toolchain>> open_rtc(const RtcFlavor& flavor) {
  std::string tried;
  for (const char* libname : flavor.libraries) {
    void* lib = ::dlopen(libname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      tried += fmt::format("\n  {}: {}", libname, ::dlerror());
      continue;
    }
    RtcApi api{};
    std::string p = flavor.prefix;
    bool ok = bind(lib, p + "GetErrorString", api.get_error_string) && bind(lib, p + "Version", api.version) &&
              bind(lib, p + "CreateProgram", api.create_program) &&
              bind(lib, p + "CompileProgram", api.compile_program) &&
              bind(lib, p + "GetProgramLogSize", api.get_log_size) && bind(lib, p + "GetProgramLog", api.get_log) &&
              bind(lib, p + flavor.code_symbol + "Size", api.get_code_size) &&
              bind(lib, p + flavor.code_symbol, api.get_code) &&
              bind(lib, p + "DestroyProgram", api.destroy_program);
    if (!ok) {
      tried += fmt::format("\n  {}: has no {} API", libname, flavor.name);
      ::dlclose(lib);
      continue;
    }
    bind(lib, p + "GetNumSupportedArchs", api.num_supported_archs);
    if (flavor.vendor == Vendor::kNvidia) {
      bind(lib, p + "GetPTXSize", api.get_ptx_size);
      bind(lib, p + "GetPTX", api.get_ptx);
    }
    bind(lib, p + "GetSupportedArchs", api.supported_archs);
    return std::unique_ptr<Toolchain>(new RtcToolchain(flavor, lib, libname, api));
  }
  return FT_ERROR(ErrorCode::kNotFound, "{} is not available; tried:{}", flavor.name, tried);
}

}  // namespace

Result<std::unique_ptr<Toolchain>> open_nvrtc() {
  // NVRTC keeps its own cache of cubins (the CUDA compute cache) and, on a
  // hit, returns the cubin without running ptxas, so the log lacks the
  // "ptxas info" lines the registers and spills are read from. The compile
  // service's SQLite cache stands in for it: turn it off before NVRTC loads.
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  static const RtcFlavor kFlavor{"nvrtc", "nvrtc", "GetCUBIN", Vendor::kNvidia,
                                 {"libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so.13",
                                  "/usr/local/cuda/lib64/libnvrtc.so.12"}};
  return open_rtc(kFlavor);
}

Result<std::unique_ptr<Toolchain>> open_hiprtc() {
  static const RtcFlavor kFlavor{"hiprtc", "hiprtc", "GetCode", Vendor::kAmd,
                                 {"libhiprtc.so.7", "libhiprtc.so.6", "libamdhip64.so.6", "libamdhip64.so.5"}};
  return open_rtc(kFlavor);
}

Result<std::unique_ptr<Toolchain>> open_toolchain(const std::string& name) {
  if (name == "clang") return open_clang();
  if (name == "hiprtc") return open_hiprtc();
  if (name == "nvrtc") return open_nvrtc();
  return FT_ERROR(ErrorCode::kInvalidArgument, "unknown toolchain '{}' (known: clang, hiprtc, nvrtc)", name);
}

std::vector<std::string> toolchain_names_for(Vendor vendor) {
  if (vendor == Vendor::kAmd) return {"hiprtc", "clang"};
  return {"nvrtc"};
}

}  // namespace ft
