// kernel_src/attention.hip's decode kernel run by the host emulator against
// attention_reference: one partition writing `out` directly, a few partials
// merged by the last block to arrive, and many (the merge's parallel branch),
// over paged caches with scattered block tables and contexts that end inside
// a block. The launch follows runtime/ops/attention.cpp's launch_decode.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/ops/attention.h"
#include "tests/kernel_host/simt.h"

#include "kernel_src/attention.hip"

namespace ft {
namespace {

constexpr int kHeadDim = 128, kGroup = 4, kKvHeads = 2, kBlock = 16, kPartition = 256;
constexpr int kHeads = kGroup * kKvHeads;
constexpr int kThreads = 4 * FT_WAVE_SIZE;  // the tile's 4 waves

// The worst relative L2 error of a head's output against the reference; `parts` is
// the grid's partitions per context (the host's attention_decode_parts).
double decode_error(const std::vector<int>& contexts, int parts, int min_span, std::mt19937& rng) {
  const int n_seqs = static_cast<int>(contexts.size());
  const int max_context = *std::max_element(contexts.begin(), contexts.end());
  const int max_blocks = (max_context + kBlock - 1) / kBlock;
  KvLayout kv{.num_blocks = n_seqs * max_blocks + 3, .block_size = kBlock, .n_kv_heads = kKvHeads, .head_dim = kHeadDim};
  std::vector<int> order(kv.num_blocks);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int> tables(static_cast<size_t>(n_seqs) * max_blocks, -1);
  for (int s = 0, next = 0; s < n_seqs; ++s)
    for (int b = 0; b < (contexts[s] + kBlock - 1) / kBlock; ++b) tables[s * max_blocks + b] = order[next++];

  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto random_bf16 = [&](size_t n, std::vector<float>* ref) {
    std::vector<bf16> out(n);
    ref->resize(n);
    for (size_t i = 0; i < n; ++i) {
      out[i] = from_float<bf16>(normal(rng));
      (*ref)[i] = to_float(out[i]);
    }
    return out;
  };
  std::vector<float> q_ref, k_ref, v_ref;
  const std::vector<bf16> q = random_bf16(static_cast<size_t>(n_seqs) * kHeads * kHeadDim, &q_ref);
  const std::vector<bf16> k = random_bf16(kv.elements(), &k_ref), v = random_bf16(kv.elements(), &v_ref);

  std::vector<bf16> out(q.size(), from_float<bf16>(-3.0f));
  std::vector<float> part_out(static_cast<size_t>(n_seqs) * kHeads * parts * kHeadDim, -1.0f);
  std::vector<float> part_ml(static_cast<size_t>(n_seqs) * kHeads * parts * 2, -1.0f);
  std::vector<int> counters(static_cast<size_t>(n_seqs) * kKvHeads, 0);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  DecodeArgs<bf16> a{};
  a.q = q.data();
  a.k_cache = k.data();
  a.v_cache = v.data();
  a.block_tables = tables.data();
  a.context_lens = contexts.data();
  a.part_out = part_out.data();
  a.part_ml = part_ml.data();
  a.out = out.data();
  a.scale_log2 = scale * 1.4426950408889634f;
  a.n_heads = kHeads;
  a.n_kv_heads = kKvHeads;
  a.max_blocks = max_blocks;
  a.max_parts = parts;
  a.direct = parts == 1 ? 1 : 0;
  a.n_seqs = n_seqs;
  a.min_span = min_span;
  a.counters = counters.data();
  EXPECT_EQ(host::launch({parts, n_seqs * kKvHeads, 1}, kThreads,
                         [&] { attention_decode<bf16, kHeadDim, kGroup, kBlock, kThreads, kPartition>(a); }),
            "");
  for (int c : counters) EXPECT_EQ(c, 0) << "the counters must be left zero for the next launch";

  AttentionShape s{.n_seqs = n_seqs, .n_q_tokens = n_seqs, .n_heads = kHeads, .max_q_len = 1,
                   .max_context = max_context, .max_blocks_per_seq = max_blocks, .scale = scale};
  std::vector<int32_t> q_start(n_seqs + 1);
  std::iota(q_start.begin(), q_start.end(), 0);
  std::vector<float> want(q.size());
  attention_reference(s, kv, q_ref.data(), q_start.data(), k_ref.data(), v_ref.data(), tables.data(), contexts.data(),
                      want.data());
  // Per head of each sequence: a long context's outputs are small beside a
  // short one's, so one norm over the batch would hide its errors.
  double worst = 0;
  for (size_t h = 0; h < want.size() / kHeadDim; ++h) {
    double num = 0, den = 0;
    for (size_t i = h * kHeadDim; i < (h + 1) * kHeadDim; ++i) {
      const double d = to_float(out[i]) - static_cast<double>(want[i]);
      num += d * d;
      den += static_cast<double>(want[i]) * want[i];
    }
    worst = std::max(worst, std::sqrt(num / den));
  }
  return worst;
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

}  // namespace
}  // namespace ft
