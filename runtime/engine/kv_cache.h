// The paged KV cache's bookkeeping: fixed-size blocks with reference counts,
// and prefix reuse. A full block is identified by a hash chained over the
// tokens of every block before it and its own; when a new prompt starts with
// the same blocks, their cached K/V are shared instead of recomputed. Blocks
// no sequence holds but that carry a hash stay cached until space is needed
// (least recently released first).
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace ft {

class BlockManager {
 public:
  BlockManager(int num_blocks, int block_size, bool prefix_caching);

  int block_size() const { return block_size_; }
  int num_blocks() const { return static_cast<int>(ref_.size()); }
  // Blocks held by at least one sequence.
  int used_blocks() const { return used_; }
  // Blocks an allocation can take now (free plus cached-but-unheld).
  int available_blocks() const { return static_cast<int>(ref_.size()) - used_; }

  // Hash of a full block after `parent` (0 for the first block).
  static uint64_t block_hash(uint64_t parent, std::span<const int32_t> tokens);

  // Reuses cached blocks for the longest run of full leading blocks of
  // `tokens`, never the whole prompt (the last token must be computed for
  // its logits). Appends them to `table` and returns the tokens covered;
  // `last_hash` (if given) gets the chained hash of the last block reused
  // (0 when none), where later full blocks continue the chain.
  int match_prefix(std::span<const int32_t> tokens, std::vector<int32_t>& table, uint64_t* last_hash = nullptr);
  // Takes a block (evicting the least recently released cached one if
  // needed); -1 when none is available.
  int allocate();
  // Drops one reference to each block of `table` and clears it.
  void release(std::vector<int32_t>& table);
  // Records that `block` now holds the full block with `hash`.
  void register_full(int block, uint64_t hash);

 private:
  void unlink_cached(int block);

  int block_size_;
  bool prefix_caching_;
  std::vector<int> ref_;
  std::vector<uint64_t> hash_of_;  // 0: none
  std::vector<int32_t> free_;      // never-hashed free blocks
  std::list<int32_t> evictable_;   // hashed, unheld; front = oldest
  std::vector<std::list<int32_t>::iterator> evictable_pos_;
  std::vector<bool> in_evictable_;
  std::unordered_map<uint64_t, int32_t> by_hash_;
  int used_ = 0;
};

}  // namespace ft
