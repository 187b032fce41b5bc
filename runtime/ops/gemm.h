// The prefill matmul (m > 8 rows): y[m, n] = x[m, k] * W[n, k]^T (+ bias[n])
// on the target's matrix cores (WMMA on gfx11/gfx12, MFMA on gfx9, mma.sync
// on sm_80+), chosen from TargetFacts. matmul() (runtime/ops/matmul.h) calls
// this for m > 8; it is public so benches and checks can call it directly.
//
// act is f16 or bf16 (f32 runs a plain tiled fp32 kernel). W is a
// WeightView: dense weights of the activation type feed the GEMM directly;
// other dense types (F32, the other 16-bit type) and quantized types (Q8_0,
// Q4_0, Q4_K, Q5_K, Q6_K) are first converted to the activation type into a
// scratch buffer (`scratch`, at least gemm_scratch_bytes() bytes; when it is
// empty, too small or not 16-byte aligned, the context's scratch, OpContext::scratch, grown once).
// Quantized weights at few rows (m <= gemm_q_max_rows) are instead decoded
// into the GEMM's tile (gemm_q below), and read once.
//
// Shapes: any m >= 1 (rows past the tile are masked); n a multiple of 32, k a
// multiple of 32 and of the weight's block (256 for the K-quants), as every
// model shape is; else kInvalidArgument. GPU only: on the CPU backend gemm
// returns kUnsupported (matmul runs its reference there).
#pragma once

#include <cstddef>

#include "runtime/base/dtype.h"
#include "runtime/ops/matmul.h"
#include "runtime/ops/op_context.h"

namespace ft {

Status gemm(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y,
            DeviceBuffer bias = {}, DeviceBuffer scratch = {});
// gemm without the few-row path: W of another type is always expanded first
// (what gemm does above gemm_q_max_rows); for benchmarks and checks.
Status gemm_expanded(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y,
                     DeviceBuffer bias = {}, DeviceBuffer scratch = {});

// Bytes of scratch gemm needs for this weight and activation type: 0 when W
// is already of type `act`, else n * k * dtype_size(act).
size_t gemm_scratch_bytes(DType act, const WeightView& w);

// Few rows against quantized weights: W decoded into the matrix-core tile
// (kernel_src/gemm.hip's gemm_q), read once per 32 rows of x instead of
// expanded whole. gemm() takes this path itself where it fits; matmul's
// stacked projections call it directly to write each part's columns of a
// wider y (row stride ldy elements). On NVIDIA (sm_80 on) with Q4_K, Q5_K,
// Q6_K or Q8_0 it runs gemm_qr instead, measured faster at every row count:
// each warp decodes its W rows straight into mma.sync fragments, with no
// LDS tile for W.
// Fits: a GPU backend, f16/bf16 activations, Q4_0 / Q8_0 / Q4_K / Q5_K /
// Q6_K weights, W and x 16-byte aligned, 1 <= m <= gemm_q_max_rows, n a
// multiple of 32, k of 256. With K split across blocks (decided from the grid and the
// SM/CU count; for gemm_qr, from how many of its blocks fit at once) the f32 partial sums need splits * m * n * 4 bytes of scratch
// (`scratch` if large enough, else the context's).
// The most rows of x gemm_q takes for a weight type on `facts` (above,
// expanding W and the dense GEMM is faster): 128 where gemm_qr serves it,
// else 64, 32 for Q6_K.
int gemm_q_max_rows(const TargetFacts& facts, GgmlType type);
// gemm_q's choice on `facts` for m rows of a `type` weight: the x tile of
// gemm_qr (16 or 32 rows), or 0 for gemm_q's LDS tiles (runtime/ops/gemm.cpp
// says where each measured faster; FT_GEMM_QR and FT_GEMM_QR_X override it).
int gemm_qr_x_rows(const TargetFacts& facts, GgmlType type, int m);
// gemm_qr's K splits for `tiles` blocks over `steps` K steps of 256 with
// `resident` of its blocks on the device at once (runtime/ops/gemm.cpp says
// how it chooses; FT_GEMM_QR_SPLITS overrides it).
int gemm_qr_splits(long long tiles, int steps, int resident);
bool gemm_q_fits(const OpContext& ctx, DType act, const WeightView& w, int m, DeviceBuffer x);
Status gemm_q(OpContext& ctx, DType act, const WeightView& w, DeviceBuffer x, int m, DeviceBuffer y, int ldy,
              DeviceBuffer bias = {}, DeviceBuffer scratch = {});

}  // namespace ft
