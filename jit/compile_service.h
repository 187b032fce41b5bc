// CompileService: KernelSpec + target -> code object. A cache hit returns at
// once; a miss is compiled in a pool of ft-compile-worker processes and
// stored. Identical requests in flight are compiled once (single flight).
//
// Thread safety: get() may be called from many threads at once; that is how
// `ft-jit warm` compiles in parallel. A crashed or hung worker turns into a
// kCompileError for that request only; the pool replaces the worker.
#pragma once

#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache/code_object_cache.h"
#include "jit/kernel_resources.h"
#include "jit/kernel_spec.h"
#include "jit/subprocess.h"
#include "jit/toolchain.h"

namespace ft {

struct CompileServiceOptions {
  int jobs = 0;                 // worker processes; 0: one per hardware thread
  std::string worker_path;      // empty: $FT_COMPILE_WORKER, else ft-compile-worker beside this executable
  std::string toolchain;        // force one ("clang", "hiprtc", "nvrtc"); empty: $FT_TOOLCHAIN, else auto
  int timeout_ms = 300000;      // a compile that takes longer is killed and reported
  std::string probe_file;       // where hipRTC trial-compile results persist (JSON); empty: not kept
};

struct CompiledKernel {
  std::string key;
  std::string symbol;
  std::string target;           // canonical target id
  std::string toolchain;        // "clang 19.1.7"
  std::string code_object;
  KernelResources resources;
  bool from_cache = false;
  double compile_ms = 0;        // of the original compile
  std::string log;              // compiler output (warnings), empty on a cache hit
};

class CompileService {
 public:
  // `cache` may be null (no caching); it must outlive the service.
  static Result<std::unique_ptr<CompileService>> create(CodeObjectCache* cache, CompileServiceOptions options);
  ~CompileService();

  // The code object for `spec` on `target`, from the cache or compiled. A
  // spec's min_blocks is honoured where it costs no spills; where it does, the
  // kernel comes without that bound.
  Result<CompiledKernel> get(const KernelSpec& spec, const TargetId& target);

  // NVRTC's PTX for `spec` (not cached): what `ft-jit inspect --isa` shows
  // where no SASS disassembler is installed.
  Result<std::string> ptx(const KernelSpec& spec, const TargetId& target);

  // The toolchain that compiles for `target`: the forced one, else the first of
  // toolchain_names_for() that is installed and knows the arch (hipRTC decided
  // by a trial compile in a throwaway process, remembered for this process).
  Result<const Toolchain*> toolchain_for(const TargetId& target);

  int jobs() const { return jobs_; }
  // Compiles sent to workers since creation (cache hits and joined
  // in-flight requests excluded).
  int compiles_started() const { return compiles_started_.load(); }
  const std::string& worker_path() const { return worker_path_; }

 private:
  explicit CompileService(CodeObjectCache* cache, CompileServiceOptions options);
  // get() without the fallback for min_blocks.
  Result<CompiledKernel> get_exact(const KernelSpec& spec, const TargetId& target);
  Result<CompiledKernel> compile_and_store(const KernelSpec& spec, const TargetId& target, const Toolchain& tc,
                                           const CacheKeyFields& fields, const std::string& key,
                                           CompileJob job);
  Result<CompileOutput> run_in_worker(const CompileJob& job);
  Result<CompileJob> make_job(const KernelSpec& spec, const TargetId& target, const Toolchain& tc);
  Result<const Toolchain*> open_named(const std::string& name);
  bool trial_compile(const Toolchain& tc, const TargetId& target);

  CodeObjectCache* cache_;
  CompileServiceOptions options_;
  int jobs_ = 1;
  std::string worker_path_;

  std::mutex toolchain_mu_;
  std::map<std::string, std::unique_ptr<Toolchain>> toolchains_;
  std::map<std::string, std::string> toolchain_errors_;
  std::map<std::string, bool> trial_results_;  // "hiprtc 5.2.21153 gfx1100" -> works
  std::atomic<int> compiles_started_{0};

  std::mutex inflight_mu_;
  std::map<std::string, std::shared_future<Result<CompiledKernel>>> inflight_;

  std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  std::vector<std::unique_ptr<ChildProcess>> idle_;
  int live_workers_ = 0;
};

}  // namespace ft
