// The gate activations, shared by the gated activation kernel
// (activation.hip) and the GEMV that applies them to its x on the fly
// (gemv.hip).
#pragma once

#include "ft_device.h"

namespace ft {

struct SiluOp {
  // silu(g) = g * sigmoid(g) = g / (1 + exp(-g))
  static FT_DEVICE float apply(float g) { return g * fast_rcp(1.0f + fast_exp(-g)); }
};

struct GeluTanhOp {
  // gelu_tanh(g) = 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3)))
  static FT_DEVICE float apply(float g) {
    return 0.5f * g * (1.0f + fast_tanh(0.7978845608028654f * (g + 0.044715f * g * g * g)));
  }
};

}  // namespace ft
