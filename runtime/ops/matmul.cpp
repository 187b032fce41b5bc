#include "runtime/ops/matmul.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "jit/catalog.h"
#include "runtime/base/env.h"
#include "runtime/ops/activation.h"
#include "runtime/ops/gemm.h"

namespace ft {

namespace {

constexpr int kMaxGemvRows = 8;  // the largest GEMV bucket; more rows go to the GEMM

// FT_GEMV_GRID_SHARE (gemv_persistent_grids' share), for tuning.
int gemv_grid_share() {
  static const int share =
      env_int("FT_GEMV_GRID_SHARE", [](int v) { return v == 1 || v == 2 || v == 4; }, "1, 2 or 4");
  return share ? share : 1;
}

Status check_weight(OpContext& ctx, const char* op, const WeightView& w) {
  FT_RETURN_IF_ERROR(check_layout(ctx.backend(), op, w));
  if (w.n <= 0 || w.k <= 0) return FT_ERROR(ErrorCode::kInvalidArgument, "{}: weight shape [{}, {}]", op, w.n, w.k);
  const auto row_bytes = ggml_bytes(w.type, static_cast<uint64_t>(w.k));
  if (!row_bytes)
    return FT_ERROR(ErrorCode::kInvalidArgument, "{}: k = {} is not a whole number of {} blocks", op, w.k,
                    ggml_type_name(w.type));
  if (w.data.bytes < *row_bytes * static_cast<uint64_t>(w.n))
    return FT_ERROR(ErrorCode::kInvalidArgument, "{}: weight buffer of {} bytes is too small for [{}, {}] {}", op,
                    w.data.bytes, w.n, w.k, ggml_type_name(w.type));
  return Status();
}

// The decode path: m <= 8 rows on the GEMV kernels (kernel_src/gemv.hip).
Status check_gemv(DType act, const WeightView& w, DeviceBuffer x) {
  if (!gemv_supports(w.type))
    return FT_ERROR(ErrorCode::kUnsupported, "matmul: no GEMV kernel for {} weights", ggml_type_name(w.type));
  const size_t es = dtype_size(act);
  // Dense rows are read in 16-byte vectors and x in the matching number of
  // elements; quantized rows in whole blocks (checked by check_weight).
  const bool dense = !gemv_quantized(w.type);
  const int per_vec = dense ? 16 / static_cast<int>(ggml_traits(w.type).bytes_per_block) : 1;
  if (w.k % per_vec != 0)
    return FT_ERROR(ErrorCode::kInvalidArgument, "matmul: k = {} must be a multiple of {} for {} weights", w.k, per_vec,
                    ggml_type_name(w.type));
  if (w.data.ptr % 16 != 0 || x.ptr % 16 != 0 || (static_cast<size_t>(w.k) * es) % 16 != 0)
    return FT_ERROR(ErrorCode::kInvalidArgument,
                    "matmul: weight and x must be 16-byte aligned with 16-byte aligned rows (k = {}, {})", w.k,
                    dtype_name(act));
  return Status();
}

// One GEMV: x is the activations for dense weights and the quantized x for
// quantized ones; y rows are ldy elements apart. With `second` (quantized,
// like w, of another type), its outputs follow w's in y and one launch runs
// both (gemv2_spec).
Status launch_gemv(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y, int ldy,
                   DeviceBuffer bias, std::optional<GatedAct> gate = std::nullopt,
                   const WeightView* second = nullptr) {
  const TargetFacts& t = ctx.facts();
  const int bucket = gemv_m_bucket(m);
  const KernelSpec spec =
      second ? gemv2_spec(t, act, w.type, second->type, w.k, bucket) : gemv_spec(t, act, w.type, w.k, bucket, gate);
  FT_ASSIGN_OR_RETURN(KernelHandle k, ctx.kernel(spec));
  const int rows_per_block = gemv_rows_per_block(t, bucket);
  const int groups = (w.n + rows_per_block - 1) / rows_per_block;
  const int groups2 = second ? (second->n + rows_per_block - 1) / rows_per_block : 0;
  int grid = groups, grid2 = groups2;
  const bool persistent = gemv_steps_per_wave(t, w.type, w.k) == 1;
  const bool persistent2 = second && gemv_steps_per_wave(t, second->type, w.k) == 1;
  if (persistent || persistent2) {
    FT_ASSIGN_OR_RETURN(int resident, ctx.resident_blocks(spec));
    const GemvGrids g = gemv_persistent_grids(groups, groups2, persistent, persistent2, resident, gemv_grid_share());
    grid = g.grid;
    grid2 = g.grid2;
  }
  // Mirrors kernel_src/gemv.hip's GemvArgs<T>.
  struct {
    uint64_t x, w, y, bias;
    int n, m, ldy;
    long long wblocks;
    uint64_t w2;
    long long wblocks2;
    int n2, split;
  } args{x.ptr, w.data.ptr, y.ptr, bias.ptr, w.n, m, ldy, static_cast<long long>(weight_blocks(w)),
         second ? second->data.ptr : 0, second ? static_cast<long long>(weight_blocks(*second)) : 0,
         second ? second->n : 0, grid};
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>(grid + grid2);
  dims.block[0] = static_cast<unsigned>(t.tiles.gemv.block_threads);
  return ctx.backend().launch(k, dims, &args, sizeof args);
}

}  // namespace

// Where the quantized GEMV runs persistent and the row groups take more than
// one round of the blocks that stay resident (LM heads, an 8B model's
// gate|up, a 4096-row weight at K = 4096 on Hopper), the grid is what stays
// resident, trimmed so every block takes the same number of groups: one
// round, each block's next group in flight during this one's dot products,
// where one block per group left a second, partial round waiting on the
// first.
GemvGrids gemv_persistent_grids(int groups, int groups2, bool persistent, bool persistent2, int resident_blocks,
                                int share) {
  GemvGrids g{groups, groups2};
  const int slots = std::max(1, resident_blocks / std::max(1, share));
  if ((persistent || persistent2) && groups + groups2 > slots) {
    const int per_block = (groups + groups2 + slots - 1) / slots;
    if (persistent) g.grid = (groups + per_block - 1) / per_block;
    if (persistent2) g.grid2 = (groups2 + per_block - 1) / per_block;
  }
  return g;
}

namespace {

// The GEMV path for weights side by side on one x: x quantized once (unless
// the caller passes it quantized) for all quantized parts.
Status gemv_parts(OpContext& ctx, DType act, std::span<const WeightView> parts, DeviceBuffer x, int m, DeviceBuffer y,
                  DeviceBuffer bias, DeviceBuffer x_q8, std::optional<GatedAct> gate = std::nullopt) {
  int total = 0;
  bool any_quantized = false;
  for (const WeightView& w : parts) {
    FT_RETURN_IF_ERROR(check_gemv(act, w, x));
    total += w.n;
    any_quantized = any_quantized || gemv_quantized(w.type);
  }
  if (any_quantized && !x_q8.ptr) {
    FT_ASSIGN_OR_RETURN(x_q8, quantize_x(ctx, act, parts[0].k, x, m, gate));
  }
  // Two quantized weights of different types (Q4_K_M's q|k and Q6_K v): one launch.
  if (parts.size() == 2 && gemv_quantized(parts[0].type) && gemv_quantized(parts[1].type) &&
      parts[0].type != parts[1].type)
    return launch_gemv(ctx, act, parts[0], x_q8, m, y, total, bias, std::nullopt, &parts[1]);
  const size_t es = dtype_size(act);
  size_t col = 0;
  for (const WeightView& w : parts) {
    const bool q = gemv_quantized(w.type);
    DeviceBuffer b = bias.ptr ? slice(bias, col * es, w.n * es) : DeviceBuffer{};
    FT_RETURN_IF_ERROR(launch_gemv(ctx, act, w, q ? x_q8 : x, m, slice(y, col * es, y.bytes - col * es), total, b,
                                   q ? std::nullopt : gate));
    col += w.n;
  }
  return Status();
}

}  // namespace

Result<DeviceBuffer> quantize_x(OpContext& ctx, DType act, int k, DeviceBuffer x, int m, std::optional<GatedAct> gate) {
  FT_ASSIGN_OR_RETURN(DeviceBuffer q8, ctx.scratch(gemv_quantized_x_bytes(m, k)));
  FT_ASSIGN_OR_RETURN(KernelHandle qk, ctx.kernel(gemv_quantize_x_spec(act, k, gate)));
  struct {
    uint64_t x, out;
    int m;
  } qargs{x.ptr, q8.ptr, m};  // mirrors kernel_src/gemv.hip's QuantizeXArgs<T>
  LaunchDims qdims;
  const int per_thread = 16 / static_cast<int>(dtype_size(act));  // one 16-byte load of x each
  qdims.grid[0] = static_cast<unsigned>((m * (k / per_thread) + kGemvQuantizeThreads - 1) / kGemvQuantizeThreads);
  qdims.block[0] = kGemvQuantizeThreads;
  FT_RETURN_IF_ERROR(ctx.backend().launch(qk, qdims, &qargs, sizeof qargs));
  return q8;
}

namespace {

// sum over t of x[t] * w[t]: the products summed in 64 float lanes within
// chunks of 1,024 elements (four vector accumulators, so the adds overlap),
// the lanes added pairwise, the chunks in double. The lanes vectorize (a
// double accumulator per element did not: 3.2 tok/s on a 0.6B Q4_K_M model
// on 2 cores), and the error stays near f32 rounding of each chunk, far
// below the tolerances the reference is held to. Built for AVX-512, AVX2
// with FMA and the baseline, chosen at load time where the compiler can.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
double dot_row(const float* x, const float* w, int k) {
  constexpr int kLanes = 64, kChunk = 1024;
  double total = 0;
  for (int t0 = 0; t0 < k; t0 += kChunk) {
    const int end = std::min(k, t0 + kChunk);
    float lane[kLanes] = {};
    int t = t0;
    for (; t + kLanes <= end; t += kLanes)
      for (int l = 0; l < kLanes; ++l) lane[l] += x[t + l] * w[t + l];
    for (; t < end; ++t) lane[0] += x[t] * w[t];
    for (int width = kLanes / 2; width >= 1; width /= 2)
      for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
    total += lane[0];
  }
  return total;
}

}  // namespace

Status matmul_reference(GgmlType type, const uint8_t* w, int n, int k, const float* x, int m, float* y,
                        const float* bias) {
  const auto row_bytes = ggml_bytes(type, static_cast<uint64_t>(k));
  if (!row_bytes) return FT_ERROR(ErrorCode::kInvalidArgument, "matmul: k = {} does not fit {} blocks", k, ggml_type_name(type));
  Status first_error;
  // Each output column j is computed by one thread, so results do not depend
  // on the thread count.
#pragma omp parallel
  {
    std::vector<float> row(static_cast<size_t>(k));
    Status local;
#pragma omp for schedule(static)
    for (int j = 0; j < n; ++j) {
      if (!local.ok()) continue;
      if (type == GgmlType::kF32) {
        std::memcpy(row.data(), w + static_cast<size_t>(j) * k * 4, static_cast<size_t>(k) * 4);
      } else {
        local = dequantize_row(type, {w + *row_bytes * j, *row_bytes}, row.data(), static_cast<size_t>(k));
        if (!local.ok()) continue;
      }
      for (int i = 0; i < m; ++i) {
        double acc = dot_row(x + static_cast<size_t>(i) * k, row.data(), k);
        if (bias) acc += bias[j];
        y[static_cast<size_t>(i) * n + j] = static_cast<float>(acc);
      }
    }
#pragma omp critical
    if (!local.ok() && first_error.ok()) first_error = local;
  }
  return first_error;
}

namespace {
Status check_buffers(DType act, int m, int k, int n, DeviceBuffer x, DeviceBuffer y, DeviceBuffer bias) {
  const size_t es = dtype_size(act);
  if (m <= 0 || x.bytes < static_cast<size_t>(m) * k * es || y.bytes < static_cast<size_t>(m) * n * es ||
      (bias.ptr && bias.bytes < static_cast<size_t>(n) * es))
    return FT_ERROR(ErrorCode::kInvalidArgument, "matmul: buffers too small for [{}, {}] x [{}, {}]^T", m, k, n, k);
  return Status();
}
}  // namespace

bool matmul_reads_q8(const OpContext& ctx, std::span<const WeightView> parts, int m) {
  if (ctx.on_cpu() || m <= 0 || m > kMaxGemvRows) return false;
  bool any = false;
  for (const WeightView& w : parts) {
    if (!gemv_supports(w.type)) return false;
    any = any || gemv_quantized(w.type);
  }
  return any;
}

size_t matmul_q8_bytes(int m, int k) { return gemv_quantized_x_bytes(m, k); }

Status matmul(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y,
              DeviceBuffer bias, DeviceBuffer x_q8) {
  FT_RETURN_IF_ERROR(check_weight(ctx, "matmul", w));
  FT_RETURN_IF_ERROR(check_buffers(act, m, w.k, w.n, x, y, bias));
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("matmul", act));
    return matmul_reference(w.type, host_ptr<const uint8_t>(w.data), w.n, w.k, host_ptr<const float>(x), m,
                            host_ptr<float>(y), bias.ptr ? host_ptr<const float>(bias) : nullptr);
  }
  if (m > kMaxGemvRows) return gemm(ctx, act, w, x, m, y, bias);
  return gemv_parts(ctx, act, {&w, 1}, x, m, y, bias, x_q8);
}

Status matmul_stacked(OpContext& ctx, DType act, std::span<const WeightView> parts, DeviceBuffer x, int m,
                      DeviceBuffer y, DeviceBuffer bias, DeviceBuffer tmp, DeviceBuffer x_q8) {
  if (parts.empty()) return FT_ERROR(ErrorCode::kInvalidArgument, "matmul: no weights");
  int total = 0, widest = 0;
  for (const WeightView& w : parts) {
    FT_RETURN_IF_ERROR(check_weight(ctx, "matmul", w));
    if (w.k != parts[0].k)
      return FT_ERROR(ErrorCode::kInvalidArgument, "matmul: stacked weights of k = {} and {}", parts[0].k, w.k);
    total += w.n;
    widest = std::max(widest, w.n);
  }
  FT_RETURN_IF_ERROR(check_buffers(act, m, parts[0].k, total, x, y, bias));
  if (parts.size() == 1) return matmul(ctx, act, parts[0], x, m, y, bias, x_q8);
  if (!ctx.on_cpu() && m <= kMaxGemvRows) return gemv_parts(ctx, act, parts, x, m, y, bias, x_q8);
  const size_t es = dtype_size(act);
  // Quantized parts at few rows write their columns of y themselves.
  if (std::all_of(parts.begin(), parts.end(), [&](const WeightView& w) { return gemm_q_fits(ctx, act, w, m, x); })) {
    size_t col = 0;
    for (const WeightView& w : parts) {
      DeviceBuffer b = bias.ptr ? slice(bias, col * es, w.n * es) : DeviceBuffer{};
      FT_RETURN_IF_ERROR(gemm_q(ctx, act, w, x, m, slice(y, col * es, y.bytes - col * es), total, b));
      col += w.n;
    }
    return Status();
  }
  if (tmp.bytes < static_cast<size_t>(m) * widest * es)
    return FT_ERROR(ErrorCode::kInvalidArgument, "matmul: scratch of {} bytes for [{}, {}] outputs", tmp.bytes, m, widest);
  size_t col = 0;
  for (const WeightView& w : parts) {
    DeviceBuffer b = bias.ptr ? slice(bias, col * es, w.n * es) : DeviceBuffer{};
    FT_RETURN_IF_ERROR(matmul(ctx, act, w, x, m, tmp, b));
    FT_RETURN_IF_ERROR(ctx.backend().copy_2d(slice(y, col * es, y.bytes - col * es), total * es, tmp, w.n * es,
                                             w.n * es, m));
    col += w.n;
  }
  return Status();
}

Status matmul_gated(OpContext& ctx, DType act, GatedAct gate, const WeightView& w, DeviceBuffer gate_up, int m,
                    DeviceBuffer y, DeviceBuffer tmp) {
  FT_RETURN_IF_ERROR(check_weight(ctx, "matmul", w));
  const size_t es = dtype_size(act);
  if (!ctx.on_cpu() && m > 0 && m <= kMaxGemvRows && gemv_supports(w.type)) {
    if (gate_up.bytes < 2 * static_cast<size_t>(m) * w.k * es || y.bytes < static_cast<size_t>(m) * w.n * es)
      return FT_ERROR(ErrorCode::kInvalidArgument, "matmul: buffers too small for [{}, 2 x {}] x [{}, {}]^T", m, w.k,
                      w.n, w.k);
    return gemv_parts(ctx, act, {&w, 1}, gate_up, m, y, {}, {}, gate);
  }
  FT_RETURN_IF_ERROR(gated_act(ctx, act, gate, m, w.k, gate_up, tmp));
  return matmul(ctx, act, w, tmp, m, y);
}

}  // namespace ft
