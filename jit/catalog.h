// The kernel catalog: every instantiation ft ships for a target, so that
// `ft-jit warm --arch A` can build them all ahead of time. Each op family
// contributes a spec builder that reads its tile from gfx_targets.
#pragma once

#include <vector>

#include "gfx_targets/targets.h"
#include "jit/kernel_spec.h"
#include "runtime/base/dtype.h"

namespace ft {

enum class GatedAct { kSilu, kGeluTanh };

// RMSNorm over rows of width `hidden`; with `add_residual`, fused with the
// residual add that precedes it.
KernelSpec rmsnorm_spec(const TargetFacts& target, DType dtype, int hidden, bool add_residual = false);
// act(gate) * up over [rows, 2 * inter].
KernelSpec gated_act_spec(const TargetFacts& target, DType dtype, GatedAct act, int inter);

// Row widths of the dense Llama / Qwen2 / Qwen3 / Mistral / Gemma families.
std::vector<int> catalog_hidden_sizes();
std::vector<int> catalog_intermediate_sizes();

std::vector<KernelSpec> kernel_catalog(const TargetFacts& target);

}  // namespace ft
