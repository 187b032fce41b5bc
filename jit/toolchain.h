// The compilers behind one interface. Each reports who it is and which
// targets it knows, found by probing (asking the compiler), never assumed.
//
//   clang  : clang++ >= 17 (FT_CLANG, else the PATH), -x hip -nogpuinc -nogpulib, emits an hsaco
//   hiprtc : dlopen libhiprtc.so.7/.6, else the hiprtc symbols of libamdhip64.so.6/.5
//   nvrtc  : dlopen libnvrtc.so.13/.12, emits a cubin
//
// compile() runs in a worker process (jit/compile_worker.cpp): a compiler that
// crashes takes only the worker down.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gfx_targets/targets.h"
#include "runtime/base/status.h"

namespace ft {

struct CompileJob {
  std::string toolchain;    // "clang", "hiprtc", "nvrtc"
  std::string kernel;       // entry symbol, for messages
  std::string target;       // compile target with features: "gfx90a:xnack-", "sm_90a"
  std::string source_name;  // "ft_rmsnorm_bf16_h4096.hip"
  std::string source;
  std::vector<std::pair<std::string, std::string>> headers;  // file name -> contents
  std::vector<std::string> flags;
  bool text_assembly = false;  // NVRTC: return PTX instead of a cubin (for inspect --isa)
};

struct CompileOutput {
  std::string code_object;  // hsaco or cubin bytes
  std::string log;          // compiler diagnostics (and the ptxas report on NVIDIA)
};

class Toolchain {
 public:
  virtual ~Toolchain() = default;
  virtual std::string name() const = 0;      // "clang"
  virtual std::string version() const = 0;   // "19.1.7"
  virtual std::string location() const = 0;  // path of the binary or library
  virtual Vendor vendor() const = 0;
  // Whether this compiler knows `compile_arch` ("gfx1150", "sm_90a"). For
  // hipRTC this is decided by a trial compile in a worker (see CompileService).
  virtual bool knows_arch(const std::string& compile_arch) const = 0;
  // A compile error carries the compiler log; it is not a crash.
  virtual Result<CompileOutput> compile(const CompileJob& job) const = 0;

  std::string identity() const { return name() + " " + version(); }
};

// Each returns kNotFound (with what was tried) when the toolchain is absent.
Result<std::unique_ptr<Toolchain>> open_clang();
Result<std::unique_ptr<Toolchain>> open_hiprtc();
Result<std::unique_ptr<Toolchain>> open_nvrtc();
Result<std::unique_ptr<Toolchain>> open_toolchain(const std::string& name);

// Names in preference order for a vendor: hipRTC before clang on AMD (the
// runtime's own compiler), NVRTC on NVIDIA.
std::vector<std::string> toolchain_names_for(Vendor vendor);

}  // namespace ft
