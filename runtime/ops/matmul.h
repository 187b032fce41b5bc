// Matrix multiply against a model weight: y[m, n] = x[m, k] * W[n, k]^T (+ bias).
//
// W is stored as a GGUF tensor of shape {k, n} (ggml order: k contiguous), so
// row j of W (k elements) is output feature j; GPUs hold Q8_0 and Q6_K in the
// device layout (weight_layout.h: upload with upload_weight). Supported weight types: F32,
// F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K. Activations x and y are `act`
// (f32 on the CPU backend); bias, when given, is [n] of `act`.
//
// Paths: m <= 8 runs the GEMV kernels (decode), larger m the GEMM kernels
// (prefill; quantized weights are dequantized to tiles). The CPU backend
// dequantizes a row at a time and accumulates in f32.
#pragma once

#include <optional>
#include <span>

#include "runtime/base/dtype.h"
#include "runtime/model/ggml_types.h"
#include "runtime/ops/activation.h"
#include "runtime/ops/op_context.h"
#include "runtime/ops/weight_layout.h"

namespace ft {

// x_q8, when given, is x already quantized for the quantized GEMV by the
// kernel that produced x (rmsnorm's q8 output, matmul_q8_bytes(m, k) bytes);
// otherwise a quantized GEMV quantizes x itself first. Other paths ignore it.
Status matmul(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y,
              DeviceBuffer bias = {}, DeviceBuffer x_q8 = {});

// y[m, n0 + n1 + ...] = x * [W0; W1; ...]^T (+ bias of n0 + n1 + ...):
// weights of one k applied to one x, their outputs side by side, for parts
// that cannot share one stacked buffer (q | k | v with a Q6_K v). The GEMV
// path quantizes x once for every quantized part and each part writes its own
// columns of y; the other paths run each part into tmp ([m, widest n] of
// act) and copy its columns.
Status matmul_stacked(OpContext& ctx, DType act, std::span<const WeightView> parts, DeviceBuffer x, int m,
                      DeviceBuffer y, DeviceBuffer bias, DeviceBuffer tmp, DeviceBuffer x_q8 = {});

// Whether matmul / matmul_stacked on these weights at m rows reads a
// quantized x (the GPU GEMV path with a quantized part): then a producer of
// x may write it quantized (matmul_q8_bytes(m, k) bytes) and pass it as x_q8.
bool matmul_reads_q8(const OpContext& ctx, std::span<const WeightView> parts, int m);
size_t matmul_q8_bytes(int m, int k);
// x [m, k] (or gate(x) * up from [m, 2k] gate_up rows) quantized as the
// quantized GEMV reads it, into the context's scratch (GPUs): what every q8
// producer must equal bit for bit.
Result<DeviceBuffer> quantize_x(OpContext& ctx, DType act, int k, DeviceBuffer x, int m, std::optional<GatedAct> gate);

// y[m, n] = (gate(gate_up[:, :k]) * gate_up[:, k:]) * W[n, k]^T: the gated
// activation and the down projection. On the GEMV path (GPU, m <= 8) the
// activation runs inside the matmul's x load, with no launch of its own and
// the same result as the two ops (the product is rounded to `act` first);
// otherwise gated_act() writes it to `tmp` ([m, k] of act) and matmul() follows.
Status matmul_gated(OpContext& ctx, DType act, GatedAct gate, const WeightView& w, DeviceBuffer gate_up, int m,
                    DeviceBuffer y, DeviceBuffer tmp);

// The grids of a persistent quantized GEMV launch (kernel_src/gemv.hip's
// gemv_quant: one step of K per wave) of `groups` row groups, and of the
// second weight's `groups2` in the same launch (0 without one): where they
// take more than `slots` blocks (the resident blocks over the grid share),
// each block takes the same number of groups, as few blocks as that needs.
// A weight whose kernel is not persistent (persistent / persistent2 false)
// keeps one block per group. The share (FT_GEMV_GRID_SHARE: 1, 2 or 4; 1 by
// default, for tuning) leaves room for the next launch's blocks to be
// resident beside this one and request their first weights before it ends.
struct GemvGrids {
  int grid, grid2;
};
GemvGrids gemv_persistent_grids(int groups, int groups2, bool persistent, bool persistent2, int resident_blocks,
                                int share);

// The reference: `w` is the raw GGUF bytes of W; each row is dequantized to
// f32 and dotted with x in f32 (double accumulation). Multithreaded.
Status matmul_reference(GgmlType type, const uint8_t* w, int n, int k, const float* x, int m, float* y,
                        const float* bias = nullptr);

}  // namespace ft
