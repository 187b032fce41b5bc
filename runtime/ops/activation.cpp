#include "runtime/ops/activation.h"

#include <cmath>

namespace ft {

Status gated_act(OpContext& ctx, DType dtype, GatedAct act, int rows, int inter, DeviceBuffer gate_up,
                 DeviceBuffer out) {
  if (ctx.on_cpu()) {
    FT_RETURN_IF_ERROR(check_cpu_dtype("gated_act", dtype));
    const size_t n = static_cast<size_t>(rows) * inter * 4;
    if (rows <= 0 || inter <= 0 || gate_up.bytes < 2 * n || out.bytes < n)
      return FT_ERROR(ErrorCode::kInvalidArgument, "gated_act: bad shape [{}, {}] or buffers too small", rows, inter);
    gated_act_reference(act, rows, inter, host_ptr<const float>(gate_up), host_ptr<float>(out));
    return Status();
  }
  const ActTile& tile = ctx.facts().tiles.act;
  const int per_vec = tile.load_bytes / dtype_size(dtype);
  if (rows <= 0 || inter <= 0 || inter % per_vec != 0)
    return FT_ERROR(ErrorCode::kInvalidArgument, "gated_act: inter {} must be a positive multiple of {} ({} rows)",
                    inter, per_vec, rows);
  const size_t out_bytes = static_cast<size_t>(rows) * inter * dtype_size(dtype);
  if (gate_up.bytes < 2 * out_bytes || out.bytes < out_bytes)
    return FT_ERROR(ErrorCode::kInvalidArgument, "gated_act: buffers too small for [{}, {}] {}", rows, inter,
                    dtype_name(dtype));
  FT_ASSIGN_OR_RETURN(KernelHandle k, ctx.kernel(gated_act_spec(ctx.facts(), dtype, act, inter)));
  // Mirrors kernel_src/activation.hip's GatedActArgs<T>.
  struct {
    uint64_t gate_up, out;
    int rows;
  } args{gate_up.ptr, out.ptr, rows};
  const int per_block = tile.block_threads * per_vec * tile.vectors_per_thread;
  LaunchDims dims;
  dims.grid[0] = static_cast<unsigned>((inter + per_block - 1) / per_block);
  dims.grid[1] = static_cast<unsigned>(rows);
  dims.block[0] = static_cast<unsigned>(tile.block_threads);
  return ctx.backend().launch(k, dims, &args, sizeof args);
}

void gated_act_reference(GatedAct act, int rows, int inter, const float* gate_up, float* out) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float* g = gate_up + static_cast<size_t>(r) * 2 * inter;
    const float* u = g + inter;
    for (int i = 0; i < inter; ++i) {
      double x = g[i], y;
      if (act == GatedAct::kSilu) y = x / (1.0 + std::exp(-x));
      else y = 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
      out[static_cast<size_t>(r) * inter + i] = static_cast<float>(y * u[i]);
    }
  }
}

}  // namespace ft
