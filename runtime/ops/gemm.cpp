#include "runtime/ops/gemm.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "jit/catalog.h"
#include "runtime/base/env.h"

namespace ft {

namespace {

bool weight_is_act(GgmlType t, DType act) {
  return (t == GgmlType::kF32 && act == DType::kF32) || (t == GgmlType::kF16 && act == DType::kF16) ||
         (t == GgmlType::kBF16 && act == DType::kBF16);
}

// Bytes of W as stored: whole blocks per row (k is a multiple of 32, and of
// 256 for the K-quants, checked by the caller).
uint64_t weight_bytes(const WeightView& w) {
  const GgmlTypeTraits& t = ggml_traits(w.type);
  return static_cast<uint64_t>(w.n) * (static_cast<uint64_t>(w.k) / t.block_size) * t.bytes_per_block;
}

Status check_shapes(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y,
                    DeviceBuffer bias) {
  FT_RETURN_IF_ERROR(check_layout(ctx.backend(), "gemm", w));
  if (!gemm_dequant_supported(w.type))
    return FT_ERROR(ErrorCode::kUnsupported, "gemm: weight type {} is not supported on {}",
                    ggml_traits(w.type).name, ctx.facts().name);
  const int k_multiple = std::max<int>(32, static_cast<int>(ggml_traits(w.type).block_size));
  const int k_tile = gemm_launch_shape(ctx.facts(), act).block_k;
  if (m <= 0 || w.n <= 0 || w.k <= 0 || w.n % 32 != 0 || w.k % k_multiple != 0 || w.k % k_tile != 0)
    return FT_ERROR(ErrorCode::kInvalidArgument,
                    "gemm: shape m={} n={} k={} ({}): m must be positive, n a multiple of 32, k a multiple of {}",
                    m, w.n, w.k, ggml_traits(w.type).name, std::max(k_multiple, k_tile));
  const size_t es = dtype_size(act);
  const size_t x_bytes = static_cast<size_t>(m) * w.k * es, y_bytes = static_cast<size_t>(m) * w.n * es;
  if (x.bytes < x_bytes || y.bytes < y_bytes || w.data.bytes < weight_bytes(w) ||
      (bias.ptr && bias.bytes < static_cast<size_t>(w.n) * es))
    return FT_ERROR(ErrorCode::kInvalidArgument,
                    "gemm: buffers too small for m={} n={} k={} {} (x {} of {}, y {} of {}, w {} of {} bytes)", m, w.n,
                    w.k, dtype_name(act), x.bytes, x_bytes, y.bytes, y_bytes, w.data.bytes, weight_bytes(w));
  return Status();
}

// Expands W into `out` ([n, k] of act).
Status dequantize(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer out) {
  FT_ASSIGN_OR_RETURN(KernelHandle k, ctx.kernel(gemm_dequant_spec(ctx.facts(), act, w.type)));
  const long long groups = static_cast<long long>(w.n) * w.k / 32;
  // Mirrors kernel_src/gemm.hip's GemmDequantArgs<T>.
  struct {
    uint64_t w, out;
    long long groups, blocks;
  } args{w.data.ptr, out.ptr, groups, static_cast<long long>(weight_blocks(w))};
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>((groups + 255) / 256);
  dims.block[0] = 256;
  return ctx.backend().launch(k, dims, &args, sizeof args);
}

Status launch_dense(OpContext& ctx, DType act, int n, int k, uint64_t w, DeviceBuffer x, int m, DeviceBuffer y,
                    DeviceBuffer bias) {
  const bool small = gemm_small_fits(ctx.facts(), act, m, k);
  FT_ASSIGN_OR_RETURN(KernelHandle kernel, ctx.kernel(gemm_spec(ctx.facts(), act, k, small)));
  const GemmLaunchShape shape = gemm_launch_shape(ctx.facts(), act, small);
  // Mirrors kernel_src/gemm.hip's GemmArgs<T>.
  struct {
    uint64_t x, w, bias, y;
    int m, n;
  } args{x.ptr, w, bias.ptr, y.ptr, m, n};
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>((m + shape.block_m - 1) / shape.block_m);
  dims.grid[1] = static_cast<unsigned>((n + shape.block_n - 1) / shape.block_n);
  dims.block[0] = static_cast<unsigned>(shape.threads);
  if (dims.grid[1] > 65535)
    return FT_ERROR(ErrorCode::kInvalidArgument, "gemm: n={} needs {} column tiles, more than a grid allows", n,
                    dims.grid[1]);
  return ctx.backend().launch(kernel, dims, &args, sizeof args);
}

// K splits for a grid of `tiles` blocks of 4 waves over `steps` K steps:
// doubled until the grid has about four blocks (16 waves) per SM/CU, each
// split at least 2 steps long, at most 16 (the partial sums are 4 bytes per
// output per split: at m = 32, n = k = 4096, 16 splits write 8 MiB, which
// stays in L2 for the reduction).
int gemm_q_splits(OpContext& ctx, long long tiles, int steps) {
  const long long want = 4LL * std::max(1, ctx.backend().info().compute_units);
  int splits = 1;
  while (splits < 16 && tiles * splits < want && steps % (2 * splits) == 0 && steps / (2 * splits) >= 2) splits *= 2;
  return splits;
}

}  // namespace

// K splits for gemm_qr: `tiles` blocks over `steps` K steps, `resident` of
// its blocks on the device at once. Measured on an H100 (twenty-first
// session, gemm_bench --case with FT_GEMM_QR_SPLITS): a grid short of a
// wave leaves SMs with fewer warps and loses (Q4_K gate|up at 16 rows:
// 384 blocks of 528, 33.7 us, against 26.6 with 768), while a partly filled
// last wave also costs (Q4_K down at 32 rows: 1,024 blocks, 2.6 waves of
// 396, 33.4 us, against 31.0 with 384). So: of the split counts that fill
// at least 90% of a wave, the one with the fewest waves x (steps per split
// + 1, the first step's loads not hidden), fewer splits on a tie; if none
// fills that much, the most splits. Each split at least 2 steps, at most
// 16. FT_GEMM_QR_SPLITS=N forces N where N divides the steps, for tuning.
int gemm_qr_splits(long long tiles, int steps, int resident) {
  static const int forced = env_int(
      "FT_GEMM_QR_SPLITS", [](int v) { return v >= 1 && v <= 64; }, "1 to 64 (used where it divides the steps)");
  if (forced && steps % forced == 0) return forced;
  resident = std::max(1, resident);
  int best = 0, most = 1;
  long long best_cost = 0;
  for (int s = 1; s <= 16; ++s) {
    if (s > 1 && (steps % s != 0 || steps / s < 2)) continue;
    most = s;
    const long long blocks = tiles * s;
    if (10 * blocks < 9LL * resident) continue;
    const long long cost = (blocks + resident - 1) / resident * (steps / s + 1);
    if (best == 0 || cost < best_cost) best = s, best_cost = cost;
  }
  return best > 0 ? best : most;
}

// Which few-row kernel takes an m-row product with a quantized weight on
// this target, and gemm_qr's x tile (16 or 32 rows; 0: gemm_q). gemm_qr
// wherever it exists, measured faster than gemm_q at every row count once
// its x went through LDS (H100, gemm_bench, twenty-first session: Q4_K
// gate|up 47.4 -> 26.9 us at 16 rows, 50.5 -> 32.2 at 32, 87.7 -> 60.4 at
// 64; Q8_0 down 50.2 -> 42.1 at 32), with the 16-row tile up to 16 rows
// and the 32-row tile above. FT_GEMM_QR=0 keeps gemm_q everywhere and
// FT_GEMM_QR_X=16 or 32 sets the tile, for tuning.
int gemm_qr_x_rows(const TargetFacts& facts, GgmlType type, int m) {
  static const bool off = env_off("FT_GEMM_QR");
  static const int forced_x = env_int("FT_GEMM_QR_X", [](int v) { return v == 16 || v == 32; }, "16 or 32");
  if (off || !gemm_qr_supported(facts, type)) return 0;
  if (forced_x) return forced_x;
  return m <= 16 ? 16 : 32;
}

int gemm_q_max_rows(const TargetFacts& facts, GgmlType type) {
  // Measured against expanding W and the dense GEMM (bench/RESULTS.md, H100).
  // gemm_qr: twenty-first session, at 128 rows. gemm_q: seventeenth session,
  // at 64 rows Q4_K and Q8_0 still gain (85 / 99 us against 110 / 131 on
  // 4096 x 12288), Q6_K loses (174 against 116).
  if (gemm_qr_x_rows(facts, type, 128) > 0) return 128;
  return type == GgmlType::kQ6_K ? 32 : 64;
}

bool gemm_q_fits(const OpContext& ctx, DType act, const WeightView& w, int m, DeviceBuffer x) {
  return !ctx.on_cpu() && (act == DType::kBF16 || act == DType::kF16) && gemm_q_supported(w.type) && m >= 1 &&
         m <= gemm_q_max_rows(ctx.facts(), w.type) && w.n > 0 && w.n % 32 == 0 && w.k > 0 && w.k % 256 == 0 &&
         w.data.ptr % 16 == 0 && x.ptr % 16 == 0;
}

Status gemm_q(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y, int ldy,
              DeviceBuffer bias, DeviceBuffer scratch) {
  if (!gemm_q_fits(ctx, act, w, m, x))
    return FT_ERROR(ErrorCode::kInvalidArgument,
                    "gemm_q: {} weight [{}, {}] with {} x rows of {} on {} (x at {:#x}, W at {:#x}: both 16-byte "
                    "aligned) is not a few-row quantized product",
                    ggml_traits(w.type).name, w.n, w.k, m, dtype_name(act), ctx.backend().info().name, x.ptr,
                    w.data.ptr);
  const size_t es = dtype_size(act);
  if (ldy < w.n || x.bytes < static_cast<size_t>(m) * w.k * es ||
      y.bytes < (static_cast<size_t>(m - 1) * ldy + w.n) * es || w.data.bytes < weight_bytes(w) ||
      (bias.ptr && bias.bytes < static_cast<size_t>(w.n) * es))
    return FT_ERROR(ErrorCode::kInvalidArgument,
                    "gemm_q: buffers for m={} n={} k={} ldy={} (x {} bytes, y {}, w {} of {})", m, w.n, w.k, ldy,
                    x.bytes, y.bytes, w.data.bytes, weight_bytes(w));
  // gemm_qr: blocks of 16 W rows per wave and 16 or 32 x rows; gemm_q:
  // blocks of 32 W rows per wave and 32 x rows.
  const int qr_x = gemm_qr_x_rows(ctx.facts(), w.type, m);
  const bool qr = qr_x > 0;
  const int x_rows = qr ? qr_x : kGemmQRows;
  const int w_rows = qr ? 16 * kGemmQrWaves : kGemmQWaves * kGemmQCols;
  const int step = qr ? kGemmQrStep : kGemmQStep;
  const long long tiles = static_cast<long long>((m + x_rows - 1) / x_rows) * ((w.n + w_rows - 1) / w_rows);
  const KernelSpec spec =
      qr ? gemm_qr_spec(ctx.facts(), act, w.type, x_rows / 8) : gemm_q_spec(ctx.facts(), act, w.type);
  FT_ASSIGN_OR_RETURN(KernelHandle kernel, ctx.kernel(spec));
  int splits = 0;
  if (qr) {
    FT_ASSIGN_OR_RETURN(const int resident, ctx.resident_blocks(spec));
    splits = gemm_qr_splits(tiles, w.k / step, resident);
  } else {
    splits = gemm_q_splits(ctx, tiles, w.k / step);
  }
  // Loaded whenever K could be split, so a planning pass (where residency is
  // not known) lists it too.
  KernelHandle reduce;
  if (splits > 1 || w.k / step >= 4) {
    FT_ASSIGN_OR_RETURN(reduce, ctx.kernel(gemm_q_reduce_spec(act)));
  }
  DeviceBuffer partial;
  if (splits > 1) {
    const size_t need = static_cast<size_t>(splits) * m * w.n * sizeof(float);
    partial = scratch;
    if (scratch.bytes < need || scratch.ptr % 16 != 0) {
      FT_ASSIGN_OR_RETURN(partial, ctx.scratch(need));
    }
  }
  // Mirrors kernel_src/gemm.hip's GemmQArgs<T> (both kernels take it).
  struct {
    uint64_t x, w, bias, y, partial;
    long long blocks;
    int m, n, k, ldy, steps;
  } args{x.ptr, w.data.ptr, bias.ptr, y.ptr, partial.ptr, static_cast<long long>(weight_blocks(w)),
         m, w.n, w.k, ldy, w.k / step / splits};
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>((m + x_rows - 1) / x_rows);
  dims.grid[1] = static_cast<unsigned>((w.n + w_rows - 1) / w_rows);
  dims.grid[2] = static_cast<unsigned>(splits);
  dims.block[0] = static_cast<unsigned>((qr ? kGemmQrWaves : kGemmQWaves) * ctx.facts().wave_size);
  FT_RETURN_IF_ERROR(ctx.backend().launch(kernel, dims, &args, sizeof args));
  if (splits == 1) return Status();

  // Mirrors GemmQReduceArgs<T>.
  struct {
    uint64_t partial, bias, y;
    int splits, m, n, ldy;
  } rargs{partial.ptr, bias.ptr, y.ptr, splits, m, w.n, ldy};
  LaunchDims rdims;
  rdims.grid[0] = static_cast<unsigned>((static_cast<long long>(m) * w.n + 255) / 256);
  rdims.block[0] = 256;
  return ctx.backend().launch(reduce, rdims, &rargs, sizeof rargs);
}

size_t gemm_scratch_bytes(DType act, const WeightView& w) {
  if (weight_is_act(w.type, act)) return 0;
  return static_cast<size_t>(w.n) * w.k * dtype_size(act);
}

namespace {

// gemm and gemm_expanded: few_rows lets quantized W at few rows take gemm_q.
Status gemm_route(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y,
                  DeviceBuffer bias, DeviceBuffer scratch, bool few_rows) {
  if (ctx.on_cpu())
    return FT_ERROR(ErrorCode::kUnsupported, "gemm: GPU only (on the cpu backend matmul runs its reference)");
  FT_RETURN_IF_ERROR(check_shapes(ctx, act, w, x, m, y, bias));
  if (weight_is_act(w.type, act)) return launch_dense(ctx, act, w.n, w.k, w.data.ptr, x, m, y, bias);
  if (few_rows && gemm_q_fits(ctx, act, w, m, x)) return gemm_q(ctx, act, w, x, m, y, w.n, bias, scratch);
  // Expand W to act (into the caller's scratch where it is large enough and
  // 16-byte aligned, as the expanding kernel's stores are; else the
  // context's), then the dense GEMM.
  const size_t need = gemm_scratch_bytes(act, w);
  DeviceBuffer tmp = scratch;
  if (scratch.bytes < need || scratch.ptr % 16 != 0) {
    FT_ASSIGN_OR_RETURN(tmp, ctx.scratch(need));
  }
  FT_RETURN_IF_ERROR(dequantize(ctx, act, w, tmp));
  return launch_dense(ctx, act, w.n, w.k, tmp.ptr, x, m, y, bias);
}

}  // namespace

Status gemm(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y, DeviceBuffer bias,
            DeviceBuffer scratch) {
  return gemm_route(ctx, act, w, x, m, y, bias, scratch, true);
}

Status gemm_expanded(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y,
                     DeviceBuffer bias, DeviceBuffer scratch) {
  return gemm_route(ctx, act, w, x, m, y, bias, scratch, false);
}

}  // namespace ft
