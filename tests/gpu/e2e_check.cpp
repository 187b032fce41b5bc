// e2e_check MODEL [TOKENS]: the model's forward pass on the GPU (bf16, kernels
// compiled at run time) against the CPU backend (f32 reference ops), teacher-
// forced over a fixed token sequence: a prefill chunk, then one token per
// step. Prints the relative L2 error of the logits per position and whether
// the argmax agrees; exits 1 if any position exceeds 2e-2.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "jit/warm.h"
#include "runtime/engine/executor.h"
#include "runtime/engine/kernel_plan.h"
#include "runtime/ops/op_session.h"

namespace ft {
namespace {

struct Runner {
  OpSession session;
  std::unique_ptr<Executor> ex;
};

Result<Runner> open_runner(const std::string& device, const WeightSet& w, int max_ctx) {
  Runner r;
  FT_ASSIGN_OR_RETURN(r.session, open_op_session(device));
  Backend& backend = *r.session.backend;
  ExecutorOptions eo;
  eo.max_tokens_per_step = 128;
  eo.max_seqs_per_step = 4;
  eo.max_blocks_per_seq = (max_ctx + 15) / 16;
  const DType act = backend.kind() == DeviceKind::kCpu ? DType::kF32 : DType::kBF16;
  eo.kv_cache_bytes = static_cast<int64_t>(kv_block_bytes(w.config(), 16, act)) * eo.max_blocks_per_seq * 2;
  if (r.session.jit) {
    const TargetId& target = r.session.ops->target();
    FT_ASSIGN_OR_RETURN(auto plan, plan_kernels(w, target, PlanOptions{4, 128, 16, max_ctx}));
    WarmResult wr = warm_kernels(*r.session.jit, target, plan);
    std::printf("%s: %zu kernels in the plan, %d compiled, %d cached, %d failed, %.2f s\n", device.c_str(), plan.size(),
                wr.compiled, wr.cached, wr.failed, wr.seconds);
    if (wr.failed) return FT_ERROR(ErrorCode::kCompileError, "{}", wr.failures[0]);
  }
  FT_ASSIGN_OR_RETURN(r.ex, Executor::create(&backend, r.session.ops.get(), w, eo));
  return r;
}

int run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: e2e_check MODEL [TOKENS] [DEVICE]\n");
    return 2;
  }
  const int n = argc > 2 ? std::atoi(argv[2]) : 48;
  const std::string device = argc > 3 ? argv[3] : "cuda:0";
  auto w = WeightSet::open(argv[1]);
  if (!w.ok()) {
    std::fprintf(stderr, "e2e_check: %s\n", w.status().to_string().c_str());
    return 2;
  }
  const int vocab = static_cast<int>(w->config().vocab_size);
  auto gpu = open_runner(device, *w, n + 16);
  auto cpu = open_runner("cpu", *w, n + 16);
  if (!gpu.ok() || !cpu.ok()) {
    std::fprintf(stderr, "e2e_check: %s\n", (!gpu.ok() ? gpu.status() : cpu.status()).to_string().c_str());
    return 2;
  }
  std::vector<int32_t> tokens(n);
  uint64_t x = 12345;
  for (auto& t : tokens) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    t = static_cast<int32_t>((x >> 33) % std::min(vocab, 150000));
  }
  // Blocks in reverse order (the cache holds two sequences' worth).
  const int blocks = (n + 16 + 15) / 16;
  std::vector<int32_t> table(blocks);
  for (int i = 0; i < blocks; ++i) table[i] = 2 * blocks - 1 - i;
  const int first = n / 2;
  double worst = 0;
  int agree = 0, checked = 0;
  std::printf("%-8s %-6s %12s %s\n", "position", "step", "rel L2", "argmax gpu/cpu");
  for (int done = 0; done < n;) {
    const int step = done == 0 ? first : 1;
    Batch b;
    for (int i = done; i < done + step; ++i) {
      b.tokens.push_back(tokens[i]);
      b.positions.push_back(i);
      b.slots.push_back(table[i / 16] * 16 + i % 16);
    }
    BatchSeq s{.n_tokens = step, .context_len = done + step, .block_table = table.data(),
               .n_blocks = (done + step + 15) / 16, .want_logits = true, .host_logits = true};
    b.seqs.push_back(s);
    StepOutput og, oc;
    Status sg = (*gpu).ex->forward(b, og), sc = (*cpu).ex->forward(b, oc);
    const std::vector<float>&lg = og.logits, &lc = oc.logits;
    if (!sg.ok() || !sc.ok()) {
      std::fprintf(stderr, "e2e_check: %s\n", (!sg.ok() ? sg : sc).to_string().c_str());
      return 1;
    }
    double num = 0, den = 0;
    int ag = 0, ac = 0;
    for (int i = 0; i < vocab; ++i) {
      num += (lg[i] - lc[i]) * static_cast<double>(lg[i] - lc[i]);
      den += static_cast<double>(lc[i]) * lc[i];
      if (lg[i] > lg[ag]) ag = i;
      if (lc[i] > lc[ac]) ac = i;
    }
    const double err = std::sqrt(num / den);
    worst = std::max(worst, err);
    agree += ag == ac;
    ++checked;
    done += step;
    std::printf("%-8d %-6s %12.3e %d/%d\n", done - 1, step > 1 ? "prefill" : "decode", err, ag, ac);
  }
  std::printf("worst rel L2 %.3e over %d positions; argmax agrees at %d of %d\n", worst, checked, agree, checked);
  return worst < 2e-2 ? 0 : 1;
}

}  // namespace
}  // namespace ft

int main(int argc, char** argv) { return ft::run(argc, argv); }
