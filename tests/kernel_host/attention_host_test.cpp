// kernel_src/attention.hip run by the host emulator against
// attention_reference, over paged caches with scattered block tables and
// contexts that end inside a block. Decode: one partition writing `out`
// directly, a few partials merged by the last block to arrive, and many (the
// merge's parallel branch). Prefill and extend: the portable FMA kernel, the
// one AMD GPUs run in bf16 (NVIDIA runs mma/wgmma there). The launches follow
// runtime/ops/attention.cpp.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/ops/attention.h"
#include "tests/gpu/device_data.h"
#include "tests/kernel_host/host_data.h"
#include "tests/kernel_host/simt.h"

#include "kernel_src/attention.hip"

namespace ft {
namespace {

constexpr int kHeadDim = 128, kGroup = 4, kKvHeads = 2, kBlock = 16, kPartition = 256;
constexpr int kHeads = kGroup * kKvHeads;
constexpr int kThreads = 4 * FT_WAVE_SIZE;  // the decode tile's 4 waves

// A batch over a paged cache: contexts[s] tokens of sequence s, its blocks
// scattered over the cache by the block table; q_len[s] new query tokens,
// the last of its context. bf16 values with their f32 copies for the reference.
struct Batch {
  std::vector<int> contexts, q_start, tables;
  int max_blocks = 0;
  KvLayout kv;
  std::vector<bf16> q, k, v;
  std::vector<float> q_ref, k_ref, v_ref;
  AttentionShape shape;

  Batch(const std::vector<int>& ctx, const std::vector<int>& q_len, std::mt19937& rng) : contexts(ctx) {
    const int n_seqs = static_cast<int>(ctx.size());
    const int max_context = *std::max_element(ctx.begin(), ctx.end());
    max_blocks = (max_context + kBlock - 1) / kBlock;
    kv = {.num_blocks = n_seqs * max_blocks + 3, .block_size = kBlock, .n_kv_heads = kKvHeads, .head_dim = kHeadDim};
    std::vector<int> order(kv.num_blocks);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    tables.assign(static_cast<size_t>(n_seqs) * max_blocks, -1);
    for (int s = 0, next = 0; s < n_seqs; ++s)
      for (int b = 0; b < (ctx[s] + kBlock - 1) / kBlock; ++b) tables[s * max_blocks + b] = order[next++];
    q_start.assign(1, 0);
    for (int n : q_len) q_start.push_back(q_start.back() + n);
    auto fill = [&](size_t n, std::vector<float>* ref) {
      return host::to_device<bf16>(gpu::random_values(n, DType::kF32, rng), ref);
    };
    q = fill(static_cast<size_t>(q_start.back()) * kHeads * kHeadDim, &q_ref);
    k = fill(kv.elements(), &k_ref);
    v = fill(kv.elements(), &v_ref);
    shape = {.n_seqs = n_seqs, .n_q_tokens = q_start.back(), .n_heads = kHeads,
             .max_q_len = *std::max_element(q_len.begin(), q_len.end()), .max_context = max_context,
             .max_blocks_per_seq = max_blocks, .scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim))};
  }

  // The worst relative L2 error of one head's output of one token against
  // the reference: a long context's outputs are small beside a short one's,
  // so one norm over the batch would hide its errors.
  double error(const std::vector<bf16>& out) const {
    std::vector<float> want(out.size());
    attention_reference(shape, kv, q_ref.data(), q_start.data(), k_ref.data(), v_ref.data(), tables.data(),
                        contexts.data(), want.data());
    const std::vector<float> got = host::to_floats(out);
    double worst = 0;
    for (size_t i = 0; i < want.size(); i += kHeadDim)
      worst = std::max(worst, gpu::rel_l2(std::span(got).subspan(i, kHeadDim), std::span(want).subspan(i, kHeadDim)));
    return worst;
  }
};

// Decode (one new token per sequence); `parts` is the grid's partitions per
// context (the host's attention_decode_parts).
double decode_error(const std::vector<int>& contexts, int parts, int min_span, std::mt19937& rng) {
  const Batch b(contexts, std::vector<int>(contexts.size(), 1), rng);
  const int n_seqs = b.shape.n_seqs;
  std::vector<bf16> out(b.q.size(), from_float<bf16>(-3.0f));
  std::vector<float> part_out(static_cast<size_t>(n_seqs) * kHeads * parts * kHeadDim, -1.0f);
  std::vector<float> part_ml(static_cast<size_t>(n_seqs) * kHeads * parts * 2, -1.0f);
  std::vector<int> counters(static_cast<size_t>(n_seqs) * kKvHeads, 0);
  DecodeArgs<bf16> a{};
  a.q = b.q.data();
  a.k_cache = b.k.data();
  a.v_cache = b.v.data();
  a.block_tables = b.tables.data();
  a.context_lens = b.contexts.data();
  a.part_out = part_out.data();
  a.part_ml = part_ml.data();
  a.out = out.data();
  a.scale_log2 = b.shape.scale * 1.4426950408889634f;
  a.n_heads = kHeads;
  a.n_kv_heads = kKvHeads;
  a.max_blocks = b.max_blocks;
  a.max_parts = parts;
  a.direct = parts == 1 ? 1 : 0;
  a.n_seqs = n_seqs;
  a.min_span = min_span;
  a.counters = counters.data();
  EXPECT_EQ(host::launch({parts, n_seqs * kKvHeads, 1}, kThreads,
                         [&] { attention_decode<bf16, kHeadDim, kGroup, kBlock, kThreads, kPartition>(a); }),
            "");
  for (int c : counters) EXPECT_EQ(c, 0) << "the counters must be left zero for the next launch";
  return b.error(out);
}

// Prefill / extend on the portable FMA kernel (AMD's, and f32's everywhere),
// with the tile's 64 rows of 4 lanes and 32-key LDS tiles.
double prefill_error(const std::vector<int>& contexts, const std::vector<int>& q_len, std::mt19937& rng) {
  constexpr int kRows = 64, kSplit = 4, kKeys = 32;
  const Batch b(contexts, q_len, rng);
  std::vector<bf16> out(b.q.size(), from_float<bf16>(-3.0f));
  const int row_tiles = (b.shape.max_q_len * kGroup + kRows - 1) / kRows;
  PrefillArgs<bf16> a{b.q.data(),  b.q_start.data(), b.k.data(), b.v.data(), b.tables.data(), b.contexts.data(),
                      out.data(), b.shape.scale * 1.4426950408889634f, kHeads, kKvHeads, b.max_blocks, row_tiles};
  EXPECT_EQ(host::launch({row_tiles, b.shape.n_seqs * kKvHeads, 1}, kRows * kSplit,
                         [&] { attention_prefill_fma<bf16, kHeadDim, kGroup, kBlock, kRows, kSplit, kKeys>(a); }),
            "");
  return b.error(out);
}

// bf16 outputs: about 1.6e-3 from their rounding (the GPU bar is 1e-2).
TEST(AttentionDecodeOnHost, OnePartitionWritesTheOutput) {
  std::mt19937 rng(31);
  EXPECT_LT(decode_error({5, 256, 130}, 1, 64, rng), 5e-3);
}

TEST(AttentionDecodeOnHost, PartialsMergedByTheLastBlock) {
  std::mt19937 rng(32);
  EXPECT_LT(decode_error({1, 200, 700}, 3, 64, rng), 5e-3);  // 700 in 3 spans of 240; 1 and 200 in one
  EXPECT_LT(decode_error({1000, 64, 333}, 8, 64, rng), 5e-3);
}

TEST(AttentionDecodeOnHost, ManyPartialsTakeTheParallelMerge) {
  std::mt19937 rng(33);
  EXPECT_LT(decode_error({2048, 77}, 32, 64, rng), 5e-3);
}

// A whole prompt (several row tiles), an extend after 295 cached tokens, one
// new token after 49, and a prompt ending inside a key tile.
TEST(AttentionPrefillOnHost, FmaKernelCausalAndExtend) {
  std::mt19937 rng(34);
  EXPECT_LT(prefill_error({37, 300, 50, 70}, {37, 5, 1, 70}, rng), 5e-3);
}

}  // namespace
}  // namespace ft
