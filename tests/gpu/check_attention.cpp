// RoPE + q/k norm + paged KV write, and paged attention (decode split-K and
// prefill / extend): ragged batches, contexts crossing page boundaries,
// shuffled block tables, extend after cached tokens, GQA groups 1/4/8,
// head_dim 64/128, against the CPU references.
#include <algorithm>
#include <numeric>
#include <optional>

#include "runtime/ops/attention.h"
#include "runtime/ops/matmul.h"
#include "runtime/ops/rope.h"
#include "tests/gpu/device_data.h"
#include "tests/gpu/op_check.h"

namespace ft::gpu {
namespace {

struct Owned {
  Backend& b;
  std::vector<DeviceBuffer> bufs = {};
  ~Owned() {
    for (auto d : bufs) b.free(d);
  }
  Result<DeviceBuffer> values(const std::vector<float>& v, DType dt) {
    FT_ASSIGN_OR_RETURN(DeviceBuffer d, upload(b, v, dt));
    bufs.push_back(d);
    return d;
  }
  Result<DeviceBuffer> ints(const std::vector<int32_t>& v) {
    FT_ASSIGN_OR_RETURN(DeviceBuffer d, b.alloc(std::max<size_t>(v.size(), 1) * 4));
    bufs.push_back(d);
    FT_RETURN_IF_ERROR(b.copy_to_device(d, v.data(), v.size() * 4));
    return d;
  }
  Result<DeviceBuffer> poisoned(size_t bytes) {
    FT_ASSIGN_OR_RETURN(DeviceBuffer d, b.alloc(std::max<size_t>(bytes, 4)));
    bufs.push_back(d);
    FT_RETURN_IF_ERROR(b.fill_bytes(d, 0xFF));
    return d;
  }
};

// ---- RoPE ------------------------------------------------------------------------

Result<double> check_rope(OpContext& ctx, DType dt, int head_dim, RopeStyle style, bool norm, int n_tokens,
                          int n_heads, int n_kv, std::mt19937& rng) {
  RopeShape s{.n_tokens = n_tokens, .n_heads = n_heads, .n_kv_heads = n_kv, .head_dim = head_dim, .style = style,
              .mscale = style == RopeStyle::kNeox ? 1.0f : 1.1f, .norm_eps = 1e-6f};
  KvLayout kv{.num_blocks = (n_tokens + 15) / 16 + 2, .block_size = 16, .n_kv_heads = n_kv, .head_dim = head_dim};
  ModelConfig cfg;
  cfg.head_dim = head_dim;
  cfg.rope_theta = 1e6f;
  const std::vector<float> inv_freq = rope_inv_freq(cfg).inv_freq;
  auto qkv = random_values(static_cast<size_t>(n_tokens) * (n_heads + 2 * n_kv) * head_dim, dt, rng, 2.0f);
  auto qn = random_values(head_dim, dt, rng), kn = random_values(head_dim, dt, rng);
  auto k_cache = random_values(kv.elements(), dt, rng), v_cache = random_values(kv.elements(), dt, rng);
  std::vector<int32_t> pos(n_tokens), slots(kv.num_blocks * 16);
  std::uniform_int_distribution<int> any_pos(0, 40000);
  for (auto& p : pos) p = any_pos(rng);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  slots.resize(n_tokens);
  for (int t = 0; t < n_tokens; t += 5) slots[t] = -1;  // padding tokens
  std::vector<float> q_ref(static_cast<size_t>(n_tokens) * n_heads * head_dim);
  auto k_ref = k_cache, v_ref = v_cache;
  rope_qk_norm_kv_write_reference(s, qkv.data(), pos.data(), slots.data(), inv_freq.data(), norm ? qn.data() : nullptr,
                                  norm ? kn.data() : nullptr, q_ref.data(), kv, k_ref.data(), v_ref.data());
  Backend& b = ctx.backend();
  Owned o{b};
  FT_ASSIGN_OR_RETURN(DeviceBuffer dqkv, o.values(qkv, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dpos, o.ints(pos));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dslots, o.ints(slots));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dinv, o.values(inv_freq, DType::kF32));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dqn, o.values(qn, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dkn, o.values(kn, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dk, o.values(k_cache, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dv, o.values(v_cache, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dq, o.poisoned(q_ref.size() * dtype_size(dt)));
  FT_RETURN_IF_ERROR(rope_qk_norm_kv_write(ctx, dt, s, dqkv, dpos, dslots, dinv, norm ? dqn : DeviceBuffer{},
                                           norm ? dkn : DeviceBuffer{}, dq, kv, dk, dv));
  FT_RETURN_IF_ERROR(b.synchronize());
  FT_ASSIGN_OR_RETURN(auto q_got, download(b, dq, dt));
  FT_ASSIGN_OR_RETURN(auto k_got, download(b, dk, dt));
  FT_ASSIGN_OR_RETURN(auto v_got, download(b, dv, dt));
  return std::max({rel_l2(q_got, q_ref), rel_l2(k_got, k_ref), rel_l2(v_got, v_ref)});
}

// ---- attention ---------------------------------------------------------------------

struct Batch {
  std::vector<int32_t> ctx, q_len;
};

// With q8 (decode), the attention also writes its output quantized for the
// o GEMV: those bytes must equal, bit for bit, quantize_x of the output.
Result<double> check_attention(OpContext& ctx, DType dt, bool decode, int head_dim, int n_heads, int n_kv,
                               const Batch& batch, std::mt19937& rng, bool q8 = false) {
  const int bs = 16, n_seqs = static_cast<int>(batch.ctx.size());
  AttentionShape s;
  s.n_seqs = n_seqs;
  s.n_heads = n_heads;
  s.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  std::vector<int32_t> q_start = {0};
  int total_blocks = 0;
  for (int i = 0; i < n_seqs; ++i) {
    q_start.push_back(q_start.back() + batch.q_len[i]);
    s.max_q_len = std::max(s.max_q_len, batch.q_len[i]);
    s.max_context = std::max(s.max_context, batch.ctx[i]);
    total_blocks += (batch.ctx[i] + bs - 1) / bs;
  }
  s.n_q_tokens = q_start.back();
  s.max_blocks_per_seq = (s.max_context + bs - 1) / bs + 1;
  KvLayout kv{.num_blocks = total_blocks + 3, .block_size = bs, .n_kv_heads = n_kv, .head_dim = head_dim};
  // Blocks handed out in a shuffled order; unused table entries point at -1.
  std::vector<int32_t> perm(kv.num_blocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int32_t> tables(static_cast<size_t>(n_seqs) * s.max_blocks_per_seq, -1);
  for (int i = 0, next = 0; i < n_seqs; ++i)
    for (int j = 0; j < (batch.ctx[i] + bs - 1) / bs; ++j) tables[i * s.max_blocks_per_seq + j] = perm[next++];
  auto q = random_values(static_cast<size_t>(s.n_q_tokens) * n_heads * head_dim, dt, rng);
  auto k = random_values(kv.elements(), dt, rng, 1.5f), v = random_values(kv.elements(), dt, rng);
  std::vector<float> ref(q.size());
  attention_reference(s, kv, q.data(), q_start.data(), k.data(), v.data(), tables.data(), batch.ctx.data(),
                      ref.data());
  Backend& b = ctx.backend();
  Owned o{b};
  FT_ASSIGN_OR_RETURN(DeviceBuffer dq, o.values(q, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dk, o.values(k, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dv, o.values(v, dt));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dtab, o.ints(tables));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dctx, o.ints(batch.ctx));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dqs, o.ints(q_start));
  FT_ASSIGN_OR_RETURN(DeviceBuffer dout, o.poisoned(q.size() * dtype_size(dt)));
  if (decode) {
    // Partials poisoned; the counters zeroed, as the kernels leave them.
    const size_t ws_bytes = attention_decode_workspace_bytes(s, kv), counters = attention_decode_counter_bytes(s, kv);
    FT_ASSIGN_OR_RETURN(DeviceBuffer ws, o.poisoned(ws_bytes));
    FT_RETURN_IF_ERROR(b.fill_bytes(slice(ws, ws_bytes - counters, counters), 0));
    const int width = n_heads * head_dim;
    DeviceBuffer dq8;
    if (q8) {
      FT_ASSIGN_OR_RETURN(dq8, o.poisoned(matmul_q8_bytes(n_seqs, width)));
    }
    // Twice, the output poisoned again in between: the second launch finds
    // the counters as the first left them.
    FT_RETURN_IF_ERROR(attention_decode(ctx, dt, s, kv, dq, dk, dv, dtab, dctx, ws, dout, dq8));
    FT_RETURN_IF_ERROR(b.fill_bytes(dout, 0xff));
    FT_RETURN_IF_ERROR(attention_decode(ctx, dt, s, kv, dq, dk, dv, dtab, dctx, ws, dout, dq8));
    if (q8) {
      FT_ASSIGN_OR_RETURN(DeviceBuffer self, quantize_x(ctx, dt, width, dout, n_seqs, std::nullopt));
      std::vector<uint8_t> got(matmul_q8_bytes(n_seqs, width)), want(got.size());
      FT_RETURN_IF_ERROR(b.synchronize());
      FT_RETURN_IF_ERROR(b.copy_to_host(got.data(), dq8, got.size()));
      FT_RETURN_IF_ERROR(b.copy_to_host(want.data(), self, want.size()));
      for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i])
          return FT_ERROR(ErrorCode::kInternal, "q8 byte {} of {}: {} from the attention, {} from quantize_x", i,
                          got.size(), got[i], want[i]);
    }
  } else {
    FT_RETURN_IF_ERROR(attention_prefill(ctx, dt, s, kv, dq, dqs, dk, dv, dtab, dctx, dout));
  }
  FT_RETURN_IF_ERROR(b.synchronize());
  FT_ASSIGN_OR_RETURN(auto got, download(b, dout, dt));
  return rel_l2(got, ref);
}

std::string batch_text(const Batch& batch) {
  std::string out;
  for (size_t i = 0; i < batch.ctx.size() && i < 3; ++i)
    out += fmt::format("{}{}/{}", i ? "," : "", batch.q_len[i], batch.ctx[i]);
  if (batch.ctx.size() > 3) out += fmt::format(",..x{}", batch.ctx.size());
  return out;
}

}  // namespace

std::vector<CheckCase> check_attention(OpContext& ctx, std::mt19937& rng) {
  std::vector<CheckCase> cases;
  for (DType dt : {DType::kBF16, DType::kF16}) {
    for (int d : {64, 128})
      for (RopeStyle style : {RopeStyle::kNeox, RopeStyle::kNorm})
        for (bool norm : {false, true})
          cases.push_back(make_case(fmt::format("rope_{}{}", style == RopeStyle::kNeox ? "neox" : "norm",
                                                norm ? "_qknorm" : ""),
                                    dt, fmt::format("37x(32+8+8)x{}", d),
                                    check_rope(ctx, dt, d, style, norm, 37, 32, 8, rng)));
  }
  cases.push_back(make_case("rope_neox_qknorm", DType::kF32, "9x(16+8+8)x128",
                            check_rope(ctx, DType::kF32, 128, RopeStyle::kNeox, true, 9, 16, 8, rng)));
  // Many tokens: lane groups take several heads each (rope_heads_per_group),
  // including groups that run past the last head.
  cases.push_back(make_case("rope_neox_qknorm", DType::kBF16, "2000x(32+8+8)x128",
                            check_rope(ctx, DType::kBF16, 128, RopeStyle::kNeox, true, 2000, 32, 8, rng)));
  cases.push_back(make_case("rope_neox_qknorm", DType::kBF16, "400x(32+8+8)x128",
                            check_rope(ctx, DType::kBF16, 128, RopeStyle::kNeox, true, 400, 32, 8, rng)));
  cases.push_back(make_case("rope_norm", DType::kF16, "3000x(14+2+2)x64",
                            check_rope(ctx, DType::kF16, 64, RopeStyle::kNorm, false, 3000, 14, 2, rng)));
  cases.push_back(make_case("rope_neox_qknorm", DType::kF32, "3000x(14+2+2)x128",
                            check_rope(ctx, DType::kF32, 128, RopeStyle::kNeox, true, 3000, 14, 2, rng)));

  // Decode: contexts 1..5000 in one ragged batch, and single long sequences.
  std::uniform_int_distribution<int> any_ctx(1, 5000);
  Batch ragged;
  for (int c : {1, 2, 15, 16, 17, 255, 256, 257, 511, 1000, 4096, 5000}) ragged.ctx.push_back(c);
  for (int i = 0; i < 8; ++i) ragged.ctx.push_back(any_ctx(rng));
  ragged.q_len.assign(ragged.ctx.size(), 1);
  const Batch single{{4096}, {1}}, short_one{{200}, {1}};
  for (DType dt : {DType::kBF16, DType::kF16, DType::kF32})
    for (int d : {64, 128})
      for (auto [h, kvh] : {std::pair{32, 8}, {32, 32}, {32, 4}, {28, 4}}) {
        if (dt == DType::kF32 && (h == 28 || d == 64)) continue;
        for (const Batch* bt : std::initializer_list<const Batch*>{&ragged, &single, &short_one}) {
          // bf16 also writes the quantized output (the executor's decode path for quantized o weights).
          const bool q8 = dt == DType::kBF16;
          cases.push_back(make_case(q8 ? "attn_decode_q8" : "attn_decode", dt,
                                    fmt::format("{}/{}x{} {}", h, kvh, d, batch_text(*bt)),
                                    check_attention(ctx, dt, true, d, h, kvh, *bt, rng, q8)));
        }
      }

  // Prefill and extend: a fresh prompt, extends after cached tokens (short
  // and long), a single token, and ragged mixes crossing page boundaries.
  const Batch mixed{{300, 1000, 65, 2048, 33}, {300, 17, 1, 129, 33}};
  const Batch prompt{{777}, {777}};
  const Batch extend{{4000, 18}, {5, 2}};
  for (DType dt : {DType::kBF16, DType::kF16, DType::kF32})
    for (int d : {64, 128})
      for (auto [h, kvh] : {std::pair{32, 8}, {16, 16}, {32, 4}, {28, 4}}) {
        if (dt == DType::kF32 && (h == 28 || d == 64)) continue;
        for (const Batch* bt : std::initializer_list<const Batch*>{&mixed, &prompt, &extend})
          cases.push_back(make_case("attn_prefill", dt, fmt::format("{}/{}x{} {}", h, kvh, d, batch_text(*bt)),
                                    check_attention(ctx, dt, false, d, h, kvh, *bt, rng)));
      }
  return cases;
}

}  // namespace ft::gpu
