// Loading a tokenizer from GGUF metadata values (TokenizerSpec). GGUF keeps
// no normalizer or regex, only the `tokenizer.ggml.pre` name, so the name
// decides what the HF tokenizer.json of that family would have said: its
// Split regex, NFC for Qwen2/Qwen3, ignore_merges for Llama-3.
//
// SentencePiece-style files (tokenizer.ggml.model = llama) keep scores
// instead of merges, and are tokenized as llama.cpp does: spaces as U+2581,
// one in front of each text section (add_space_prefix), then the adjacent
// pair whose joined piece is a token with the best score merges first, the
// leftmost among equals; characters without a token fall back to <0xXX>
// tokens. Here every split of a token into two tokens becomes a merge ranked
// by the token's score, which is the same order.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "runtime/text/bpe_byte_level.h"
#include "runtime/text/tokenizer_impl.h"

namespace ft {
namespace {

bool is_added_type(int32_t type) {
  return type == TokenizerSpec::kControl || type == TokenizerSpec::kUserDefined;
}

Status check_id(const char* what, int32_t id, size_t count) {
  if (id >= static_cast<int64_t>(count)) {
    return FT_ERROR(ErrorCode::kCorrupt, "GGUF tokenizer {} id {} is outside the vocabulary (size {})", what, id,
                    count);
  }
  return Status::ok_status();
}

Status read_vocab(const TokenizerSpec& spec, TokenizerParts& parts) {
  if (!spec.token_types.empty() && spec.token_types.size() != spec.tokens.size()) {
    return FT_ERROR(ErrorCode::kCorrupt, "GGUF tokenizer has {} tokens but {} token types", spec.tokens.size(),
                    spec.token_types.size());
  }
  parts.vocab.pieces.resize(spec.tokens.size());
  for (size_t id = 0; id < spec.tokens.size(); ++id) {
    int32_t type = spec.token_types.empty() ? TokenizerSpec::kNormal : spec.token_types[id];
    if (!is_added_type(type)) {
      parts.vocab.pieces[id] = byte_level_to_bytes(spec.tokens[id]);
      continue;
    }
    // Added tokens are stored as their text, not in the byte-level alphabet.
    AddedToken token;
    token.id = static_cast<int32_t>(id);
    token.content = spec.tokens[id];
    token.special = type == TokenizerSpec::kControl;
    if (!token.content.empty()) parts.added.push_back(std::move(token));
  }
  for (const std::string& merge : spec.merges) {
    size_t space = merge.find(' ');
    if (space == std::string::npos) return FT_ERROR(ErrorCode::kCorrupt, "GGUF merge \"{}\" has no space", merge);
    parts.vocab.merges.emplace_back(byte_level_to_bytes(merge.substr(0, space)),
                                    byte_level_to_bytes(merge.substr(space + 1)));
  }
  return Status::ok_status();
}

// The SentencePiece form: pieces, byte tokens, and merges from the scores.
Status read_spm_vocab(const TokenizerSpec& spec, TokenizerParts& parts) {
  const size_t n = spec.tokens.size();
  if (spec.scores.size() != n) {
    return FT_ERROR(ErrorCode::kCorrupt, "GGUF tokenizer has {} tokens but {} scores", n, spec.scores.size());
  }
  if (!spec.token_types.empty() && spec.token_types.size() != n) {
    return FT_ERROR(ErrorCode::kCorrupt, "GGUF tokenizer has {} tokens but {} token types", n, spec.token_types.size());
  }
  for (size_t id = 0; id < n; ++id) {
    if (std::isnan(spec.scores[id])) return FT_ERROR(ErrorCode::kCorrupt, "GGUF tokenizer score {} is NaN", id);
  }
  BpeVocab& vocab = parts.vocab;
  vocab.alphabet = BpeVocab::Alphabet::kChars;
  vocab.pieces.assign(n, std::string());
  vocab.byte_tokens.fill(-1);
  std::vector<bool> mergeable(n, false);
  for (size_t id = 0; id < n; ++id) {
    const int32_t type = spec.token_types.empty() ? TokenizerSpec::kNormal : spec.token_types[id];
    const std::string& text = spec.tokens[id];
    if (is_added_type(type) || type == TokenizerSpec::kUnknown) {  // <unk> is special, as in HF's files
      AddedToken token;
      token.id = static_cast<int32_t>(id);
      token.content = text;
      token.special = type != TokenizerSpec::kUserDefined;
      if (!token.content.empty()) parts.added.push_back(std::move(token));
      continue;
    }
    if (type == TokenizerSpec::kByte) {
      const int byte = parse_byte_token(text);
      if (byte < 0) return FT_ERROR(ErrorCode::kCorrupt, "GGUF byte token {} is \"{}\", not <0xXX>", id, text);
      if (vocab.byte_tokens[byte] < 0) vocab.byte_tokens[byte] = static_cast<int32_t>(id);
      vocab.pieces[id] = text;
      continue;
    }
    if (type == TokenizerSpec::kUnused) continue;
    vocab.pieces[id] = text;
    mergeable[id] = true;
  }
  vocab.unk_id = spec.unk_id;
  // Every split of a normal token into two normal tokens, best score first.
  std::unordered_map<std::string_view, int32_t> ids;
  ids.reserve(n);
  for (size_t id = 0; id < n; ++id)
    if (mergeable[id]) ids.emplace(vocab.pieces[id], static_cast<int32_t>(id));
  struct Split {
    float score;
    int32_t id;
    uint32_t cut;
  };
  std::vector<Split> splits;
  for (size_t id = 0; id < n; ++id) {
    if (!mergeable[id]) continue;
    const std::string_view piece = vocab.pieces[id];
    for (size_t cut = 1; cut < piece.size(); ++cut) {
      if ((static_cast<uint8_t>(piece[cut]) & 0xC0) == 0x80) continue;  // inside a character
      auto left = ids.find(piece.substr(0, cut));
      if (left == ids.end() || ids.find(piece.substr(cut)) == ids.end()) continue;
      splits.push_back(Split{spec.scores[id], static_cast<int32_t>(id), static_cast<uint32_t>(cut)});
    }
  }
  std::stable_sort(splits.begin(), splits.end(), [](const Split& a, const Split& b) { return a.score > b.score; });
  vocab.merges.reserve(splits.size());
  vocab.merge_ranks.reserve(splits.size());
  int32_t rank = -1;
  for (size_t i = 0; i < splits.size(); ++i) {
    if (i == 0 || splits[i].score != splits[i - 1].score) ++rank;
    const std::string& piece = vocab.pieces[splits[i].id];
    vocab.merges.emplace_back(piece.substr(0, splits[i].cut), piece.substr(splits[i].cut));
    vocab.merge_ranks.push_back(rank);
  }
  parts.spaces.enabled = true;
  parts.spaces.prepend = spec.add_space_prefix ? SpaceMarker::Prepend::kAlways : SpaceMarker::Prepend::kNever;
  parts.spaces.strip_first = spec.add_space_prefix;
  return Status::ok_status();
}

// The special-token ids and flags, checked against the vocabulary.
Status read_specials(const TokenizerSpec& spec, TokenizerParts& parts) {
  FT_RETURN_IF_ERROR(check_id("bos", spec.bos_id, spec.tokens.size()));
  FT_RETURN_IF_ERROR(check_id("eos", spec.eos_id, spec.tokens.size()));
  FT_RETURN_IF_ERROR(check_id("pad", spec.pad_id, spec.tokens.size()));
  FT_RETURN_IF_ERROR(check_id("unknown", spec.unk_id, spec.tokens.size()));
  parts.bos_id = spec.bos_id;
  parts.eos_id = spec.eos_id;
  parts.pad_id = spec.pad_id;
  parts.add_bos = spec.add_bos;
  parts.add_eos = spec.add_eos;
  return Status::ok_status();
}

}  // namespace

Result<Tokenizer> Tokenizer::from_spec(const TokenizerSpec& spec) {
  TokenizerParts parts;
  if (spec.model == "llama") {
    FT_RETURN_IF_ERROR(read_spm_vocab(spec, parts));
  } else if (spec.model != "gpt2") {
    return FT_ERROR(ErrorCode::kUnsupported,
                    "tokenizer.ggml.model \"{}\" is not supported (gpt2: byte-level BPE; llama: SentencePiece BPE)",
                    spec.model);
  } else if (spec.pre.empty()) {
    return FT_ERROR(ErrorCode::kUnsupported, "GGUF tokenizer has no tokenizer.ggml.pre, so its pre-tokenizer is unknown");
  } else {
    FT_ASSIGN_OR_RETURN(parts.patterns, pretokenizer_patterns_for_gguf(spec.pre));
    parts.nfc = spec.pre == "qwen2";
    parts.vocab.ignore_merges = spec.pre == "llama-bpe" || spec.pre == "llama3";
    FT_RETURN_IF_ERROR(read_vocab(spec, parts));
  }
  FT_RETURN_IF_ERROR(read_specials(spec, parts));
  return make_tokenizer(std::move(parts));
}

}  // namespace ft
