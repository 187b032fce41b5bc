// op_check: every op family's GPU kernels against the CPU reference; prints
// a table and exits 1 if any case fails. Run by tests/gpu/run_on_gpu.sh.
// Usage: op_check [FAMILY...]   (default: all)
#include <cstdio>
#include <cstring>
#include <random>

#include "runtime/ops/op_session.h"
#include "tests/gpu/device_data.h"
#include "tests/gpu/op_check.h"

namespace ft::gpu {
namespace {

using CheckFn = std::vector<CheckCase> (*)(OpContext&, std::mt19937&);
struct Family {
  const char* name;
  CheckFn fn;
};
const Family kFamilies[] = {
    {"norm_act", check_norm_act},
    {"embedding", check_embedding},
    {"sampling", check_sampling},
    {"gemm", check_gemm},
    {"matmul", check_matmul},
    {"attention", check_attention},
    {"device", check_device},
};

double default_tolerance(DType t) { return t == DType::kF32 ? 1e-5 : 1e-2; }

int run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const bool help = std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0;
    bool known = false;
    for (const Family& f : kFamilies) known = known || std::strcmp(argv[i], f.name) == 0;
    if (help || !known) {
      std::FILE* to = help ? stdout : stderr;
      if (!help) std::fprintf(to, "op_check: unknown op family '%s'\n", argv[i]);
      std::fprintf(to, "usage: op_check [FAMILY...]\nRuns the GPU kernels of each family (default: all) on cuda:0 against "
                       "the CPU reference.\nFamilies:");
      for (const Family& f : kFamilies) std::fprintf(to, " %s", f.name);
      std::fprintf(to, "\n");
      return help ? 0 : 2;
    }
  }
  auto session = open_op_session("cuda:0");
  if (!session.ok()) {
    std::fprintf(stderr, "op_check: %s\n", session.status().to_string().c_str());
    return 2;
  }
  OpContext& ctx = *session->ops;
  const Backend& backend = *session->backend;
  std::mt19937 rng(std::random_device{}());
  std::vector<CheckCase> cases;
  for (const Family& f : kFamilies) {
    bool wanted = argc < 2;
    for (int i = 1; i < argc; ++i) wanted = wanted || std::strcmp(argv[i], f.name) == 0;
    if (!wanted) continue;
    auto got = f.fn(ctx, rng);
    cases.insert(cases.end(), got.begin(), got.end());
  }
  int failed = 0;
  std::printf("op_check on %s (%s), kernels from %s\n", backend.info().name.c_str(), backend.info().arch.c_str(),
              session->cache ? session->cache->path().c_str() : "no cache");
  std::printf("%-22s %-5s %-22s %12s %10s  %s\n", "op", "dtype", "shape", "rel L2 err", "tolerance", "result");
  for (const auto& c : cases) {
    const double tol = c.tolerance > 0 ? c.tolerance : default_tolerance(c.dtype);
    bool ok = c.error.empty() && c.err >= 0 && c.err < tol;
    failed += !ok;
    std::printf("%-22s %-5s %-22s %12.3e %10.1e  %s%s\n", c.op.c_str(), std::string(dtype_name(c.dtype)).c_str(),
                c.shape.c_str(), c.err, tol, ok ? "ok" : "FAIL ", c.error.c_str());
  }
  std::printf("%zu passed, %d failed\n", cases.size() - failed, failed);
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace ft::gpu

int main(int argc, char** argv) { return ft::gpu::run(argc, argv); }
