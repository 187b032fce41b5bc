// Byte-pair encoding: the model part of a BPE tokenizer. It turns one
// pre-tokenized piece into token ids by applying merges in rank order, lowest
// rank first and leftmost first among equal ranks, which is the order HF
// tokenizers applies them in (and, with ranks from scores, the order
// SentencePiece and llama.cpp merge bigrams in: best score, then leftmost).
//
// Two alphabets: byte-level BPE (GPT-2, Qwen, Llama-3) starts a piece as one
// symbol per byte; SentencePiece-style BPE (Llama-2, Mistral, Gemma) starts it
// as one symbol per UTF-8 character, and a character that is no token becomes
// the byte-fallback tokens (<0xXX>) of its bytes.
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
  enum class Alphabet {
    kBytes,  // one symbol per byte; every byte must be a token
    kChars,  // one symbol per UTF-8 character, bytes through byte_tokens
  };
  Alphabet alphabet = Alphabet::kBytes;
  // Each token as the merges and lookups see it, indexed by id: raw bytes for
  // kBytes; for kChars the vocabulary's own strings (spaces written as U+2581,
  // as the tokenizer writes them into the text; byte tokens as <0xXX>). Ids
  // that are not BPE tokens (added tokens) hold an empty string.
  std::vector<std::string> pieces;
  // Merges in rank order, as pieces of the left and right parts.
  std::vector<std::pair<std::string, std::string>> merges;
  // Rank per merge where several merges share one (merges from scores: equal
  // scores tie, and the leftmost pair goes first); empty: the merge's index.
  std::vector<int32_t> merge_ranks;
  // Llama-3: a piece that is itself a token is emitted whole, before merging.
  bool ignore_merges = false;
  // kChars: the byte-fallback token of each byte (-1: none), and the token
  // for a character that has neither a token nor byte tokens for all of its
  // bytes (-1: none, and then every byte must have one).
  std::array<int32_t, 256> byte_tokens{};
  int32_t unk_id = -1;
  bool fuse_unk = false;  // consecutive unknown characters give one unk_id
};

class BpeModel {
 public:
  // Fails when a byte has no token (byte-level BPE needs all 256; kChars
  // needs byte tokens or an unknown token) or a merge names a part or a
  // result that is not in the vocabulary.
  static Result<std::unique_ptr<BpeModel>> create(BpeVocab vocab);

  // Appends the ids of `piece` (non-empty; valid UTF-8 for kChars) to `out`.
  void encode_piece(std::string_view piece, std::vector<int32_t>& out) const;

  // Id of the token with exactly this piece, or -1.
  int32_t find(std::string_view piece) const;
  const std::string& piece(int32_t id) const { return pieces_[id]; }
  int32_t size() const { return static_cast<int32_t>(pieces_.size()); }

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
  // The symbols a piece starts as, before any merge.
  void initial_symbols(std::string_view piece, std::vector<int32_t>& ids) const;

  std::vector<std::string> pieces_;
  TokenMap ids_;
  BpeVocab::Alphabet alphabet_ = BpeVocab::Alphabet::kBytes;
  std::array<int32_t, 256> byte_ids_{};  // kChars: -1 where a byte has no token
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  std::unique_ptr<MergeTable> merges_;
  std::unique_ptr<PieceCache> cache_;
};

}  // namespace ft
