// ops_bench: bandwidth of the memory-bound ops on an NVIDIA GPU against the
// device's own copy bandwidth, measured in the same run. The torch peer is
// bench/ops_torch.py (bench/run_gpu_bench.sh runs both).
//
// Inputs are far larger than L2 (60 MB on an H200), random, timed with device
// events after warm-up; bytes counted = bytes read + bytes written.
#include <cstdio>
#include <cstring>
#include <random>

#include "bench/bench_util.h"
#include "runtime/ops/op_session.h"
#include "runtime/ops/activation.h"
#include "runtime/ops/norm.h"
#include "tests/gpu/device_data.h"

namespace ft {
namespace {

constexpr int kRepeats = 50;

int run() {
  auto session = open_op_session("cuda:0");
  if (!session.ok()) {
    std::fprintf(stderr, "ops_bench: %s\n", session.status().to_string().c_str());
    return 2;
  }
  Backend& b = *session->backend;
  OpContext& ctx = *session->ops;
  std::mt19937 rng(1234);
  const DType dt = DType::kBF16;

  // Copy bandwidth: one 512 MiB buffer copied to another.
  auto copy = bench::copy_bandwidth_gbs(b);
  if (!copy.ok()) return 2;
  const double copy_gbs = *copy;

  std::vector<bench::Row> rows;
  auto measure = [&](const std::string& name, double bytes, const std::function<Status()>& fn) {
    bench::measure(b, rows, kRepeats, name, bytes, 0, fn);
  };

  for (auto [n_rows, hidden] : {std::pair{8192, 4096}, {4096, 8192}, {2048, 5120 * 4}}) {
    RmsNormShape s{n_rows, hidden, 1e-6f};
    size_t n = static_cast<size_t>(n_rows) * hidden;
    auto x = gpu::upload(b, gpu::random_values(n, dt, rng), dt);
    auto w = gpu::upload(b, gpu::random_values(hidden, dt, rng), dt);
    auto out = b.alloc(n * 2);
    if (!x.ok() || !w.ok() || !out.ok()) return 2;
    measure(fmt::format("rmsnorm bf16 {}x{}", n_rows, hidden), 2.0 * n * 2 + hidden * 2,
            [&] { return rmsnorm(ctx, dt, s, *x, *w, *out); });
    // Fused residual: reads x and residual, writes out and the new residual.
    auto res = b.alloc(n * 2);
    if (!res.ok()) return 2;
    (void)b.copy_on_device(*res, *x, n * 2);
    measure(fmt::format("add_rmsnorm bf16 {}x{}", n_rows, hidden), 4.0 * n * 2 + hidden * 2,
            [&] { return add_rmsnorm(ctx, dt, s, *x, *res, *w, *out, *res); });
    for (auto buf : {*x, *w, *out, *res}) b.free(buf);
  }
  for (auto [n_rows, inter] : {std::pair{4096, 12288}, {8192, 14336}}) {
    size_t n = static_cast<size_t>(n_rows) * inter;
    auto gu = gpu::upload(b, gpu::random_values(2 * n, dt, rng), dt);
    auto out = b.alloc(n * 2);
    if (!gu.ok() || !out.ok()) return 2;
    measure(fmt::format("silu_mul bf16 {}x{}", n_rows, inter), 3.0 * n * 2,
            [&] { return gated_act(ctx, dt, GatedAct::kSilu, n_rows, inter, *gu, *out); });
    b.free(*gu);
    b.free(*out);
  }

  std::printf("ops_bench on %s (%s); device copy %.0f GB/s (read + write)\n", b.info().name.c_str(),
              b.info().arch.c_str(), copy_gbs);
  bench::print_rows("op", rows, copy_gbs);
  return 0;
}

}  // namespace
}  // namespace ft

int main(int argc, char** argv) {
  if (argc > 1) {
    const bool help = !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h");
    std::fprintf(help ? stdout : stderr,
                 "usage: ops_bench\n"
                 "Times RMSNorm and the fused activations (bf16) on cuda:0 against the device's copy\n"
                 "bandwidth measured in the same run; the torch peer is bench/ops_torch.py.\n");
    return help ? 0 : 2;
  }
  return ft::run();
}
