#include "runtime/engine/kv_cache.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ft {

BlockManager::BlockManager(int num_blocks, int block_size, bool prefix_caching)
    : block_size_(block_size), prefix_caching_(prefix_caching), ref_(num_blocks, 0), hash_of_(num_blocks, 0),
      evictable_pos_(num_blocks), in_evictable_(num_blocks, false) {
  free_.reserve(num_blocks);
  for (int b = num_blocks - 1; b >= 0; --b) free_.push_back(b);
}

uint64_t BlockManager::block_hash(uint64_t parent, std::span<const int32_t> tokens) {
  uint64_t h = XXH3_64bits_withSeed(tokens.data(), tokens.size_bytes(), parent);
  return h ? h : 1;  // 0 means "no hash"
}

void BlockManager::unlink_cached(int block) {
  if (!in_evictable_[block]) return;
  evictable_.erase(evictable_pos_[block]);
  in_evictable_[block] = false;
}

int BlockManager::match_prefix(std::span<const int32_t> tokens, std::vector<int32_t>& table, uint64_t* last_hash) {
  if (last_hash) *last_hash = 0;
  if (!prefix_caching_ || tokens.empty()) return 0;
  const size_t full = (tokens.size() - 1) / block_size_;
  uint64_t parent = 0;
  int covered = 0;
  for (size_t i = 0; i < full; ++i) {
    const uint64_t hash = block_hash(parent, tokens.subspan(i * block_size_, block_size_));
    auto it = by_hash_.find(hash);
    if (it == by_hash_.end()) break;
    parent = hash;
    if (last_hash) *last_hash = hash;
    const int b = it->second;
    unlink_cached(b);
    if (ref_[b]++ == 0) ++used_;
    table.push_back(b);
    covered += block_size_;
  }
  return covered;
}

int BlockManager::allocate() {
  int b = -1;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else if (!evictable_.empty()) {
    b = evictable_.front();
    unlink_cached(b);
    by_hash_.erase(hash_of_[b]);
    hash_of_[b] = 0;
  } else {
    return -1;
  }
  ref_[b] = 1;
  ++used_;
  return b;
}

void BlockManager::release(std::vector<int32_t>& table) {
  for (int32_t b : table) {
    if (--ref_[b] > 0) continue;
    --used_;
    if (hash_of_[b]) {
      evictable_pos_[b] = evictable_.insert(evictable_.end(), b);
      in_evictable_[b] = true;
    } else {
      free_.push_back(b);
    }
  }
  table.clear();
}

void BlockManager::register_full(int block, uint64_t hash) {
  if (!prefix_caching_ || hash_of_[block]) return;
  if (by_hash_.count(hash)) return;  // the same content is cached in another block already
  by_hash_.emplace(hash, block);
  hash_of_[block] = hash;
}

}  // namespace ft
