// The KernelPlan: every kernel a model needs on a target, found by running
// the real forward pass on a planning backend (nothing executes; the ops
// record the specs they would compile). The plan therefore cannot drift from
// what the executor launches. Batches cover decode at every batch size up to
// max_batch, a full prefill chunk and a mixed step.
#pragma once

#include <vector>

#include "gfx_targets/targets.h"
#include "jit/kernel_spec.h"
#include "runtime/engine/defaults.h"
#include "runtime/model/weights.h"

namespace ft {

struct PlanOptions {
  int max_batch = kDefaultMaxBatch;
  int prefill_chunk = 512;
  int kv_block_size = 16;
  int max_context = 4096;
};

Result<std::vector<KernelSpec>> plan_kernels(const WeightSet& weights, const TargetId& target,
                                             const PlanOptions& options);

}  // namespace ft
