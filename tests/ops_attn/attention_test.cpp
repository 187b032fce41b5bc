// Paged attention: the reference against hand-computed cases (one key, equal
// keys, known weights, causal extend, GQA head mapping, shuffled block
// tables), and the CPU-backend launchers.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "gfx_targets/tiles.h"
#include "runtime/device/backend.h"
#include "runtime/ops/attention.h"

namespace ft {
namespace {

// A small paged cache with head_dim 2; K/V written per (position, kv head)
// through a block table.
struct Paged {
  KvLayout kv;
  std::vector<float> k, v;
  std::vector<int32_t> table;
  int max_blocks;
  Paged(int n_kv, int block_size, std::vector<int32_t> blocks)
      : kv{.num_blocks = 8, .block_size = block_size, .n_kv_heads = n_kv, .head_dim = 2},
        k(kv.elements(), NAN), v(kv.elements(), NAN), table(std::move(blocks)),
        max_blocks(static_cast<int>(table.size())) {}
  size_t at(int pos, int h) const {
    const size_t slot = static_cast<size_t>(table[pos / kv.block_size]) * kv.block_size + pos % kv.block_size;
    return (slot * kv.n_kv_heads + h) * kv.head_dim;
  }
  void put(int pos, int h, std::vector<float> kk, std::vector<float> vv) {
    k[at(pos, h)] = kk[0];
    k[at(pos, h) + 1] = kk[1];
    v[at(pos, h)] = vv[0];
    v[at(pos, h) + 1] = vv[1];
  }
};

std::vector<float> run(const Paged& p, int n_heads, std::vector<float> q, std::vector<int32_t> q_start,
                       std::vector<int32_t> ctx, float scale = 1.0f) {
  AttentionShape s;
  s.n_seqs = static_cast<int>(ctx.size());
  s.n_q_tokens = q_start.back();
  s.n_heads = n_heads;
  s.max_blocks_per_seq = p.max_blocks;
  s.scale = scale;
  std::vector<float> out(q.size(), NAN);
  // One table per sequence: the tests give each sequence the same table.
  std::vector<int32_t> tables;
  for (int i = 0; i < s.n_seqs; ++i) tables.insert(tables.end(), p.table.begin(), p.table.end());
  attention_reference(s, p.kv, q.data(), q_start.data(), p.k.data(), p.v.data(), tables.data(), ctx.data(),
                      out.data());
  return out;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

TEST(AttentionReference, OneKeyGivesItsValue) {
  Paged p(1, 4, {2});
  p.put(0, 0, {3, -1}, {7, 8});
  expect_near(run(p, 1, {0.5f, 2.0f}, {0, 1}, {1}), {7, 8});
}

TEST(AttentionReference, EqualKeysGiveTheMeanOfValues) {
  Paged p(1, 2, {1, 0, 3});  // 5 positions over three blocks, shuffled
  for (int t = 0; t < 5; ++t) p.put(t, 0, {1, 1}, {static_cast<float>(t), static_cast<float>(10 * t)});
  expect_near(run(p, 1, {4, -2}, {0, 1}, {5}), {2, 20});
}

TEST(AttentionReference, ScoresWeighTheValues) {
  // q.k0 = 0, q.k1 = ln 3 (scale 1): weights 1/4 and 3/4.
  Paged p(1, 4, {0});
  p.put(0, 0, {0, 0}, {4, 0});
  p.put(1, 0, {std::log(3.0f), 0}, {0, 8});
  expect_near(run(p, 1, {1, 0}, {0, 1}, {2}), {1, 6});
  // The scale multiplies the scores: scale 2 -> weights 1/10, 9/10.
  expect_near(run(p, 1, {1, 0}, {0, 1}, {2}, 2.0f), {0.4f, 7.2f});
}

TEST(AttentionReference, PrefillIsCausalAndExtendSeesTheCachedTokens) {
  Paged p(1, 2, {3, 1});
  p.put(0, 0, {0, 0}, {4, 0});
  p.put(1, 0, {std::log(3.0f), 0}, {0, 8});
  p.put(2, 0, {0, 0}, {0, 0});
  // Prefill of 2 tokens: token 0 sees key 0 only, token 1 both.
  expect_near(run(p, 1, {1, 0, 1, 0}, {0, 2}, {2}), {4, 0, 1, 6});
  // Extend: 1 new token after 2 cached ones sits at position 2 and sees all
  // three keys (scores 0, ln 3, 0 -> weights 1/5, 3/5, 1/5).
  expect_near(run(p, 1, {1, 0}, {0, 1}, {3}), {0.8f, 4.8f});
}

TEST(AttentionReference, GqaHeadsReadTheirKvHead) {
  // 4 query heads over 2 kv heads: heads 0, 1 -> kv 0; heads 2, 3 -> kv 1.
  Paged p(2, 4, {0});
  p.put(0, 0, {0, 0}, {1, 2});
  p.put(0, 1, {0, 0}, {5, 6});
  expect_near(run(p, 4, {1, 1, 2, 2, 3, 3, 4, 4}, {0, 1}, {1}), {1, 2, 1, 2, 5, 6, 5, 6});
}

TEST(AttentionReference, RaggedBatchKeepsSequencesApart) {
  // Two sequences share the table but have contexts 1 and 3; q rows 0 and 1..2.
  Paged p(1, 2, {4, 2});
  p.put(0, 0, {0, 0}, {2, 2});
  p.put(1, 0, {0, 0}, {4, 4});
  p.put(2, 0, {0, 0}, {6, 6});
  expect_near(run(p, 1, {1, 1, 1, 1, 1, 1}, {0, 1, 3}, {1, 3}), {2, 2, 3, 3, 4, 4});
}

struct CpuBuffers {
  Backend& b;
  std::vector<DeviceBuffer> owned;
  template <typename T>
  DeviceBuffer put(const std::vector<T>& v) {
    auto r = b.alloc(std::max<size_t>(v.size() * sizeof(T), 4));
    EXPECT_TRUE(r.ok());
    EXPECT_TRUE(b.copy_to_device(*r, v.data(), v.size() * sizeof(T)).ok());
    owned.push_back(*r);
    return *r;
  }
  ~CpuBuffers() {
    for (auto d : owned) b.free(d);
  }
};

TEST(AttentionLauncher, CpuBackendDecodeAndPrefill) {
  auto backend = open_cpu_backend(1);
  ASSERT_TRUE(backend.ok()) << backend.status().to_string();
  Backend& b = **backend;
  OpContext ctx(&b);
  CpuBuffers bufs{b};
  Paged p(1, 2, {3, 1});
  p.put(0, 0, {0, 0}, {4, 0});
  p.put(1, 0, {std::log(3.0f), 0}, {0, 8});
  p.put(2, 0, {0, 0}, {0, 0});
  DeviceBuffer k = bufs.put(p.k), v = bufs.put(p.v), table = bufs.put(p.table);
  AttentionShape s{.n_seqs = 1, .n_q_tokens = 1, .n_heads = 1, .max_q_len = 1, .max_context = 3,
                   .max_blocks_per_seq = 2, .scale = 1.0f};
  DeviceBuffer q = bufs.put(std::vector<float>{1, 0}), ctx_len = bufs.put(std::vector<int32_t>{3});
  DeviceBuffer out = bufs.put(std::vector<float>(2, NAN));
  DeviceBuffer ws = bufs.put(std::vector<uint8_t>(attention_decode_workspace_bytes(s, p.kv)));
  Status st = attention_decode(ctx, DType::kF32, s, p.kv, q, k, v, table, ctx_len, ws, out);
  ASSERT_TRUE(st.ok()) << st.to_string();
  std::vector<float> got(2);
  ASSERT_TRUE(b.copy_to_host(got.data(), out, 8).ok());
  expect_near(got, {0.8f, 4.8f});

  AttentionShape ps = s;
  ps.n_q_tokens = ps.max_q_len = 2;
  ps.max_context = 2;
  DeviceBuffer q2 = bufs.put(std::vector<float>{1, 0, 1, 0}), qs = bufs.put(std::vector<int32_t>{0, 2});
  DeviceBuffer ctx2 = bufs.put(std::vector<int32_t>{2}), out2 = bufs.put(std::vector<float>(4, NAN));
  st = attention_prefill(ctx, DType::kF32, ps, p.kv, q2, qs, k, v, table, ctx2, out2);
  ASSERT_TRUE(st.ok()) << st.to_string();
  std::vector<float> got2(4);
  ASSERT_TRUE(b.copy_to_host(got2.data(), out2, 16).ok());
  expect_near(got2, {4, 0, 1, 6});

  // Errors are values: f16 on the CPU, heads not a multiple of kv heads, a
  // block id outside the cache, a context past the table.
  EXPECT_EQ(attention_decode(ctx, DType::kF16, s, p.kv, q, k, v, table, ctx_len, ws, out).code(),
            ErrorCode::kUnsupported);
  AttentionShape bad = s;
  bad.n_heads = 3;
  KvLayout kv2 = p.kv;
  kv2.n_kv_heads = 2;
  EXPECT_EQ(attention_decode(ctx, DType::kF32, bad, kv2, q, k, v, table, ctx_len, ws, out).code(),
            ErrorCode::kInvalidArgument);
  DeviceBuffer bad_table = bufs.put(std::vector<int32_t>{3, 99});
  EXPECT_EQ(attention_decode(ctx, DType::kF32, s, p.kv, q, k, v, bad_table, ctx_len, ws, out).code(),
            ErrorCode::kInvalidArgument);
  DeviceBuffer long_ctx = bufs.put(std::vector<int32_t>{5});
  EXPECT_EQ(attention_decode(ctx, DType::kF32, s, p.kv, q, k, v, table, long_ctx, ws, out).code(),
            ErrorCode::kInvalidArgument);
}

TEST(AttentionLauncher, DecodeWorkspaceCoversEveryPartition) {
  AttentionShape s{.n_seqs = 3, .n_q_tokens = 3, .n_heads = 32, .max_q_len = 1, .max_context = 5000,
                   .max_blocks_per_seq = 320, .scale = 1.0f};
  KvLayout kv{.num_blocks = 1000, .block_size = 16, .n_kv_heads = 8, .head_dim = 128};
  // Filling the GPU may split a context of 3 sequences x 8 KV heads into
  // ceil(1024 / 24) = 43 partitions (more than the LDS's ceil(5000 / 256) =
  // 20), each of (max, sum, 128 outputs) per sequence and head.
  EXPECT_EQ(attention_decode_workspace_bytes(s, kv), 3u * 32 * 43 * 130 * 4 + 3 * 8 * 4);  // + a counter per (seq, KV head)
  // 32 sequences: the LDS's 20 partitions each; filling asks for only 4.
  s.n_seqs = s.n_q_tokens = 32;
  EXPECT_EQ(attention_decode_workspace_bytes(s, kv), 32u * 32 * 20 * 130 * 4 + 32 * 8 * 4);
  // A short context splits at most into ceil(100 / 64) = 2 partitions of 64 tokens.
  s.n_seqs = s.n_q_tokens = 1;
  s.max_context = 100;
  EXPECT_EQ(attention_decode_workspace_bytes(s, kv), 1u * 32 * 2 * 130 * 4 + 8 * 4);
}

// What launch_decode asks of the workspace (partials of every head and
// partition, then a counter per sequence and KV head), for the partition
// count it picks, fits a workspace sized for the batch or any larger one,
// whatever the tile's partition and the GPU's resident blocks.
TEST(AttentionLauncher, DecodeWorkspaceFitsTheChosenPartitions) {
  KvLayout kv{.num_blocks = 1000, .block_size = 16, .n_kv_heads = 8, .head_dim = 128};
  for (int max_context : {1, 15, 64, 100, 300, 4096, 5000, 32768}) {
    AttentionShape worst{.n_seqs = 40, .n_q_tokens = 40, .n_heads = 32, .max_q_len = 1, .max_context = max_context,
                         .max_blocks_per_seq = (max_context + 15) / 16, .scale = 1.0f};
    const size_t have = attention_decode_workspace_bytes(worst, kv);
    for (int n = 1; n <= worst.n_seqs; ++n) {
      AttentionShape s = worst;
      s.n_seqs = s.n_q_tokens = n;
      for (int partition : {kMinDecodePartition, 512, 1024})
        for (int resident : {1, 100, 528, 4096, 100000}) {
          const int parts = attention_decode_parts(s, kv, partition, resident);
          ASSERT_GE(parts, (max_context + partition - 1) / partition) << "a partition must fit the tile's LDS";
          const size_t need = static_cast<size_t>(n) * s.n_heads * parts * (kv.head_dim + 2) * 4 +
                              static_cast<size_t>(n) * kv.n_kv_heads * 4;
          ASSERT_LE(need, have) << "max_context " << max_context << ", " << n << " seqs, partition " << partition
                                << ", " << resident << " resident: " << parts << " partitions";
        }
    }
  }
  // A lone short sequence fills the GPU: 528 resident blocks over 8 KV heads,
  // but no partition under 64 tokens: ceil(4096 / 64) = 64.
  AttentionShape one{.n_seqs = 1, .n_q_tokens = 1, .n_heads = 32, .max_q_len = 1, .max_context = 4096,
                     .max_blocks_per_seq = 256, .scale = 1.0f};
  EXPECT_EQ(attention_decode_parts(one, kv, 256, 528), 64);
  EXPECT_EQ(attention_decode_parts(one, kv, 256, 200), 25);
  // 32 sequences already fill it: the LDS's ceil(4096 / 256) = 16.
  one.n_seqs = one.n_q_tokens = 32;
  EXPECT_EQ(attention_decode_parts(one, kv, 256, 528), 16);
}

}  // namespace
}  // namespace ft
