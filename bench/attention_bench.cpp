// attention_bench: paged attention and RoPE on an NVIDIA GPU against the
// roofline (device copy bandwidth for the memory-bound decode and RoPE,
// FLOP/s for the compute-bound prefill) and the torch peer measured in the
// same run by bench/attention_torch.py (run_on_gpu.sh runs both).
//
// Shapes: Llama-3-8B / Qwen3-8B attention (32 q heads, 8 kv heads, head_dim
// 128, bf16), KV cache in 16-token pages handed out in a shuffled order; one
// prefill at head_dim 64 (small Llama / Qwen models: on Hopper the mma.sync
// kernel, where head_dim 128 takes the wgmma one).
// Decode at batch 1 and 128 tokens times a short, latency-bound launch.
// Decode bytes = the K and V rows read (batch x context x 8 heads x 128 x 2
// bytes x 2); prefill FLOPs = 4 x head_dim x heads x S (S + 1) / 2 (causal).
//
// Usage: attention_bench [SUBSTRING...]: only the cases whose names contain
// one of them (for a profiler: `attention_bench "decode bf16 b32"`).
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>

#include "bench/bench_util.h"
#include "runtime/ops/op_session.h"
#include "runtime/ops/attention.h"
#include "runtime/ops/rope.h"
#include "tests/gpu/device_data.h"

namespace ft {
namespace {

constexpr int kRepeats = 50;
constexpr int kHeads = 32, kKvHeads = 8, kHeadDim = 128, kBlock = 16;

class Bench {
 public:
  Bench(Backend& backend, OpContext& context, std::vector<std::string> only)
      : b(backend), ctx(context), only(std::move(only)) {}
  Backend& b;
  OpContext& ctx;
  std::mt19937 rng{1234};
  std::vector<bench::Row> rows;
  std::vector<DeviceBuffer> owned;
  std::vector<std::string> only;

  bool wanted(const std::string& name) const {
    return only.empty() || std::any_of(only.begin(), only.end(),
                                       [&](const std::string& o) { return name.find(o) != std::string::npos; });
  }

  ~Bench() {
    for (auto d : owned) b.free(d);
  }
  DeviceBuffer random(size_t n, DType dt) {
    auto r = gpu::upload(b, gpu::random_values(n, dt, rng), dt);
    if (!r.ok()) return {};
    owned.push_back(*r);
    return *r;
  }
  DeviceBuffer ints(const std::vector<int32_t>& v) {
    auto r = b.alloc(v.size() * 4);
    if (!r.ok()) return {};
    (void)b.copy_to_device(*r, v.data(), v.size() * 4);
    owned.push_back(*r);
    return *r;
  }
  void measure(const std::string& name, double bytes, double flops, const std::function<Status()>& fn) {
    if (wanted(name)) bench::measure(b, rows, kRepeats, name, bytes, flops, fn);
  }

  // A batch of `n_seqs` sequences of `context` tokens with `q_len` new ones each.
  void attention(const std::string& name, int n_seqs, int context, int q_len, int head_dim = kHeadDim) {
    if (!wanted(name)) return;
    const DType dt = DType::kBF16;
    const int blocks_per_seq = (context + kBlock - 1) / kBlock;
    KvLayout kv{.num_blocks = n_seqs * blocks_per_seq, .block_size = kBlock, .n_kv_heads = kKvHeads,
                .head_dim = head_dim};
    std::vector<int32_t> table(kv.num_blocks), ctx_lens(n_seqs, context), q_start(n_seqs + 1);
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), rng);
    for (int i = 0; i <= n_seqs; ++i) q_start[i] = i * q_len;
    AttentionShape s{.n_seqs = n_seqs, .n_q_tokens = n_seqs * q_len, .n_heads = kHeads, .max_q_len = q_len,
                     .max_context = context, .max_blocks_per_seq = blocks_per_seq,
                     .scale = 1.0f / std::sqrt(static_cast<float>(head_dim))};
    DeviceBuffer k = random(kv.elements(), dt), v = random(kv.elements(), dt);
    DeviceBuffer q = random(static_cast<size_t>(s.n_q_tokens) * kHeads * head_dim, dt);
    DeviceBuffer out = random(static_cast<size_t>(s.n_q_tokens) * kHeads * head_dim, dt);
    DeviceBuffer tab = ints(table), lens = ints(ctx_lens), qs = ints(q_start);
    if (q_len == 1) {
      auto ws = b.alloc(attention_decode_workspace_bytes(s, kv));
      if (!ws.ok()) return;
      owned.push_back(*ws);
      if (!b.fill_bytes(*ws, 0).ok()) return;  // the counters start at zero
      const double bytes = 2.0 * n_seqs * context * kKvHeads * head_dim * 2;
      measure(name, bytes, 0, [&] { return attention_decode(ctx, dt, s, kv, q, k, v, tab, lens, *ws, out); });
    } else {
      const double pairs = static_cast<double>(q_len) * (q_len + 1) / 2;  // causal (query, key) pairs
      const double flops = 4.0 * head_dim * kHeads * pairs * n_seqs;
      measure(name, 0, flops, [&] { return attention_prefill(ctx, dt, s, kv, q, qs, k, v, tab, lens, out); });
    }
  }

  // Qwen3-8B's q/k norm + NEOX RoPE + KV write over `tokens` tokens.
  void rope(int tokens) {
    const std::string name = fmt::format("rope+qknorm+kv bf16 {} tok", tokens);
    if (!wanted(name)) return;
    const DType dt = DType::kBF16;
    RopeShape s{.n_tokens = tokens, .n_heads = kHeads, .n_kv_heads = kKvHeads, .head_dim = kHeadDim};
    KvLayout kv{.num_blocks = (tokens + kBlock - 1) / kBlock, .block_size = kBlock, .n_kv_heads = kKvHeads,
                .head_dim = kHeadDim};
    ModelConfig cfg;
    cfg.head_dim = kHeadDim;
    cfg.rope_theta = 1e6f;
    auto inv = gpu::upload(b, rope_inv_freq(cfg).inv_freq, DType::kF32);
    if (!inv.ok()) return;
    owned.push_back(*inv);
    std::vector<int32_t> pos(tokens), slots(tokens);
    std::iota(pos.begin(), pos.end(), 0);
    std::iota(slots.begin(), slots.end(), 0);
    std::shuffle(slots.begin(), slots.end(), rng);
    DeviceBuffer qkv = random(static_cast<size_t>(tokens) * (kHeads + 2 * kKvHeads) * kHeadDim, dt);
    DeviceBuffer qn = random(kHeadDim, dt), kn = random(kHeadDim, dt);
    DeviceBuffer q = random(static_cast<size_t>(tokens) * kHeads * kHeadDim, dt);
    DeviceBuffer kc = random(kv.elements(), dt), vc = random(kv.elements(), dt);
    DeviceBuffer p = ints(pos), sl = ints(slots);
    // Read q, k, v; write q, k, v.
    const double bytes = 2.0 * tokens * (kHeads + 2 * kKvHeads) * kHeadDim * 2;
    measure(name, bytes, 0,
            [&] { return rope_qk_norm_kv_write(ctx, dt, s, qkv, p, sl, *inv, qn, kn, q, kv, kc, vc); });
  }
};

int run(const std::vector<std::string>& only) {
  auto session = open_op_session("cuda:0");
  if (!session.ok()) {
    std::fprintf(stderr, "attention_bench: %s\n", session.status().to_string().c_str());
    return 2;
  }
  Backend& b = *session->backend;
  OpContext& ctx = *session->ops;

  // Copy bandwidth: one 512 MiB buffer copied to another.
  auto copy = bench::copy_bandwidth_gbs(b);
  if (!copy.ok()) return 2;
  const double copy_gbs = *copy;

  Bench bench(b, ctx, only);
  // A decode step's attention at a chat's context: the blocks' latency, not
  // the bytes, sets its time (the quantized models' batch-1 step runs it per layer).
  bench.attention("decode bf16 b1 ctx128", 1, 128, 1);
  bench.attention("decode bf16 b1 ctx4096", 1, 4096, 1);
  bench.attention("decode bf16 b32 ctx4096", 32, 4096, 1);
  bench.attention("decode bf16 b8 ctx16384", 8, 16384, 1);
  bench.attention("prefill bf16 causal 2048", 1, 2048, 2048);
  bench.attention("prefill bf16 causal 8192", 1, 8192, 8192);
  bench.attention("prefill bf16 4x1024", 4, 1024, 1024);
  bench.attention("prefill bf16 causal 2048 d64", 1, 2048, 2048, 64);
  bench.rope(16384);

  std::printf("attention_bench on %s (%s); device copy %.0f GB/s (read + write); 32 q / 8 kv heads x 128\n",
              b.info().name.c_str(), b.info().arch.c_str(), copy_gbs);
  bench::print_rows("op", bench.rows, copy_gbs);
  return 0;
}

}  // namespace
}  // namespace ft

int main(int argc, char** argv) {
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf(
          "usage: attention_bench [SUBSTRING...]\n"
          "Times paged decode/prefill attention and RoPE (bf16, 32 q / 8 kv heads x 128) on cuda:0\n"
          "against the copy bandwidth; with arguments, only the cases whose names contain one.\n");
      return 0;
    }
    only.push_back(a);
  }
  return ft::run(only);
}
