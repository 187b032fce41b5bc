// Gated activations (SiLU(gate) * up, GELU-tanh(gate) * up): host launcher and
// CPU reference.
#pragma once

#include "jit/catalog.h"
#include "runtime/base/dtype.h"
#include "runtime/ops/op_context.h"

namespace ft {

// gate_up is [rows, 2 * inter] (gate first), out is [rows, inter].
Status gated_act(OpContext& ctx, DType dtype, GatedAct act, int rows, int inter, DeviceBuffer gate_up,
                 DeviceBuffer out);

void gated_act_reference(GatedAct act, int rows, int inter, const float* gate_up, float* out);

}  // namespace ft
