// op_check: runs the NVRTC-compiled kernels on an NVIDIA GPU against the CPU
// reference, over many shapes, with fresh random inputs and the output
// poisoned (0xFF bytes = NaN in every float format) before each run.
// Prints a table; exits 1 if any case fails. Run by tests/gpu/run_on_gpu.sh.
#include <algorithm>
#include <cstdio>
#include <random>

#include "runtime/ops/activation.h"
#include "runtime/ops/norm.h"
#include "tests/gpu/device_data.h"

namespace ft {
namespace {

double tolerance(DType t) { return t == DType::kF32 ? 1e-5 : 1e-2; }

struct Case {
  std::string op;
  DType dtype;
  std::string shape;
  double err;
  std::string error;
};

// With `fused`, also checks residual_out = x + residual; the error reported
// is the larger of the two outputs'.
Result<double> check_rmsnorm(OpContext& ctx, DType dt, int rows, int hidden, bool fused, std::mt19937& rng) {
  RmsNormShape s{rows, hidden, 1e-6f};
  const size_t n = static_cast<size_t>(rows) * hidden;
  auto x = gpu::random_values(n, dt, rng, 2.0f);
  auto res = gpu::random_values(n, dt, rng, 2.0f);
  auto w = gpu::random_values(hidden, dt, rng);
  std::vector<float> ref(n), ref_res(n);
  rmsnorm_reference(s, x.data(), w.data(), ref.data(), fused ? res.data() : nullptr, ref_res.data());
  Backend& b = ctx.backend();
  FT_ASSIGN_OR_RETURN(DeviceBuffer dx, gpu::upload(b, x, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dres, gpu::upload(b, res, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dw, gpu::upload(b, w, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dout, b.alloc(n * dtype_size(dt)));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dres_out, b.alloc(n * dtype_size(dt)));
  FT_RETURN_IF_ERROR(b.fill_bytes(dout, 0xFF));
  FT_RETURN_IF_ERROR(b.fill_bytes(dres_out, 0xFF));
  FT_RETURN_IF_ERROR(fused ? add_rmsnorm(ctx, dt, s, dx, dres, dw, dout, dres_out) : rmsnorm(ctx, dt, s, dx, dw, dout));
  FT_RETURN_IF_ERROR(b.synchronize());
  FT_ASSIGN_OR_RETURN(auto got, gpu::download(b, dout, dt));
  double err = gpu::rel_l2(got, ref);
  if (fused) {
    FT_ASSIGN_OR_RETURN(auto got_res, gpu::download(b, dres_out, dt));
    err = std::max(err, gpu::rel_l2(got_res, ref_res));
  }
  for (auto buf : {dx, dres, dw, dout, dres_out}) b.free(buf);
  return err;
}

Result<double> check_act(OpContext& ctx, DType dt, GatedAct act, int rows, int inter, std::mt19937& rng) {
  auto gu = gpu::random_values(static_cast<size_t>(rows) * 2 * inter, dt, rng, 3.0f);
  std::vector<float> ref(static_cast<size_t>(rows) * inter);
  gated_act_reference(act, rows, inter, gu.data(), ref.data());
  Backend& b = ctx.backend();
  FT_ASSIGN_OR_RETURN(DeviceBuffer dgu, gpu::upload(b, gu, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dout, b.alloc(ref.size() * dtype_size(dt)));
  FT_RETURN_IF_ERROR(b.fill_bytes(dout, 0xFF));
  FT_RETURN_IF_ERROR(gated_act(ctx, dt, act, rows, inter, dgu, dout));
  FT_RETURN_IF_ERROR(b.synchronize());
  FT_ASSIGN_OR_RETURN(auto got, gpu::download(b, dout, dt));
  b.free(dgu);
  b.free(dout);
  return gpu::rel_l2(got, ref);
}

int run() {
  auto backend = open_cuda_backend(0);
  if (!backend.ok()) {
    std::fprintf(stderr, "op_check: %s\n", backend.status().to_string().c_str());
    return 2;
  }
  auto target = parse_target_id((*backend)->info().arch);
  auto cache = CodeObjectCache::open(CacheOptions{});
  auto jit = CompileService::create(cache.ok() ? cache->get() : nullptr, CompileServiceOptions{});
  if (!target.ok() || !jit.ok()) {
    std::fprintf(stderr, "op_check: %s\n", (!target.ok() ? target.status() : jit.status()).to_string().c_str());
    return 2;
  }
  OpContext ctx(backend->get(), jit->get(), *target);
  std::mt19937 rng(std::random_device{}());
  std::vector<Case> cases;
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (auto [rows, hidden] : {std::pair{1, 64}, {3, 128}, {7, 896}, {1, 4096}, {33, 4096}, {5, 5120}, {2, 8192},
                                {17, 2056}, {4, 12288}}) {
      for (bool fused : {false, true}) {
        auto r = check_rmsnorm(ctx, dt, rows, hidden, fused, rng);
        cases.push_back({fused ? "add_rmsnorm" : "rmsnorm", dt, fmt::format("{}x{}", rows, hidden), r.ok() ? *r : -1,
                         r.ok() ? "" : r.status().message()});
      }
    }
    for (GatedAct act : {GatedAct::kSilu, GatedAct::kGeluTanh})
      for (auto [rows, inter] : {std::pair{1, 3072}, {3, 12288}, {9, 8}, {2, 1000}, {32, 14336}, {1, 4104}}) {
        if (dt == DType::kF32 && inter % 4 != 0) continue;
        auto r = check_act(ctx, dt, act, rows, inter, rng);
        cases.push_back({act == GatedAct::kSilu ? "silu_mul" : "gelu_tanh_mul", dt, fmt::format("{}x{}", rows, inter),
                         r.ok() ? *r : -1, r.ok() ? "" : r.status().message()});
      }
  }
  int failed = 0;
  std::printf("op_check on %s (%s), kernels from %s\n", (*backend)->info().name.c_str(), (*backend)->info().arch.c_str(),
              cache.ok() ? (*cache)->path().c_str() : "no cache");
  std::printf("%-14s %-5s %-10s %12s %10s  %s\n", "op", "dtype", "shape", "rel L2 err", "tolerance", "result");
  for (const auto& c : cases) {
    bool ok = c.error.empty() && c.err >= 0 && c.err < tolerance(c.dtype);
    failed += !ok;
    std::printf("%-14s %-5s %-10s %12.3e %10.0e  %s%s\n", c.op.c_str(), std::string(dtype_name(c.dtype)).c_str(),
                c.shape.c_str(), c.err, tolerance(c.dtype), ok ? "ok" : "FAIL ", c.error.c_str());
  }
  std::printf("%zu passed, %d failed\n", cases.size() - failed, failed);
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace ft

int main() { return ft::run(); }
