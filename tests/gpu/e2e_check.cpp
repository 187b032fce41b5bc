// e2e_check: the model's forward pass on the GPU (bf16, kernels compiled at
// run time) against the CPU backend (f32 reference ops), or dumped for an
// outside reference.
//
//   e2e_check MODEL [TOKENS] [DEVICE] [SEQS]
//     SEQS (1 to 16, default 3) sequences, teacher-forced over fixed token
//     streams: one prefill step of different lengths for each, then decode
//     steps of all of them together (on a GPU a graph of the batch bucket,
//     the smallest power of two that holds them, padded with empty
//     sequences: 1 for one, the batch-1 decode kernels; 4 for three; 16 for
//     nine to sixteen, past the GEMV's 8 rows), captured on the first
//     step and replayed after. Prints the
//     relative L2 error of each sequence's logits per step, and whether the
//     token drawn on the device (greedy) is the CPU's argmax; exits 1 if any
//     step exceeds 2e-2.
//
//   e2e_check --dump MODEL IDS OUT [DEVICE] [HIDDEN_OUT] [TRACE_DIR]
//     Runs the int32 token ids in file IDS as one prompt in one step and
//     writes every position's logits (f32, [n, vocab]) to OUT; with
//     HIDDEN_OUT, also the residual stream after every layer (f32,
//     [layers, n, hidden]); with TRACE_DIR, every op output of the first
//     layer as TRACE_DIR/NAME.f32 ([n, width], the executor's trace names),
//     for tests/gpu/trace_check.py.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "jit/warm.h"
#include "runtime/base/files.h"
#include "runtime/engine/executor.h"
#include "runtime/engine/kernel_plan.h"
#include "runtime/ops/op_session.h"

namespace ft {
namespace {

struct Runner {
  OpSession session;
  std::unique_ptr<Executor> ex;
};

constexpr int kMaxSeqs = 16;

// max_seqs: the sequences of a step (the largest decode graph bucket), 4 or 16.
Result<Runner> open_runner(const std::string& device, const WeightSet& w, int max_ctx, int max_step_tokens,
                           int max_seqs = 4) {
  Runner r;
  FT_ASSIGN_OR_RETURN(r.session, open_op_session(device));
  Backend& backend = *r.session.backend;
  ExecutorOptions eo;
  eo.max_tokens_per_step = max_step_tokens;
  eo.max_seqs_per_step = max_seqs;
  eo.max_blocks_per_seq = (max_ctx + 15) / 16;
  const DType act = backend.kind() == DeviceKind::kCpu ? DType::kF32 : DType::kBF16;
  eo.kv_cache_bytes = static_cast<int64_t>(kv_block_bytes(w.config(), 16, act)) * eo.max_blocks_per_seq * max_seqs;
  if (r.session.jit) {
    const TargetId& target = r.session.ops->target();
    FT_ASSIGN_OR_RETURN(auto plan, plan_kernels(w, target, PlanOptions{max_seqs, max_step_tokens, 16, max_ctx}));
    WarmResult wr = warm_kernels(*r.session.jit, target, plan);
    std::printf("%s: %zu kernels in the plan, %d compiled, %d cached, %d failed, %.2f s\n", device.c_str(), plan.size(),
                wr.compiled, wr.cached, wr.failed, wr.seconds);
    if (wr.failed) return FT_ERROR(ErrorCode::kCompileError, "{}", wr.failures[0]);
  }
  const auto t0 = std::chrono::steady_clock::now();
  FT_ASSIGN_OR_RETURN(r.ex, Executor::create(&backend, r.session.ops.get(), w, eo));
  std::printf("%s: weights uploaded in %.2f s\n", device.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return r;
}

double rel_l2(const float* a, const float* ref, int n) {
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    num += (static_cast<double>(a[i]) - ref[i]) * (static_cast<double>(a[i]) - ref[i]);
    den += static_cast<double>(ref[i]) * ref[i];
  }
  return std::sqrt(num / den);
}

int dump(const std::string& model, const std::string& ids_path, const std::string& out_path, const std::string& device,
         const std::string& hidden_path, const std::string& trace_dir) {
  auto w = WeightSet::open(model);
  auto raw = read_file(ids_path);
  if (!w.ok() || !raw.ok()) {
    std::fprintf(stderr, "e2e_check: %s\n", (!w.ok() ? w.status() : raw.status()).to_string().c_str());
    return 2;
  }
  std::vector<int32_t> ids(raw->size() / 4);
  std::memcpy(ids.data(), raw->data(), ids.size() * 4);
  const int n = static_cast<int>(ids.size());
  auto r = open_runner(device, *w, n + 16, std::max(n, 16));
  if (!r.ok()) {
    std::fprintf(stderr, "e2e_check: %s\n", r.status().to_string().c_str());
    return 2;
  }
  std::vector<int32_t> table((n + 15) / 16);
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<int32_t>(table.size() - 1 - i);
  Batch b;
  for (int i = 0; i < n; ++i) {
    b.tokens.push_back(ids[i]);
    b.positions.push_back(i);
    b.slots.push_back(table[i / 16] * 16 + i % 16);
  }
  b.seqs.push_back(BatchSeq{.n_tokens = n, .context_len = n, .block_table = table.data(),
                            .n_blocks = static_cast<int>(table.size()), .want_logits = true, .all_logits = true,
                            .sampling = {}});
  std::vector<float> hidden;
  if (!hidden_path.empty() || !trace_dir.empty())
    r->ex->set_trace(
        [&](int, std::string_view name, const std::vector<float>& h) {
          if (name == "out") {
            if (!hidden_path.empty()) hidden.insert(hidden.end(), h.begin(), h.end());
            return Status();
          }
          return write_file_atomic(trace_dir + "/" + std::string(name) + ".f32", h.data(), h.size() * 4);
        },
        trace_dir.empty() ? 0 : 1);
  StepOutput out;
  const auto t0 = std::chrono::steady_clock::now();
  if (Status s = r->ex->forward(b, out); !s.ok()) {
    std::fprintf(stderr, "e2e_check: %s\n", s.to_string().c_str());
    return 1;
  }
  std::printf("%d positions in %.1f ms\n", n,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  for (auto [path, data] : {std::pair{out_path, &out.logits}, std::pair{hidden_path, &hidden}}) {
    if (path.empty()) continue;
    if (Status s = write_file_atomic(path, data->data(), data->size() * 4); !s.ok()) {
      std::fprintf(stderr, "e2e_check: %s\n", s.to_string().c_str());
      return 1;
    }
  }
  return 0;
}

int check(const std::string& model, int n, const std::string& device, int seqs) {
  auto w = WeightSet::open(model);
  if (!w.ok()) {
    std::fprintf(stderr, "e2e_check: %s\n", w.status().to_string().c_str());
    return 2;
  }
  const int vocab = static_cast<int>(w->config().vocab_size);
  const int max_seqs = seqs <= 4 ? 4 : 16;
  const int step_tokens = std::max(128, seqs * (n / 2));  // the prefill step
  auto gpu = open_runner(device, *w, n + 16, step_tokens, max_seqs);
  auto cpu = open_runner("cpu", *w, n + 16, step_tokens, max_seqs);
  if (!gpu.ok() || !cpu.ok()) {
    std::fprintf(stderr, "e2e_check: %s\n", (!gpu.ok() ? gpu.status() : cpu.status()).to_string().c_str());
    return 2;
  }
  // Per sequence: its tokens and its blocks, in reverse order (the cache
  // holds max_seqs sequences' worth).
  const int blocks = (n + 16 + 15) / 16;
  std::vector<std::vector<int32_t>> tokens(seqs, std::vector<int32_t>(n)), tables(seqs);
  uint64_t x = 12345;
  for (int s = 0; s < seqs; ++s) {
    for (auto& t : tokens[s]) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      t = static_cast<int32_t>((x >> 33) % std::min(vocab, 150000));
    }
    for (int i = 0; i < blocks; ++i) tables[s].push_back((s + 1) * blocks - 1 - i);
  }
  std::vector<int> done(seqs, 0);
  double worst = 0;
  int agree = 0, checked = 0;
  std::printf("%-4s %-8s %-8s %12s %s\n", "seq", "position", "step", "rel L2", "token gpu/cpu");
  for (int step = 0; done[0] < n; ++step) {
    Batch b;
    for (int s = 0; s < seqs; ++s) {
      // Prefill lengths differ per sequence (n/2 down to 3 and around again).
      const int count = step == 0 ? n / 2 - (3 * s) % std::max(3, n / 2 - 2) : 1;
      for (int i = done[s]; i < done[s] + count; ++i) {
        b.tokens.push_back(tokens[s][i]);
        b.positions.push_back(i);
        b.slots.push_back(tables[s][i / 16] * 16 + i % 16);
      }
      done[s] += count;
      b.seqs.push_back(BatchSeq{.n_tokens = count, .context_len = done[s], .block_table = tables[s].data(),
                                .n_blocks = (done[s] + 15) / 16, .want_logits = true, .host_logits = true,
                                .sampling = SamplingRow{.temperature = 0}});
    }
    StepOutput og, oc;
    Status sg = (*gpu).ex->forward(b, og), sc = (*cpu).ex->forward(b, oc);
    if (!sg.ok() || !sc.ok()) {
      std::fprintf(stderr, "e2e_check: %s\n", (!sg.ok() ? sg : sc).to_string().c_str());
      return 1;
    }
    for (int s = 0; s < seqs; ++s) {
      const float *lg = og.logits.data() + static_cast<size_t>(s) * vocab,
                  *lc = oc.logits.data() + static_cast<size_t>(s) * vocab;
      const double err = rel_l2(lg, lc, vocab);
      worst = std::max(worst, err);
      agree += og.tokens[s] == oc.tokens[s];
      ++checked;
      std::printf("%-4d %-8d %-8s %12.3e %d/%d\n", s, done[s] - 1,
                  step == 0 ? "prefill" : (og.graph ? "graph" : "decode"), err, og.tokens[s], oc.tokens[s]);
    }
  }
  const GraphStats g = (*gpu).ex->graph_stats();
  std::printf("worst rel L2 %.3e over %d rows; drawn tokens agree at %d of %d; graphs captured %d, replays %d\n", worst,
              checked, agree, checked, g.captured, g.replays);
  return worst < 2e-2 ? 0 : 1;
}

int run(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--dump") == 0) {
    if (argc < 5) {
      std::fprintf(stderr, "usage: e2e_check --dump MODEL IDS OUT [DEVICE] [HIDDEN_OUT] [TRACE_DIR]\n");
      return 2;
    }
    return dump(argv[2], argv[3], argv[4], argc > 5 ? argv[5] : "cuda:0", argc > 6 ? argv[6] : "",
                argc > 7 ? argv[7] : "");
  }
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr,
                 "usage: e2e_check MODEL [TOKENS] [DEVICE] [SEQS]\n       e2e_check --dump MODEL IDS OUT [DEVICE] [HIDDEN_OUT] [TRACE_DIR]\n");
    return 2;
  }
  const int seqs = argc > 4 ? std::atoi(argv[4]) : 3;
  if (seqs < 1 || seqs > kMaxSeqs) {
    std::fprintf(stderr, "e2e_check: SEQS must be 1 to %d\n", kMaxSeqs);
    return 2;
  }
  return check(argv[1], argc > 2 ? std::atoi(argv[2]) : 48, argc > 3 ? argv[3] : "cuda:0", seqs);
}

}  // namespace
}  // namespace ft

int main(int argc, char** argv) { return ft::run(argc, argv); }
