// The GEMV kernels compile for every target in gfx_targets with no spills,
// and the quantized ones use the target's 4-way int8 dot instruction.
//
// The whole gemv catalog is already warmed and checked for spills on
// gfx1150, gfx1100, gfx942 and sm_90 by jit_test's FtJitWarm; compiling all
// of it for all 13 targets would take tens of minutes on a 2-core CI machine,
// so this test compiles the register-heaviest instantiations (m = 8 of every
// weight type and the gated dense one, the quantized kernels at m = 1 and a
// partial last step) for every target.
#include <atomic>
#include <cstdio>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "jit/catalog.h"
#include "jit/compile_service.h"
#include "jit/subprocess.h"
#include "runtime/base/files.h"

namespace ft {
namespace {

std::string bin_dir() {
  const char* env = std::getenv("FT_BIN_DIR");
  return env && *env ? env : FT_BINARY_DIR "/bin";
}

class TempDir {
 public:
  TempDir() : path_(*make_temp_dir("ft-gemv-test-")) {}
  ~TempDir() { (void)remove_tree(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

CompileServiceOptions options() {
  CompileServiceOptions o;
  o.jobs = 2;
  o.worker_path = bin_dir() + "/ft-compile-worker";
  return o;
}

struct Service {
  explicit Service(const std::string& dir) {
    CacheOptions co;
    co.dir = dir;
    auto c = CodeObjectCache::open(co);
    EXPECT_TRUE(c.ok()) << c.status().to_string();
    if (c.ok()) cache = std::move(c).value();
    auto s = CompileService::create(cache.get(), options());
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    if (s.ok()) service = std::move(*s);
  }
  std::unique_ptr<CodeObjectCache> cache;
  std::unique_ptr<CompileService> service;
};

std::vector<KernelSpec> representative_specs(const TargetFacts& t) {
  std::vector<KernelSpec> specs;
  for (GgmlType w : {GgmlType::kBF16, GgmlType::kF16, GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_K,
                     GgmlType::kQ5_K, GgmlType::kQ6_K})
    specs.push_back(gemv_spec(t, DType::kBF16, w, 4096, 8));
  // The dense down projection with SiLU(gate) * up in its x load: two x
  // vectors per row and step (bf16 decode at batch 5 to 8).
  specs.push_back(gemv_spec(t, DType::kBF16, GgmlType::kBF16, 12288, 8, GatedAct::kSilu));
  specs.push_back(gemv_spec(t, DType::kF32, GgmlType::kF32, 1000, 4));
  specs.push_back(gemv_spec(t, DType::kF16, GgmlType::kQ4_K, 3584, 1));
  specs.push_back(gemv_spec(t, DType::kBF16, GgmlType::kQ6_K, 3584, 2));
  specs.push_back(gemv_spec(t, DType::kBF16, GgmlType::kQ4_0, 896, 1));
  return specs;
}

TEST(GemvCompile, RepresentativeKernelsCompileForEveryTargetWithoutSpills) {
  TempDir dir;
  Service svc(dir.path());
  ASSERT_TRUE(svc.service);
  struct Job {
    TargetId target;
    KernelSpec spec;
  };
  std::vector<Job> jobs;
  std::vector<std::string> covered;
  for (const TargetFacts& t : all_targets()) {
    TargetId id{&t, {}};
    if (!svc.service->toolchain_for(id).ok()) {
      // gfx950 needs a newer clang than 19 or hipRTC; without one the JIT
      // names the missing toolchain itself (compile_service_test covers that).
      std::printf("[ skipped  ] %s: no toolchain on this machine\n", std::string(t.name).c_str());
      continue;
    }
    covered.push_back(std::string(t.name));
    for (auto& s : representative_specs(t)) jobs.push_back({id, std::move(s)});
  }
  std::vector<std::string> failures(jobs.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&] {
      for (size_t j; (j = next++) < jobs.size();) {
        auto r = svc.service->get(jobs[j].spec, jobs[j].target);
        if (!r.ok()) failures[j] = r.status().to_string();
        else if (r->resources.has_spills() || r->resources.scratch_bytes > 0)
          failures[j] = "spills or scratch: " + std::to_string(r->resources.vgpr_spills) + " vgpr, " +
                        std::to_string(r->resources.sgpr_spills) + " sgpr, " +
                        std::to_string(r->resources.spill_store_bytes) + " bytes, scratch " +
                        std::to_string(r->resources.scratch_bytes);
      }
    });
  for (auto& t : threads) t.join();
  for (size_t j = 0; j < jobs.size(); ++j)
    EXPECT_EQ(failures[j], "") << jobs[j].spec.name << " on " << jobs[j].target.to_string();
  // clang-19 covers every RDNA and gfx90a / gfx942 target, NVRTC every sm_.
  EXPECT_GE(covered.size(), all_targets().size() - 1);
}

// The dot instruction in the ISA, read back through `ft-jit inspect --isa`.
std::string isa_of(Service& svc, const std::string& cache_dir, const KernelSpec& spec, const char* arch) {
  auto target = parse_target_id(arch);
  EXPECT_TRUE(target.ok());
  auto r = svc.service->get(spec, *target);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  auto p = run_process({"/usr/bin/env", "FT_CACHE_DIR=" + cache_dir, bin_dir() + "/ft-jit", "inspect", "--arch", arch,
                        "--kernel", spec.name, "--isa"},
                       "");
  EXPECT_TRUE(p.ok());
  return p.ok() ? p->output : "";
}

TEST(GemvCompile, QuantizedKernelsUseTheInt8DotInstruction) {
  TempDir dir;
  Service svc(dir.path());
  ASSERT_TRUE(svc.service);
  // gfx11/gfx12: v_dot4_i32_iu8 (sudot4); gfx9: v_dot4(c)_i32_i8 (sdot4).
  const std::pair<const char*, const char*> kArchs[] = {
      {"gfx1150", R"(v_dot4_i32_iu8)"}, {"gfx1201", R"(v_dot4_i32_iu8)"},
      {"gfx90a", R"(v_dot4c?_i32_i8)"}, {"gfx942", R"(v_dot4c?_i32_i8)"}};
  for (auto [arch, pattern] : kArchs) {
    const TargetFacts* t = find_target(arch);
    ASSERT_NE(t, nullptr);
    for (GgmlType w : {GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K}) {
      KernelSpec spec = gemv_spec(*t, DType::kBF16, w, 4096, 1);
      std::string isa = isa_of(svc, dir.path(), spec, arch);
      EXPECT_TRUE(std::regex_search(isa, std::regex(pattern))) << spec.name << " on " << arch;
    }
    // The dense kernels have nothing to do with int8.
    std::string dense = isa_of(svc, dir.path(), gemv_spec(*t, DType::kBF16, GgmlType::kBF16, 4096, 1), arch);
    EXPECT_FALSE(dense.empty());
    EXPECT_FALSE(std::regex_search(dense, std::regex("v_dot4"))) << arch;
  }
}

}  // namespace
}  // namespace ft
