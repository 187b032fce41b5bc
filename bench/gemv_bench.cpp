// gemv_bench: the decode matmul (matmul() at m <= 8, the GEMV kernels) on an
// NVIDIA GPU against the device's copy bandwidth, measured in the same run.
// The torch peer (bf16 F.linear at the same shapes) is bench/gemv_torch.py.
//
// Shapes are an 8B model's projections (N = out features, K = in features):
// gate/up 12288 x 4096, q/o 4096 x 4096, down 4096 x 12288, lm_head
// 151936 x 4096. Bytes counted = weight bytes (as stored: bf16, or GGUF
// blocks with their scales) + x + y. Every timed run reads another copy of
// the weight until the copies exceed 4 x L2, so nothing is served from L2.
// A 2 GiB device copy is queued before each timing so the launches queue up
// behind it and the kernels run back to back (a 2 us kernel would otherwise
// be timed at the host's launch rate). Quantized types at m = 1 are timed
// twice: with their x quantization (a kernel of its own), and as the decode
// step runs them, with x already quantized by the kernel before ("x q8").
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include <random>

#include "bench/bench_util.h"
#include "jit/catalog.h"
#include "runtime/ops/op_session.h"
#include "runtime/model/quantize.h"
#include "runtime/ops/matmul.h"
#include "tests/gpu/device_data.h"

namespace ft {
namespace {

constexpr int kRepeats = 100;
constexpr size_t kRotateBytes = 256ull << 20;  // > 4 x the H200's 60 MB L2

int run(const std::vector<std::string>& only, const std::vector<std::pair<int, int>>& only_shapes) {
  auto session = open_op_session("cuda:0");
  if (!session.ok()) {
    std::fprintf(stderr, "gemv_bench: %s\n", session.status().to_string().c_str());
    return 2;
  }
  Backend& b = *session->backend;
  OpContext& ctx = *session->ops;
  std::mt19937 rng(1234);
  const DType dt = DType::kBF16;

  const size_t busy_bytes = 2ull << 30;
  auto busy_src = b.alloc(busy_bytes), busy_dst = b.alloc(busy_bytes);
  if (!busy_src.ok() || !busy_dst.ok()) return 2;
  auto copy_ms = b.time_ms([&] { return b.copy_on_device(*busy_dst, *busy_src, busy_bytes); }, 5);
  if (!copy_ms.ok()) return 2;
  const double copy_gbs = 2.0 * busy_bytes / (*copy_ms * 1e-3) / 1e9;

  std::vector<bench::Row> rows;
  auto measure = [&](const std::string& name, double bytes, const std::function<Status()>& fn) {
    bench::measure(b, rows, kRepeats, name, bytes, 0, fn,
                   [&] { (void)b.copy_on_device(*busy_dst, *busy_src, busy_bytes); });
  };

  const std::pair<int, int> kShapes[] = {{12288, 4096}, {4096, 4096}, {4096, 12288}, {151936, 4096}};
  const GgmlType kTypes[] = {GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ4_0,
                             GgmlType::kQ5_K};
  for (auto [n, k] : kShapes) {
    if (!only_shapes.empty() && std::find(only_shapes.begin(), only_shapes.end(), std::pair{n, k}) == only_shapes.end())
      continue;
    for (GgmlType type : kTypes) {
      if (!only.empty() && std::find(only.begin(), only.end(), ggml_type_name(type)) == only.end()) continue;
      // The other quant types once, at the square shape (Q6_K is Q4_K_M's
      // down projection and LM head).
      const bool main_type = type == GgmlType::kBF16 || type == GgmlType::kQ8_0 || type == GgmlType::kQ4_K ||
                             type == GgmlType::kQ6_K;
      if (!main_type && !(n == 4096 && k == 4096)) continue;
      auto host = gpu::random_weight(type, n, k, rng, 64);
      if (!host.ok()) return 2;
      const size_t wbytes = host->size();
      const int copies = static_cast<int>(std::max<size_t>(1, (kRotateBytes + wbytes - 1) / wbytes));
      std::vector<DeviceBuffer> w(copies);
      bool ok = true;
      WeightLayout layout = WeightLayout::kGguf;
      for (auto& buf : w) {
        auto a = b.alloc(wbytes);
        auto up = a.ok() ? upload_weight(b, type, *host, *a) : Result<WeightLayout>(a.status());
        ok = ok && up.ok();
        if (up.ok()) layout = *up;
        if (a.ok()) buf = *a;
      }
      for (int m : {1, 8}) {
        if (m == 8 && !(n == 4096 && k == 4096)) continue;
        auto x = gpu::upload(b, gpu::random_values(static_cast<size_t>(m) * k, dt, rng), dt);
        auto y = b.alloc(static_cast<size_t>(m) * n * 2);
        if (!ok || !x.ok() || !y.ok()) return 2;
        int next = 0;
        measure(fmt::format("{} m={} {}x{}", ggml_type_name(type), m, n, k),
                static_cast<double>(wbytes) + 2.0 * m * (k + n), [&] {
                  WeightView view{type, n, k, w[next], layout};
                  next = (next + 1) % copies;
                  return matmul(ctx, dt, view, *x, m, *y);
                });
        // As the decode step runs it: x arrives quantized from the kernel
        // before (the norm, the attention), so the GEMV alone.
        if (gemv_quantized(type) && m == 1) {
          auto q8 = quantize_x(ctx, dt, k, *x, m, std::nullopt);
          if (!q8.ok()) return 2;
          measure(fmt::format("{} m={} {}x{} x q8", ggml_type_name(type), m, n, k),
                  static_cast<double>(wbytes) + 2.0 * m * n + static_cast<double>(matmul_q8_bytes(m, k)), [&] {
                    WeightView view{type, n, k, w[next], layout};
                    next = (next + 1) % copies;
                    return matmul(ctx, dt, view, *x, m, *y, {}, *q8);
                  });
        }
        b.free(*x);
        b.free(*y);
      }
      for (auto buf : w) b.free(buf);
    }
  }

  std::printf("gemv_bench on %s (%s), bf16 activations; device copy %.0f GB/s (read + write)\n",
              b.info().name.c_str(), b.info().arch.c_str(), copy_gbs);
  bench::print_rows("matmul (weight m NxK)", rows, copy_gbs);
  return 0;
}

}  // namespace
}  // namespace ft

int main(int argc, char** argv) {
  std::vector<std::string> only;
  std::vector<std::pair<int, int>> only_shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: gemv_bench [TYPE...] [NxK...]\n\n"
          "Times the decode matmul (m = 1 and 8) at an 8B model's shapes on cuda:0 against the device's\n"
          "copy bandwidth. TYPE (bf16, q8_0, q4_K, q6_K, q4_0, q5_K) limits the run to those weight types,\n"
          "NxK (12288x4096, 4096x4096, 4096x12288, 151936x4096) to those shapes.\n");
      return 0;
    }
    int n = 0, k = 0;
    if (std::sscanf(a.c_str(), "%dx%d", &n, &k) == 2) {
      only_shapes.emplace_back(n, k);
      continue;
    }
    if (!ft::ggml_type_from_name(a)) {
      std::fprintf(stderr, "gemv_bench: unknown weight type '%s' (see --help)\n", a.c_str());
      return 2;
    }
    only.push_back(a);
  }
  return ft::run(only, only_shapes);
}
