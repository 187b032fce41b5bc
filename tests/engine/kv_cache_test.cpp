#include <gtest/gtest.h>

#include "runtime/engine/kv_cache.h"
#include "runtime/engine/scheduler.h"

namespace ft {
namespace {

std::vector<int32_t> iota_tokens(int n, int start = 0) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = start + i;
  return t;
}

TEST(BlockManager, AllocatesUntilFullAndFreesOnRelease) {
  BlockManager bm(3, 4, false);
  std::vector<int32_t> table;
  for (int i = 0; i < 3; ++i) table.push_back(bm.allocate());
  EXPECT_EQ(bm.allocate(), -1);
  EXPECT_EQ(bm.used_blocks(), 3);
  bm.release(table);
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(bm.available_blocks(), 3);
}

TEST(BlockManager, PrefixReuseSharesFullBlocksButNeverTheLastToken) {
  BlockManager bm(8, 4, true);
  std::vector<int32_t> prompt = iota_tokens(9);  // two full blocks + 1
  std::vector<int32_t> a;
  EXPECT_EQ(bm.match_prefix(prompt, a), 0);
  for (int i = 0; i < 3; ++i) a.push_back(bm.allocate());
  uint64_t h = 0;
  for (int b = 0; b < 2; ++b) {
    h = BlockManager::block_hash(h, std::span<const int32_t>(prompt).subspan(b * 4, 4));
    bm.register_full(a[b], h);
  }
  std::vector<int32_t> b;
  EXPECT_EQ(bm.match_prefix(prompt, b), 8);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0], a[0]);
  EXPECT_EQ(b[1], a[1]);
  // A prompt of exactly two blocks reuses only the first: its last token must run.
  std::vector<int32_t> exact(prompt.begin(), prompt.begin() + 8), c;
  EXPECT_EQ(bm.match_prefix(exact, c), 4);
  // A different first block shares nothing.
  std::vector<int32_t> other = iota_tokens(9, 100), d;
  EXPECT_EQ(bm.match_prefix(other, d), 0);
  bm.release(c);
  bm.release(b);
  bm.release(a);
  EXPECT_EQ(bm.used_blocks(), 0);
  // Released hashed blocks stay cached until space is needed...
  std::vector<int32_t> e;
  EXPECT_EQ(bm.match_prefix(prompt, e), 8);
  bm.release(e);
  // ...and are evicted when it is.
  std::vector<int32_t> all;
  for (int i = 0; i < 8; ++i) all.push_back(bm.allocate());
  EXPECT_EQ(bm.allocate(), -1);
  bm.release(all);
  std::vector<int32_t> f;
  EXPECT_EQ(bm.match_prefix(prompt, f), 0);
}

// Appends a sampled token to every sequence whose tokens are all computed.
void sample_all(const std::vector<ScheduledSeq>& step) {
  for (const auto& x : step)
    if (x.seq->num_computed == static_cast<int>(x.seq->tokens.size())) x.seq->tokens.push_back(1);
}

TEST(Scheduler, ChunksPrefillThenDecodesAndPreemptsTheNewestWhenFull) {
  BlockManager bm(4, 4, false);  // 16 token slots
  Scheduler sched(&bm, SchedulerLimits{4, 8, 8});
  Sequence a, b;
  a.id = 1;
  a.tokens = iota_tokens(6);
  a.prompt_len = 6;
  b.id = 2;
  b.tokens = iota_tokens(5, 50);
  b.prompt_len = 5;
  sched.add(&a);
  sched.add(&b);
  auto s1 = sched.schedule();  // a (6) and 2 tokens of b fill the budget of 8
  ASSERT_EQ(s1.size(), 2u);
  EXPECT_EQ(s1[0].n_tokens, 6);
  EXPECT_EQ(s1[1].seq, &b);
  EXPECT_EQ(s1[1].n_tokens, 2);
  sched.postprocess(s1);
  sample_all(s1);
  EXPECT_EQ(a.tokens.size(), 7u);
  EXPECT_EQ(b.tokens.size(), 5u);
  auto s2 = sched.schedule();  // a decodes one, b finishes its prompt
  ASSERT_EQ(s2.size(), 2u);
  EXPECT_EQ(s2[0].n_tokens, 1);
  EXPECT_EQ(s2[1].n_tokens, 3);
  sched.postprocess(s2);
  sample_all(s2);
  EXPECT_EQ(bm.used_blocks(), 4);
  // a: 8 tokens (2 blocks) computed, its 9th needs a third block: b is preempted.
  auto s3 = sched.schedule();
  sched.postprocess(s3);
  sample_all(s3);
  auto s4 = sched.schedule();
  ASSERT_EQ(s4.size(), 1u);
  EXPECT_EQ(s4[0].seq, &a);
  EXPECT_EQ(sched.preemptions(), 1u);
  EXPECT_EQ(sched.waiting(), 1);
  EXPECT_EQ(b.num_computed, 0);  // recomputed from scratch when it comes back
  EXPECT_EQ(b.tokens.size(), 7u);  // its generated tokens are kept
  sched.remove(&a);
  auto s5 = sched.schedule();
  ASSERT_EQ(s5.size(), 1u);
  EXPECT_EQ(s5[0].seq, &b);
  EXPECT_EQ(s5[0].n_tokens, 7);
}

}  // namespace
}  // namespace ft
