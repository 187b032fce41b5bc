// gemm_bench: the prefill GEMM (runtime/ops/gemm.h) at M = 2048 tokens on
// the dense 8B projection shapes (Qwen3-8B / Llama-3-8B-like: qkv 6144 is
// close to the 4096 row, gate+up 2 x 12288 ~ the 12288 row, down, lm_head),
// bf16, against cuBLAS through torch measured in the same run by
// bench/gemm_torch.py (pass its output file with --torch FILE).
//
// FLOPs = 2 M N K. Inputs random (never zeros), W larger than L2 for every
// shape (32 MB at 4096 x 4096 is the smallest; x and y stay in L2 there,
// which is what a prefill sees too). Timed with device events after warm-up.
//
// Then quantized weights (Q4_K, Q6_K, Q8_0 on the gate_up, o_proj and down
// shapes) above the GEMV's 8 rows, at M = 2048 (prefill), 128, 64, 32 and 16
// (decode batches): matmul's time and path (W decoded into the tile up to
// gemm_q_max_rows rows, else expanded to bf16 scratch first), the quantized
// bytes' bandwidth at that time against copy, the expanding path's time
// (gemm_expanded) and the dense bf16 GEMM's on the same shape; at M <= 32
// also the GEMV kernels run on the rows in chunks of 8.
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>

#include "jit/catalog.h"
#include "runtime/ops/op_session.h"
#include "runtime/ops/gemm.h"
#include "runtime/ops/matmul.h"
#include "runtime/ops/weight_layout.h"
#include "bench/bench_util.h"
#include "tests/gpu/device_data.h"

namespace ft {
namespace {

constexpr int kRepeats = 20;
constexpr int kTokens = 2048;

// Random bf16 bits of magnitude ~[2^-7, 1), either sign: fast enough for a
// 1.2 GB lm_head on the host.
Result<DeviceBuffer> random_bf16(Backend& b, size_t count, uint64_t seed) {
  std::vector<uint16_t> bits(count);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& v : bits) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    const uint16_t exponent = 120 + static_cast<uint16_t>((s >> 8) % 7);
    v = static_cast<uint16_t>(((s >> 20) & 0x8000) | (exponent << 7) | (s & 0x7F));
  }
  FT_ASSIGN_OR_RETURN(DeviceBuffer buf, b.alloc(count * 2));
  FT_RETURN_IF_ERROR(b.copy_to_device(buf, bits.data(), count * 2));
  return buf;
}

// "N K tflops" lines from gemm_torch.py.
std::map<std::pair<int, int>, double> read_peer(const char* path) {
  std::map<std::pair<int, int>, double> out;
  FILE* f = path ? std::fopen(path, "r") : nullptr;
  if (!f) return out;
  int n, k;
  double tf;
  while (std::fscanf(f, "%d %d %lf", &n, &k, &tf) == 3) out[{n, k}] = tf;
  std::fclose(f);
  return out;
}

// --tune: other tiles for the same kernel template, launched directly (the
// launcher always takes the target's tile), to choose the one in targets.cpp.
struct TuneCase {
  const char* function;  // "ft::gemm" (per-warp MMA) or "ft::gemm_wgmma" (Hopper)
  GemmTile tile;
};

Result<double> time_tile(OpContext& ctx, const TuneCase& c, int n, int k, DeviceBuffer x, DeviceBuffer w,
                         DeviceBuffer y) {
  const GemmTile& t = c.tile;
  KernelSpec spec = gemm_spec(ctx.facts(), DType::kBF16, k);
  spec.function = c.function;
  spec.name += fmt::format("_{}_t{}x{}x{}_w{}x{}_s{}", c.function + 4, t.block_m, t.block_n, t.block_k, t.warps_m,
                           t.warps_n, t.stages);
  spec.template_args = {"ft::bf16", std::to_string(k), std::to_string(t.block_m), std::to_string(t.block_n),
                        std::to_string(t.block_k), std::to_string(t.warps_m), std::to_string(t.warps_n),
                        std::to_string(t.stages)};
  spec.block_threads = t.warps_m * t.warps_n * ctx.facts().wave_size;
  FT_ASSIGN_OR_RETURN(KernelHandle kernel, ctx.kernel(spec));
  struct {
    uint64_t x, w, bias, y;
    int m, n;
  } args{x.ptr, w.ptr, 0, y.ptr, kTokens, n};  // kernel_src/gemm.hip GemmArgs<T>
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>((kTokens + t.block_m - 1) / t.block_m);
  dims.grid[1] = static_cast<unsigned>((n + t.block_n - 1) / t.block_n);
  dims.block[0] = static_cast<unsigned>(spec.block_threads);
  auto fn = [&] { return ctx.backend().launch(kernel, dims, &args, sizeof args); };
  FT_RETURN_IF_ERROR(fn());
  return ctx.backend().time_ms(fn, kRepeats);
}

// The quantized table (see the top); false if anything failed.
// only: "TYPE:SHAPE:M" (e.g. q4_K:down:32) times that one case, for a
// profiler; empty: all.
bool quantized(OpContext& ctx, double copy_gbs, const std::string& only) {
  Backend& b = ctx.backend();
  const DType dt = DType::kBF16;
  std::mt19937 rng(7);
  std::printf("\nquantized W through matmul(): up to gemm_q_max_rows (128 with gemm_qr; else 64, Q6_K 32) rows decoded\n"
              "(gemm_q, gemm_qr), above that expanded to bf16 scratch, then the dense GEMM; GB/s and %% of copy count the\n"
              "quantized bytes at matmul's time\n");
  std::printf("%-6s %-8s %5s %8s %11s %8s %8s %11s %11s %15s\n", "type", "shape", "M", "path", "matmul us", "W GB/s",
              "of copy", "expanded us", "dense us", "GEMV x8 rows us");
  bool ok = true, matched = false;
  struct Shape {
    const char* name;
    int n, k;
  };
  for (GgmlType type : {GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ8_0})
    for (const Shape s : {Shape{"gate_up", 12288, 4096}, Shape{"o_proj", 4096, 4096}, Shape{"down", 4096, 12288}}) {
      const std::string tname(ggml_traits(type).name);
      if (!only.empty() && only.rfind(tname + ":" + s.name + ":", 0) != 0) continue;
      auto host = gpu::random_weight(type, s.n, s.k, rng, 64);
      auto w = host.ok() ? b.alloc(host->size()) : Result<DeviceBuffer>(host.status());
      auto layout = w.ok() ? upload_weight(b, type, *host, *w) : Result<WeightLayout>(w.status());
      auto dense_w = random_bf16(b, static_cast<size_t>(s.n) * s.k, 3);
      auto x = random_bf16(b, static_cast<size_t>(kTokens) * s.k, 4);
      auto y = b.alloc(static_cast<size_t>(kTokens) * s.n * 2);
      if (!layout.ok() || !dense_w.ok() || !x.ok() || !y.ok()) {
        std::fprintf(stderr, "%s %s: setup failed\n", tname.c_str(), s.name);
        return false;
      }
      const WeightView view{type, s.n, s.k, *w, *layout}, dense{GgmlType::kBF16, s.n, s.k, *dense_w};
      auto time = [&](const std::function<Status()>& fn) { return bench::warm_and_time(b, fn, kRepeats); };
      for (int m : {kTokens, 128, 64, 32, 16}) {
        if (!only.empty() && only != tname + ":" + s.name + ":" + std::to_string(m)) continue;
        matched = true;
        auto total = time([&] { return matmul(ctx, dt, view, *x, m, *y); });
        auto expanded = time([&] { return gemm_expanded(ctx, dt, view, *x, m, *y); });
        auto base = time([&] { return gemm(ctx, dt, dense, *x, m, *y); });
        // The GEMV path on 8 rows at a time (each chunk quantizes its x).
        auto chunks = m > 32 ? Result<double>(0.0) : time([&]() -> Status {
          for (int r = 0; r < m; r += 8)
            FT_RETURN_IF_ERROR(matmul(ctx, dt, view, slice(*x, r * s.k * 2ull, 8ull * s.k * 2), 8,
                                      slice(*y, r * s.n * 2ull, 8ull * s.n * 2)));
          return Status();
        });
        if (!total.ok() || !expanded.ok() || !base.ok() || !chunks.ok()) {
          std::fprintf(stderr, "%s %s M=%d: %s\n", tname.c_str(), s.name, m,
                       (!total.ok()      ? total.status()
                        : !expanded.ok() ? expanded.status()
                        : !base.ok()     ? base.status()
                                         : chunks.status())
                           .to_string()
                           .c_str());
          ok = false;
          continue;
        }
        const double gbs = static_cast<double>(host->size()) / (*total * 1e-3) / 1e9;
        std::printf("%-6s %-8s %5d %8s %11.1f %8.0f %7.0f%% %11.1f %11.1f %15s\n", tname.c_str(), s.name, m,
                    !gemm_q_fits(ctx, dt, view, m, *x)          ? "expanded"
                    : gemm_qr_x_rows(ctx.facts(), type, m) > 0 ? "gemm_qr"
                                                               : "gemm_q", *total * 1e3, gbs,
                    copy_gbs > 0 ? 100.0 * gbs / copy_gbs : 0.0, *expanded * 1e3, *base * 1e3,
                    m > 32 ? "-" : fmt::format("{:.1f}", *chunks * 1e3).c_str());
      }
      for (auto buf : {*w, *dense_w, *x, *y}) b.free(buf);
    }
  if (!only.empty() && !matched) {
    std::fprintf(stderr, "gemm_bench: --case %s matches no row (TYPE q4_K, q6_K or q8_0; SHAPE gate_up, o_proj or down; "
                 "M %d, 128, 64, 32 or 16)\n", only.c_str(), kTokens);
    return false;
  }
  return ok;
}

int run(int argc, char** argv) {
  const char* peer_path = nullptr;
  bool tune = false, only_quantized = false;
  std::string only_case;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--torch") == 0 && i + 1 < argc) {
      peer_path = argv[++i];
    } else if (std::strcmp(argv[i], "--tune") == 0) {
      tune = true;
    } else if (std::strcmp(argv[i], "--quantized") == 0) {
      only_quantized = true;
    } else if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
      only_quantized = true;
      only_case = argv[++i];
    } else {
      const bool help = !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h");
      std::fprintf(help ? stdout : stderr,
                   "usage: gemm_bench [--torch FILE] [--tune] [--quantized] [--case TYPE:SHAPE:M]\n"
                   "Times the prefill GEMM (bf16, M = %d) on cuda:0 against torch.matmul's figures in FILE\n"
                   "(bench/gemm_torch.py, same run), then matmul on quantized weights at M = 2048 to 16.\n"
                   "  --tune       also time other tiles of the bf16 GEMM\n"
                   "  --quantized  only the quantized table\n"
                   "  --case C     only one row of it, e.g. q4_K:down:32 (shapes gate_up, o_proj, down), for a profiler\n",
                   kTokens);
      return help ? 0 : 2;
    }
  }
  auto peer = read_peer(peer_path);

  auto session = open_op_session("cuda:0");
  if (!session.ok()) {
    std::fprintf(stderr, "gemm_bench: %s\n", session.status().to_string().c_str());
    return 2;
  }
  Backend& b = *session->backend;
  OpContext& ctx = *session->ops;
  const DType dt = DType::kBF16;

  struct Shape {
    const char* name;
    int n, k;
  };
  const Shape shapes[] = {{"gate_up", 12288, 4096}, {"o_proj", 4096, 4096}, {"down", 4096, 12288},
                          {"lm_head", 151936, 4096}};
  std::printf("gemm_bench on %s (%s), bf16, M = %d; peer = torch.matmul (cuBLAS) %s\n", b.info().name.c_str(),
              b.info().arch.c_str(), kTokens, peer.empty() ? "not given (--torch FILE)" : "from the same run");
  if (!only_quantized)
    std::printf("%-8s %7s %6s %10s %9s %9s %8s\n", "shape", "N", "K", "us", "TFLOP/s", "torch", "ratio");
  int status = 0;
  for (const Shape& s : shapes) {
    if (only_quantized) break;
    auto x = random_bf16(b, static_cast<size_t>(kTokens) * s.k, 1);
    auto w = random_bf16(b, static_cast<size_t>(s.n) * s.k, 2);
    auto y = b.alloc(static_cast<size_t>(kTokens) * s.n * 2);
    if (!x.ok() || !w.ok() || !y.ok()) return 2;
    WeightView view{GgmlType::kBF16, s.n, s.k, *w};
    auto fn = [&] { return gemm(ctx, dt, view, *x, kTokens, *y); };
    auto ms = bench::warm_and_time(b, fn, kRepeats);
    if (!ms.ok()) {
      std::fprintf(stderr, "%s: %s\n", s.name, ms.status().to_string().c_str());
      status = 1;
    } else {
      const double tflops = 2.0 * kTokens * s.n * s.k / (*ms * 1e-3) / 1e12;
      auto it = peer.find({s.n, s.k});
      if (it != peer.end())
        std::printf("%-8s %7d %6d %10.1f %9.1f %9.1f %7.0f%%\n", s.name, s.n, s.k, *ms * 1e3, tflops, it->second,
                    100 * tflops / it->second);
      else
        std::printf("%-8s %7d %6d %10.1f %9.1f %9s %8s\n", s.name, s.n, s.k, *ms * 1e3, tflops, "-", "-");
    }
    if (tune) {
      std::vector<TuneCase> cases = {{"ft::gemm", {128, 128, 32, 2, 4, 3}}, {"ft::gemm", {64, 128, 32, 2, 2, 4}},
                                     {"ft::gemm", {128, 64, 32, 2, 2, 4}}};
      if (ctx.facts().matrix_core == MatrixCore::kWgmma)
        for (GemmTile t : {GemmTile{128, 128, 32, 8, 1, 3}, GemmTile{64, 128, 32, 4, 1, 4},
                           GemmTile{128, 256, 32, 8, 1, 2}, GemmTile{64, 256, 32, 4, 1, 2}})
          cases.push_back({"ft::gemm_wgmma", t});
      for (const TuneCase& c : cases) {
        const GemmTile& t = c.tile;
        auto tms = time_tile(ctx, c, s.n, s.k, *x, *w, *y);
        std::printf("  %-15s tile %dx%dx%d warps %dx%d stages %d: %s\n", c.function, t.block_m, t.block_n, t.block_k,
                    t.warps_m, t.warps_n, t.stages,
                    tms.ok() ? fmt::format("{:.1f} TFLOP/s", 2.0 * kTokens * s.n * s.k / (*tms * 1e-3) / 1e12).c_str()
                             : tms.status().to_string().c_str());
      }
    }
    for (auto buf : {*x, *w, *y}) b.free(buf);
  }
  auto copy = bench::copy_bandwidth_gbs(b);
  return quantized(ctx, copy.ok() ? *copy : 0.0, only_case) && status == 0 ? 0 : 1;
}

}  // namespace
}  // namespace ft

int main(int argc, char** argv) { return ft::run(argc, argv); }
