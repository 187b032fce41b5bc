#include "runtime/engine/scheduler.h"

#include <algorithm>

namespace ft {

void Scheduler::remove(Sequence* seq) {
  running_.erase(std::remove(running_.begin(), running_.end(), seq), running_.end());
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), seq), waiting_.end());
  blocks_->release(seq->blocks);
}

bool Scheduler::grow(Sequence* seq, int n_tokens) {
  const int bs = blocks_->block_size();
  const int need = (seq->num_computed + n_tokens + bs - 1) / bs - static_cast<int>(seq->blocks.size());
  if (need > blocks_->available_blocks()) return false;
  for (int i = 0; i < need; ++i) seq->blocks.push_back(blocks_->allocate());
  return true;
}

void Scheduler::preempt(Sequence* seq) {
  running_.erase(std::remove(running_.begin(), running_.end(), seq), running_.end());
  blocks_->release(seq->blocks);
  seq->num_computed = 0;
  seq->hashed_blocks = 0;
  seq->last_hash = 0;
  waiting_.push_front(seq);
  ++preemptions_;
}

std::vector<ScheduledSeq> Scheduler::schedule() {
  std::vector<ScheduledSeq> step;
  int budget = limits_.max_tokens_per_step;
  // Running sequences first, oldest first.
  for (size_t i = 0; i < running_.size() && budget > 0 && static_cast<int>(step.size()) < limits_.max_batch;) {
    Sequence* seq = running_[i];
    const int remaining = static_cast<int>(seq->tokens.size()) - seq->num_computed;
    const int n = std::min({remaining, budget, limits_.prefill_chunk});
    if (n <= 0) {
      ++i;
      continue;
    }
    bool ok = grow(seq, n);
    while (!ok && running_.back() != seq) {
      preempt(running_.back());
      ok = grow(seq, n);
    }
    if (!ok) {  // nothing left to take from: this one waits
      preempt(seq);
      break;
    }
    step.push_back({seq, n});
    budget -= n;
    ++i;
  }
  // Then admit waiting sequences.
  while (!waiting_.empty() && budget > 0 && static_cast<int>(running_.size()) < limits_.max_batch &&
         static_cast<int>(step.size()) < limits_.max_batch) {
    Sequence* seq = waiting_.front();
    if (seq->blocks.empty() && seq->reuse_prefix) {
      seq->num_computed = blocks_->match_prefix(seq->tokens, seq->blocks, &seq->last_hash);
      seq->hashed_blocks = static_cast<int>(seq->blocks.size());
      if (seq->num_computed > 0 && seq->cached_prompt_tokens == 0) seq->cached_prompt_tokens = seq->num_computed;
    }
    const int remaining = static_cast<int>(seq->tokens.size()) - seq->num_computed;
    const int n = std::min({remaining, budget, limits_.prefill_chunk});
    if (!grow(seq, n)) {
      // Not enough blocks now. With nothing running it can never fit more:
      // leave it to the caller's context checks (they bound a sequence's
      // blocks below the cache size), and wait.
      break;
    }
    waiting_.pop_front();
    running_.push_back(seq);
    step.push_back({seq, n});
    budget -= n;
  }
  return step;
}

void Scheduler::postprocess(const std::vector<ScheduledSeq>& step) {
  const int bs = blocks_->block_size();
  for (const ScheduledSeq& s : step) {
    Sequence* seq = s.seq;
    seq->num_computed += s.n_tokens;
    const int full = seq->num_computed / bs;
    for (int b = seq->hashed_blocks; b < full; ++b) {
      seq->last_hash =
          BlockManager::block_hash(seq->last_hash, std::span<const int32_t>(seq->tokens).subspan(b * bs, bs));
      blocks_->register_full(seq->blocks[b], seq->last_hash);
    }
    seq->hashed_blocks = std::max(seq->hashed_blocks, full);
  }
}

}  // namespace ft
