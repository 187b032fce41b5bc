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
// This expansion is the first step for quantized
// weights; dequantizing into the GEMM tile in the main loop is not done yet.
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

// Bytes of scratch gemm needs for this weight and activation type: 0 when W
// is already of type `act`, else n * k * dtype_size(act).
size_t gemm_scratch_bytes(DType act, const WeightView& w);

}  // namespace ft
