// Continuous batching. Every step, running sequences go first (in arrival
// order): a decoding sequence contributes one token, a prefilling one the
// next chunk of its prompt. Waiting sequences are then admitted while the
// token budget, the batch limit and free KV blocks allow, first reusing the
// cached blocks of a shared prompt prefix. When a running sequence needs a
// block and none is free, the most recently admitted sequence is preempted:
// its blocks are released and it waits again at the front of the queue, to be
// recomputed (its cached prefix blocks usually survive).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "runtime/engine/defaults.h"
#include "runtime/engine/kv_cache.h"

namespace ft {

struct Sequence {
  uint64_t id = 0;
  std::vector<int32_t> tokens;  // prompt, then generated tokens
  int prompt_len = 0;
  int num_computed = 0;         // tokens whose K/V are in the cache
  int cached_prompt_tokens = 0; // of those, reused from the prefix cache at admission
  bool reuse_prefix = true;     // false: every prompt token is computed (prompt logprobs need their rows)
  std::vector<int32_t> blocks;
  int hashed_blocks = 0;        // leading full blocks registered for reuse
  uint64_t last_hash = 0;
  bool finished = false;
};

struct ScheduledSeq {
  Sequence* seq;
  int n_tokens;                 // computed this step, from seq->num_computed
};

struct SchedulerLimits {
  int max_batch = kDefaultMaxBatch;  // sequences in one step
  int max_tokens_per_step = 512;
  int prefill_chunk = 512;
};

class Scheduler {
 public:
  Scheduler(BlockManager* blocks, SchedulerLimits limits) : blocks_(blocks), limits_(limits) {}

  void add(Sequence* seq) { waiting_.push_back(seq); }
  // Takes a sequence out (finished or cancelled) and frees its blocks.
  void remove(Sequence* seq);
  std::vector<ScheduledSeq> schedule();
  // After the forward pass: advances num_computed and registers full blocks.
  void postprocess(const std::vector<ScheduledSeq>& step);

  int running() const { return static_cast<int>(running_.size()); }
  int waiting() const { return static_cast<int>(waiting_.size()); }
  uint64_t preemptions() const { return preemptions_; }
  bool idle() const { return running_.empty() && waiting_.empty(); }

 private:
  bool grow(Sequence* seq, int n_tokens);  // blocks for num_computed + n_tokens
  void preempt(Sequence* seq);

  BlockManager* blocks_;
  SchedulerLimits limits_;
  std::vector<Sequence*> running_;  // arrival order
  std::deque<Sequence*> waiting_;
  uint64_t preemptions_ = 0;
};

}  // namespace ft
