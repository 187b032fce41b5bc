// Byte-pair encoding over raw bytes: the model part of a byte-level BPE
// tokenizer. It turns one pre-tokenized piece (raw bytes) into token ids by
// applying merges in rank order, lowest rank first and leftmost first among
// equal ranks, which is the order HF tokenizers applies them in.
//
// Thread safety: `encode_piece` may be called from many threads at once; the
// per-piece result cache is sharded and locked inside.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/base/status.h"

namespace ft {

struct BpeVocab {
  // Raw bytes of each token, indexed by id. Ids that are not BPE tokens
  // (added tokens placed after the vocabulary) hold an empty string.
  std::vector<std::string> token_bytes;
  // Merges in rank order, as raw bytes of the left and right parts.
  std::vector<std::pair<std::string, std::string>> merges;
  // Llama-3: a piece that is itself a token is emitted whole, before merging.
  bool ignore_merges = false;
};

class BpeModel {
 public:
  // Fails when a byte has no single-byte token (byte-level BPE needs all
  // 256) or a merge names a part or a result that is not in the vocabulary.
  static Result<std::unique_ptr<BpeModel>> create(BpeVocab vocab);

  // Appends the ids of `piece` (raw bytes, non-empty) to `out`.
  void encode_piece(std::string_view piece, std::vector<int32_t>& out) const;

  // Id of the token with exactly these raw bytes, or -1.
  int32_t find(std::string_view bytes) const;
  const std::string& token_bytes(int32_t id) const { return token_bytes_[id]; }
  int32_t size() const { return static_cast<int32_t>(token_bytes_.size()); }

  ~BpeModel();

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using TokenMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;
  class MergeTable;
  class PieceCache;

  BpeModel();
  void merge_symbols(std::string_view piece, std::vector<int32_t>& out) const;

  std::vector<std::string> token_bytes_;
  TokenMap ids_;
  std::array<int32_t, 256> byte_ids_{};
  bool ignore_merges_ = false;
  std::unique_ptr<MergeTable> merges_;
  std::unique_ptr<PieceCache> cache_;
};

}  // namespace ft
