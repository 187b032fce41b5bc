#include "jit/compile_service.h"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "jit/code_object_meta.h"
#include "jit/compile_protocol.h"
#include "jit/kernel_sources.h"
#include "runtime/base/files.h"
#include "runtime/base/log.h"

namespace ft {
namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

// "rmsnorm.hip:42:7: error: ..." (clang, hipRTC) or "rmsnorm.hip(42): error ..." (NVRTC):
// the first error's file and line, and that line of the source, for the message.
std::string error_location(const std::string& log, const CompileJob& job) {
  static const std::regex kLoc(R"(([A-Za-z0-9_.\-]+\.(?:hip|h))(?::(\d+):\d+:|\((\d+)\):)\s*(?:fatal )?error)");
  std::smatch m;
  if (!std::regex_search(log, m, kLoc)) return "";
  std::string file = m[1];
  int line = std::atoi((m[2].matched ? m[2] : m[3]).str().c_str());
  const std::string* text = file == job.source_name ? &job.source : nullptr;
  for (const auto& [name, body] : job.headers)
    if (name == file) text = &body;
  if (!text || line <= 0) return fmt::format("\nat {}:{}", file, line);
  size_t pos = 0;
  for (int i = 1; i < line; ++i) {
    pos = text->find('\n', pos);
    if (pos == std::string::npos) return fmt::format("\nat {}:{}", file, line);
    ++pos;
  }
  std::string src = text->substr(pos, text->find('\n', pos) - pos);
  return fmt::format("\nat {}:{}: {}", file, line, src);
}

int64_t now_seconds() { return static_cast<int64_t>(std::time(nullptr)); }

}  // namespace

CompileService::CompileService(CodeObjectCache* cache, CompileServiceOptions options)
    : cache_(cache), options_(std::move(options)) {}

CompileService::~CompileService() {
  std::lock_guard lock(pool_mu_);
  idle_.clear();  // closes the pipes; each worker exits on EOF or is killed
}

Result<std::unique_ptr<CompileService>> CompileService::create(CodeObjectCache* cache,
                                                                CompileServiceOptions options) {
  if (options.toolchain.empty())
    if (const char* env = std::getenv("FT_TOOLCHAIN"); env && *env) options.toolchain = env;
  std::unique_ptr<CompileService> s(new CompileService(cache, options));
  s->jobs_ = options.jobs > 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  s->worker_path_ = options.worker_path;
  if (s->worker_path_.empty()) {
    const char* env = std::getenv("FT_COMPILE_WORKER");
    s->worker_path_ = env && *env ? env : executable_dir() + "/ft-compile-worker";
  }
  if (::access(s->worker_path_.c_str(), X_OK) != 0)
    return FT_ERROR(ErrorCode::kNotFound,
                    "the compile worker {} is missing or not executable (it is installed beside ft-jit and ft-serve; "
                    "FT_COMPILE_WORKER overrides)",
                    s->worker_path_);
  return s;
}

Result<const Toolchain*> CompileService::open_named(const std::string& name) {
  // toolchain_mu_ held by the caller.
  if (auto it = toolchains_.find(name); it != toolchains_.end()) return it->second.get();
  if (auto it = toolchain_errors_.find(name); it != toolchain_errors_.end())
    return Status(ErrorCode::kNotFound, it->second);
  auto opened = open_toolchain(name);
  if (!opened.ok()) {
    toolchain_errors_[name] = opened.status().message();
    return opened.status();
  }
  log::debug("toolchain {} {} at {}", name, (*opened)->version(), (*opened)->location());
  return (toolchains_[name] = std::move(opened).value()).get();
}

bool CompileService::trial_compile(const Toolchain& tc, const TargetId& target) {
  // Keyed by the library's release and path: a new hipRTC is probed again.
  std::string probe_key = tc.identity() + " " + tc.location() + " " + target.compile_target();
  if (auto it = trial_results_.find(probe_key); it != trial_results_.end()) return it->second;
  nlohmann::json saved = nlohmann::json::object();
  if (!options_.probe_file.empty())
    if (auto text = read_file(options_.probe_file); text.ok()) {
      saved = nlohmann::json::parse(*text, nullptr, false);
      if (!saved.is_object()) saved = nlohmann::json::object();
      if (auto it = saved.find(probe_key); it != saved.end() && it->is_boolean())
        return trial_results_[probe_key] = it->get<bool>();
    }
  auto run = run_process({worker_path_, "--probe", tc.name(), target.to_string()}, "");
  bool works = run.ok() && run->exited_ok();
  if (!works)
    log::info("{} cannot compile for {} ({}); trying the next toolchain", tc.identity(), target.to_string(),
              run.ok() ? run->describe() : run.status().message());
  trial_results_[probe_key] = works;
  if (!options_.probe_file.empty()) {
    saved[probe_key] = works;
    std::string text = saved.dump(2);
    if (Status s = write_file_atomic(options_.probe_file, text.data(), text.size()); !s.ok())
      log::debug("cannot keep toolchain probe results: {}", s.message());
  }
  return works;
}

Result<const Toolchain*> CompileService::toolchain_for(const TargetId& target) {
  std::lock_guard lock(toolchain_mu_);
  const std::string arch(target.facts->compile_arch);
  std::vector<std::string> names =
      options_.toolchain.empty() ? toolchain_names_for(target.facts->vendor) : std::vector{options_.toolchain};
  std::vector<std::string> why;
  for (const auto& name : names) {
    auto tc = open_named(name);
    if (!tc.ok()) {
      why.push_back(tc.status().message());
      continue;
    }
    if ((*tc)->vendor() != target.facts->vendor) {
      why.push_back(fmt::format("{} compiles for {} targets only", name, vendor_name((*tc)->vendor())));
      continue;
    }
    if (!(*tc)->knows_arch(arch)) {
      why.push_back(fmt::format("{} does not know {}", (*tc)->identity(), arch));
      continue;
    }
    if (name == "hiprtc" && !trial_compile(**tc, target)) {
      why.push_back(fmt::format("{} failed a trial compile for {}", (*tc)->identity(), arch));
      continue;
    }
    return *tc;
  }
  return FT_ERROR(ErrorCode::kUnsupported, "no toolchain can compile for {}:\n  {}", target.to_string(),
                  join(why, "\n  "));
}

Result<CompileJob> CompileService::make_job(const KernelSpec& spec, const TargetId& target, const Toolchain& tc) {
  CompileJob job;
  job.toolchain = tc.name();
  job.kernel = spec.name;
  job.target = target.compile_target();
  job.source_name = spec.name + ".hip";
  job.source = generate_source(spec);
  FT_ASSIGN_OR_RETURN(job.headers, included_headers(job.source));
  job.flags = compile_flags(target, tc.name());
  return job;
}

Result<std::string> CompileService::ptx(const KernelSpec& spec, const TargetId& target) {
  FT_ASSIGN_OR_RETURN(const Toolchain* tc, toolchain_for(target));
  if (tc->name() != "nvrtc")
    return FT_ERROR(ErrorCode::kUnsupported, "PTX exists for NVIDIA targets only, not {}", target.to_string());
  FT_ASSIGN_OR_RETURN(CompileJob job, make_job(spec, target, *tc));
  job.text_assembly = true;
  FT_ASSIGN_OR_RETURN(CompileOutput out, run_in_worker(job));
  return std::move(out.code_object);
}

Result<CompiledKernel> CompileService::get(const KernelSpec& spec, const TargetId& target) {
  FT_ASSIGN_OR_RETURN(CompiledKernel kernel, get_exact(spec, target));
  // A bound of blocks per SM is taken where it costs no spills; where it does,
  // the kernel without it (both stay cached: later, two cache reads).
  if (spec.min_blocks > 0 && kernel.resources.has_spills()) {
    KernelSpec unbounded = spec;
    unbounded.min_blocks = 0;
    return get_exact(unbounded, target);
  }
  return kernel;
}

Result<CompiledKernel> CompileService::get_exact(const KernelSpec& spec, const TargetId& target) {
  FT_ASSIGN_OR_RETURN(const Toolchain* tc, toolchain_for(target));
  FT_ASSIGN_OR_RETURN(CompileJob job, make_job(spec, target, *tc));

  CacheKeyFields fields;
  fields.kernel = spec.name;
  fields.entry = spec.function + "<" + spec.template_args_text() + ">";
  fields.template_args = spec.template_args_text();
  fields.arch = target.to_string();
  fields.toolchain = tc->name();
  fields.toolchain_version = tc->version();
  fields.flags = join(job.flags, " ");
  fields.source_hash = hash_sources(job.source, job.headers);
  const std::string key = compute_cache_key(fields);

  if (cache_) {
    auto hit = cache_->get(key);
    if (!hit.ok()) log::warn("code-object cache read failed, compiling instead: {}", hit.status().message());
    else if (hit->has_value()) {
      CacheEntry& e = **hit;
      return CompiledKernel{key, spec.name, fields.arch, tc->identity(), std::move(e.blob), e.resources, true,
                            e.compile_ms, ""};
    }
  }

  std::promise<Result<CompiledKernel>> promise;
  std::shared_future<Result<CompiledKernel>> future;
  bool owner = false;
  {
    std::lock_guard lock(inflight_mu_);
    auto it = inflight_.find(key);
    if (it != inflight_.end()) {
      future = it->second;
    } else {
      future = promise.get_future().share();
      inflight_.emplace(key, future);
      owner = true;
    }
  }
  if (!owner) return future.get();
  Result<CompiledKernel> result = compile_and_store(spec, target, *tc, fields, key, std::move(job));
  promise.set_value(result);
  std::lock_guard lock(inflight_mu_);
  inflight_.erase(key);
  return result;
}

Result<CompiledKernel> CompileService::compile_and_store(const KernelSpec& spec, const TargetId& target,
                                                         const Toolchain& tc, const CacheKeyFields& fields,
                                                         const std::string& key, CompileJob job) {
  auto start = std::chrono::steady_clock::now();
  ++compiles_started_;
  auto out = run_in_worker(job);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!out.ok()) {
    const std::string& log = out.status().message();
    return Status(ErrorCode::kCompileError,
                  fmt::format("compiling {} for {} with {} failed:\n{}{}", spec.name, target.to_string(),
                              tc.identity(), log, error_location(log, job)));
  }
  auto resources = target.facts->is_amd() ? read_amdgpu_kernel_resources(out->code_object)
                                          : parse_ptxas_report(out->log);
  if (!resources.ok())
    return FT_ERROR(ErrorCode::kCompileError, "compiled {} for {}, but cannot read its resources: {}", spec.name,
                    target.to_string(), resources.status().message());
  KernelResources res;
  bool found = false;
  for (auto& r : *resources)
    if (r.symbol == spec.name) { res = r; found = true; }
  if (!found)
    return FT_ERROR(ErrorCode::kCompileError, "the code object for {} ({}) has no kernel named {}", spec.name,
                    target.to_string(), spec.name);
  if (res.max_workgroup_size == 0) res.max_workgroup_size = spec.block_threads;
  if (res.wavefront_size == 0) res.wavefront_size = target.facts->wave_size;

  CompiledKernel kernel{key, spec.name, fields.arch, tc.identity(), std::move(out->code_object), res, false, ms,
                        std::move(out->log)};
  if (cache_) {
    CacheEntry entry;
    entry.key = key;
    entry.fields = fields;
    entry.blob = kernel.code_object;
    entry.resources = res;
    entry.compile_ms = ms;
    entry.created_at = entry.last_used_at = now_seconds();
    if (Status s = cache_->put(entry); !s.ok())
      log::warn("could not store {} for {} in the code-object cache: {}", spec.name, fields.arch, s.message());
  }
  return kernel;
}

Result<CompileOutput> CompileService::run_in_worker(const CompileJob& job) {
  std::unique_ptr<ChildProcess> worker;
  {
    std::unique_lock lock(pool_mu_);
    pool_cv_.wait(lock, [&] { return !idle_.empty() || live_workers_ < jobs_; });
    if (!idle_.empty()) {
      worker = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ++live_workers_;
    }
  }
  auto give_back = [&](bool healthy) {
    std::lock_guard lock(pool_mu_);
    if (healthy) idle_.push_back(std::move(worker));
    else --live_workers_;
    pool_cv_.notify_one();
  };
  if (!worker) {
    worker = std::make_unique<ChildProcess>();
    if (Status s = worker->spawn({worker_path_}); !s.ok()) {
      give_back(false);
      return s;
    }
  }
  std::string frame = encode_job(job);
  uint32_t size = 0;
  Status io = worker->write_all(frame.data(), frame.size());
  if (io.ok()) io = worker->read_exact(&size, sizeof size, options_.timeout_ms);
  if (io.ok() && size > wire::kMaxFrameBytes) io = FT_ERROR(ErrorCode::kCorrupt, "oversized worker reply");
  std::string payload(io.ok() ? size : 0, '\0');
  if (io.ok()) io = worker->read_exact(payload.data(), size, options_.timeout_ms);
  if (!io.ok()) {
    // The worker crashed, hung or broke the protocol: report its last words.
    std::string tail = worker->stderr_tail();
    int status = worker->terminate();
    std::string what = io.message().find("no answer") != std::string::npos
                           ? fmt::format("timed out after {} ms and was killed", options_.timeout_ms)
                           : describe_wait_status(status);
    give_back(false);
    return Status(ErrorCode::kCompileError,
                  fmt::format("the compiler ({}) crashed: worker {}{}{}", job.toolchain, what,
                              tail.empty() ? "" : "; its last output:\n", tail));
  }
  auto reply = decode_reply(payload);
  give_back(reply.ok());
  if (!reply.ok()) return reply.status();
  if (reply->code != ErrorCode::kOk) return Status(reply->code, reply->message);
  return std::move(reply->output);
}

}  // namespace ft
