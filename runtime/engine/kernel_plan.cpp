#include "runtime/engine/kernel_plan.h"

#include <algorithm>

#include "runtime/engine/executor.h"

namespace ft {

Result<std::vector<KernelSpec>> plan_kernels(const WeightSet& weights, const TargetId& target,
                                             const PlanOptions& o) {
  if (!target.facts) return FT_ERROR(ErrorCode::kInvalidArgument, "plan_kernels: no target");
  const DeviceKind kind = target.facts->vendor == Vendor::kNvidia ? DeviceKind::kCuda : DeviceKind::kHip;
  std::unique_ptr<Backend> backend = make_planning_backend(kind, target.to_string());
  std::vector<KernelSpec> specs;
  OpContext ops(backend.get(), nullptr, target);
  ops.record_kernels(&specs);
  ExecutorOptions eo;
  eo.kv_block_size = o.kv_block_size;
  eo.max_seqs_per_step = o.max_batch;
  eo.max_tokens_per_step = std::max(o.prefill_chunk, o.max_batch);
  eo.max_blocks_per_seq = (o.max_context + o.kv_block_size - 1) / o.kv_block_size;
  eo.kv_cache_bytes = static_cast<int64_t>(kv_block_bytes(weights.config(), o.kv_block_size, DType::kBF16)) *
                      eo.max_blocks_per_seq * o.max_batch;
  FT_ASSIGN_OR_RETURN(std::unique_ptr<Executor> ex, Executor::create(backend.get(), &ops, weights, eo));

  std::vector<int32_t> table(eo.max_blocks_per_seq);
  for (int i = 0; i < eo.max_blocks_per_seq; ++i) table[i] = i;
  // One step of `seqs` sequences with `n_tokens` new tokens each after `cached` ones.
  auto run = [&](int seqs, int n_tokens, int cached) -> Status {
    Batch b;
    for (int s = 0; s < seqs; ++s) {
      for (int i = 0; i < n_tokens; ++i) {
        b.tokens.push_back(0);
        b.positions.push_back(cached + i);
        b.slots.push_back(cached + i);
      }
      BatchSeq q;
      q.n_tokens = n_tokens;
      q.context_len = cached + n_tokens;
      q.block_table = table.data();
      q.n_blocks = (q.context_len + o.kv_block_size - 1) / o.kv_block_size;
      q.want_logits = true;
      b.seqs.push_back(q);
    }
    StepOutput out;
    return ex->forward(b, out);
  };
  const int ctx = std::min(o.max_context - 1, 64);
  for (int m = 1; m <= o.max_batch; ++m) FT_RETURN_IF_ERROR(run(m, 1, ctx));  // decode
  FT_RETURN_IF_ERROR(run(1, std::min(o.prefill_chunk, o.max_context - 1), 0));  // prefill chunk
  const int extend = std::max(1, std::min(8, o.prefill_chunk / 2));
  FT_RETURN_IF_ERROR(run(std::min(2, o.max_batch), extend, std::max(0, std::min(ctx, o.max_context - extend))));  // extend
  return specs;
}

}  // namespace ft
