#include "runtime/text/bpe.h"

#include "runtime/text/utf8.h"

#include <cstring>
#include <mutex>
#include <queue>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ft {

// Open-addressing map from a (left id, right id) pair to its merge. The
// lookup sits in the inner loop of every merge step, so it avoids the node
// allocations and pointer chasing of std::unordered_map.
class BpeModel::MergeTable {
 public:
  explicit MergeTable(size_t count) {
    size_t capacity = 16;
    while (capacity < count * 2) capacity *= 2;
    slots_.assign(capacity, Slot{kEmpty, {0, 0}});
    mask_ = capacity - 1;
  }

  // Keeps the first (lowest-rank) merge when a pair appears twice.
  void insert(int32_t left, int32_t right, Merge merge) {
    uint64_t key = make_key(left, right);
    size_t i = hash(key) & mask_;
    while (slots_[i].key != kEmpty) {
      if (slots_[i].key == key) return;
      i = (i + 1) & mask_;
    }
    slots_[i] = Slot{key, merge};
  }

  const Merge* find(int32_t left, int32_t right) const {
    uint64_t key = make_key(left, right);
    size_t i = hash(key) & mask_;
    while (slots_[i].key != kEmpty) {
      if (slots_[i].key == key) return &slots_[i].merge;
      i = (i + 1) & mask_;
    }
    return nullptr;
  }

 private:
  struct Slot {
    uint64_t key;
    Merge merge;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t make_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  static size_t hash(uint64_t key) { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 17); }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

// Results per piece. Natural text repeats a small set of words, so most
// pieces are found here and never merged. The cache is direct-mapped with one
// cache line per entry (key and ids stored inline), so a lookup costs one
// hash and one memory access; a colliding piece simply replaces the old one.
// Pieces too long to store inline are rare and are merged every time. Shards
// keep threads that encode at once from queueing on one lock.
class BpeModel::PieceCache {
 public:
  PieceCache() : shards_(std::make_unique<Shard[]>(kShards)) {}

  static uint64_t hash(std::string_view piece) { return XXH3_64bits(piece.data(), piece.size()); }

  bool lookup(std::string_view piece, uint64_t hash, std::vector<int32_t>& out) const {
    Shard& shard = shards_[(hash >> kSlotBits) % kShards];
    std::lock_guard<std::mutex> lock(shard.mutex);
    const Entry& e = shard.entries[hash & (kEntriesPerShard - 1)];
    if (e.count == 0 || e.hash != hash || e.key_len != piece.size() ||
        std::memcmp(e.key, piece.data(), piece.size()) != 0) {
      return false;
    }
    out.insert(out.end(), e.ids, e.ids + e.count);
    return true;
  }

  void store(std::string_view piece, uint64_t hash, const int32_t* ids, size_t count) const {
    if (piece.size() > kMaxKeyBytes || count > kMaxIds || count == 0) return;
    Shard& shard = shards_[(hash >> kSlotBits) % kShards];
    std::lock_guard<std::mutex> lock(shard.mutex);
    Entry& e = shard.entries[hash & (kEntriesPerShard - 1)];
    e.hash = hash;
    e.key_len = static_cast<uint8_t>(piece.size());
    e.count = static_cast<uint8_t>(count);
    std::memcpy(e.key, piece.data(), piece.size());
    std::memcpy(e.ids, ids, count * sizeof(int32_t));
  }

 private:
  static constexpr size_t kMaxKeyBytes = 22;
  static constexpr size_t kMaxIds = 8;
  static constexpr size_t kShards = 64;
  static constexpr int kSlotBits = 10;
  static constexpr size_t kEntriesPerShard = size_t{1} << kSlotBits;  // 64 x 1024 x 64 B = 4 MiB in all
  struct alignas(64) Entry {
    uint64_t hash = 0;
    uint8_t key_len = 0;
    uint8_t count = 0;  // 0: empty
    char key[kMaxKeyBytes];
    int32_t ids[kMaxIds];
  };
  static_assert(sizeof(Entry) == 64, "one cache line per entry");
  struct Shard {
    std::mutex mutex;
    std::array<Entry, kEntriesPerShard> entries;
  };
  std::unique_ptr<Shard[]> shards_;
};

BpeModel::BpeModel() = default;
BpeModel::~BpeModel() = default;

Result<std::unique_ptr<BpeModel>> BpeModel::create(BpeVocab vocab) {
  std::unique_ptr<BpeModel> model(new BpeModel());
  model->pieces_ = std::move(vocab.pieces);
  model->alphabet_ = vocab.alphabet;
  model->ignore_merges_ = vocab.ignore_merges;
  model->unk_id_ = vocab.unk_id;
  model->fuse_unk_ = vocab.fuse_unk;
  const int32_t n = model->size();
  model->ids_.reserve(model->pieces_.size());
  for (int32_t id = 0; id < n; ++id) {
    // The first id wins when two tokens share a piece, as in a vocab lookup.
    if (!model->pieces_[id].empty()) model->ids_.emplace(model->pieces_[id], id);
  }
  if (vocab.unk_id >= n) return FT_ERROR(ErrorCode::kCorrupt, "unknown token id {} is outside the vocabulary", vocab.unk_id);
  for (int b = 0; b < 256; ++b) {
    int32_t id = -1;
    if (vocab.alphabet == BpeVocab::Alphabet::kBytes) {
      id = model->find(std::string_view(reinterpret_cast<const char*>(&b), 1));
      if (id < 0) return FT_ERROR(ErrorCode::kCorrupt, "byte-level BPE vocabulary has no token for byte 0x{:02X}", b);
    } else {
      id = vocab.byte_tokens[b];
      if (id >= n) return FT_ERROR(ErrorCode::kCorrupt, "byte token {} is outside the vocabulary", id);
      if (id < 0 && vocab.unk_id < 0) {
        return FT_ERROR(ErrorCode::kCorrupt,
                        "BPE vocabulary has neither a byte-fallback token for 0x{:02X} nor an unknown token", b);
      }
    }
    model->byte_ids_[b] = id;
  }
  if (!vocab.merge_ranks.empty() && vocab.merge_ranks.size() != vocab.merges.size()) {
    return FT_ERROR(ErrorCode::kInternal, "{} merge ranks for {} merges", vocab.merge_ranks.size(), vocab.merges.size());
  }
  model->merges_ = std::make_unique<MergeTable>(vocab.merges.size());
  for (size_t i = 0; i < vocab.merges.size(); ++i) {
    const auto& [left, right] = vocab.merges[i];
    int32_t left_id = model->find(left);
    int32_t right_id = model->find(right);
    int32_t result_id = model->find(left + right);
    if (left_id < 0 || right_id < 0 || result_id < 0) {
      return FT_ERROR(ErrorCode::kCorrupt, "BPE merge {} names a token that is not in the vocabulary", i);
    }
    const int32_t rank = vocab.merge_ranks.empty() ? static_cast<int32_t>(i) : vocab.merge_ranks[i];
    model->merges_->insert(left_id, right_id, Merge{rank, result_id});
  }
  model->cache_ = std::make_unique<PieceCache>();
  return model;
}

int32_t BpeModel::find(std::string_view piece) const {
  auto it = ids_.find(piece);
  return it == ids_.end() ? -1 : it->second;
}

void BpeModel::encode_piece(std::string_view piece, std::vector<int32_t>& out) const {
  if (piece.size() == 1 && alphabet_ == BpeVocab::Alphabet::kBytes) {
    out.push_back(byte_ids_[static_cast<uint8_t>(piece[0])]);
    return;
  }
  uint64_t hash = PieceCache::hash(piece);
  if (cache_->lookup(piece, hash, out)) return;
  size_t first = out.size();
  int32_t whole = ignore_merges_ ? find(piece) : -1;
  if (whole >= 0) {
    out.push_back(whole);
  } else {
    merge_symbols(piece, out);
  }
  cache_->store(piece, hash, out.data() + first, out.size() - first);
}

// Symbols form a linked list over the piece's bytes; candidate merges sit in a
// min-heap keyed by (rank, position). A popped candidate is stale when either
// side has changed since it was pushed, and is then dropped.
void BpeModel::merge_symbols(std::string_view piece, std::vector<int32_t>& out) const {
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
  };
  struct Candidate {
    int32_t rank;
    int32_t left;
    int32_t left_id;
    int32_t right_id;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::vector<int32_t> initial;
  initial_symbols(piece, initial);
  const int32_t n = static_cast<int32_t>(initial.size());
  std::vector<Symbol> symbols(n);
  for (int32_t i = 0; i < n; ++i) symbols[i] = Symbol{initial[i], i - 1, i + 1 < n ? i + 1 : -1};
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto push_pair = [&](int32_t left) {
    if (left < 0) return;  // a merge at the first symbol has nothing on its left
    const int32_t right = symbols[left].next;
    if (right < 0) return;
    if (const Merge* m = merges_->find(symbols[left].id, symbols[right].id)) {
      heap.push(Candidate{m->rank, left, symbols[left].id, symbols[right].id});
    }
  };
  for (int32_t i = 0; i + 1 < n; ++i) push_pair(i);

  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    Symbol& left = symbols[c.left];
    if (left.id != c.left_id || left.next < 0 || symbols[left.next].id != c.right_id) continue;
    int32_t right = left.next;
    left.id = merges_->find(c.left_id, c.right_id)->result;
    left.next = symbols[right].next;
    if (left.next >= 0) symbols[left.next].prev = c.left;
    symbols[right].id = -1;
    push_pair(left.prev);
    push_pair(c.left);
  }
  for (int32_t i = 0; i >= 0 && n > 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

// Byte-level: one symbol per byte. Characters: the character's token, else
// the byte-fallback tokens of all its bytes, else the unknown token (one for
// a run of unknown characters when fuse_unk is set), as HF's BPE with
// byte_fallback starts a word.
void BpeModel::initial_symbols(std::string_view piece, std::vector<int32_t>& ids) const {
  ids.reserve(piece.size());
  if (alphabet_ == BpeVocab::Alphabet::kBytes) {
    for (char c : piece) ids.push_back(byte_ids_[static_cast<uint8_t>(c)]);
    return;
  }
  for (size_t pos = 0; pos < piece.size();) {
    const size_t start = pos;
    char32_t cp = 0;
    if (!utf8_next(piece, pos, cp)) pos = start + 1;  // not reached: encode passes valid UTF-8
    const std::string_view ch = piece.substr(start, pos - start);
    if (int32_t id = find(ch); id >= 0) {
      ids.push_back(id);
      continue;
    }
    bool all_bytes = true;
    for (char c : ch) all_bytes = all_bytes && byte_ids_[static_cast<uint8_t>(c)] >= 0;
    if (all_bytes) {
      for (char c : ch) ids.push_back(byte_ids_[static_cast<uint8_t>(c)]);
    } else if (!(fuse_unk_ && !ids.empty() && ids.back() == unk_id_)) {
      ids.push_back(unk_id_);
    }
  }
}

}  // namespace ft
