// Inside the tokenizer: what the loaders (tokenizer_hf.cpp, tokenizer_spec.cpp)
// produce and what encode/decode run on. Not for use outside runtime/text.
#pragma once

#include <array>
#include <memory>
#include <string_view>
#include <vector>

#include "runtime/text/bpe.h"
#include "runtime/text/pretokenizer.h"
#include "runtime/text/tokenizer.h"

namespace ft {

// SentencePiece-style spaces (kChars vocabularies): encoding writes each
// space as U+2581 and may put one in front of a text section; decoding turns
// U+2581 back into a space and may drop the first space of a whole text.
struct SpaceMarker {
  static constexpr std::string_view kMarker = "\xE2\x96\x81";  // U+2581
  enum class Prepend {
    kNever,
    kFirst,   // only before a section at the start of the text
    kAlways,  // before every section (HF's Prepend normalizer, llama.cpp's add_space_prefix)
  };
  bool enabled = false;
  Prepend prepend = Prepend::kNever;
  bool unless_marked = false;  // Metaspace: no prefix before a section that starts with a space
  bool strip_first = false;    // decoding a whole text drops one leading space
};

// Everything a loader reads out of its source, before anything is compiled.
struct TokenizerParts {
  BpeVocab vocab;
  SpaceMarker spaces;
  std::vector<std::string> patterns;  // pre-tokenizer regexes, applied in order
  bool nfc = false;
  std::vector<AddedToken> added;
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t pad_id = -1;
  bool add_bos = false;
  bool add_eos = false;
};

struct Tokenizer::Impl {
  std::unique_ptr<BpeModel> bpe;
  SpaceMarker spaces;
  // The raw bytes each id decodes to, for kChars vocabularies (U+2581 as a
  // space, <0xXX> as its byte); empty for byte-level BPE, whose pieces are
  // their bytes.
  std::vector<std::string> token_bytes;
  PreTokenizer pre;
  bool nfc = false;
  std::vector<AddedToken> added;
  std::vector<int32_t> added_index;  // per id: index into `added`, or -1
  // Indices into `added` by the first byte of the content, longest first, so
  // the first hit at a position is the longest match.
  std::array<std::vector<int32_t>, 256> added_by_first_byte;
  int32_t vocab_size = 0;
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t pad_id = -1;
  bool add_bos = false;
  bool add_eos = false;

  // Raw bytes of a BPE token (id < bpe->size()).
  std::string_view bytes_of(int32_t id) const { return token_bytes.empty() ? bpe->piece(id) : token_bytes[id]; }

  const AddedToken* added_token(int32_t id) const {
    if (id < 0 || id >= static_cast<int32_t>(added_index.size()) || added_index[id] < 0) return nullptr;
    return &added[added_index[id]];
  }
};

Result<Tokenizer> make_tokenizer(TokenizerParts parts);

// The byte <0xXX> names, or -1 when `piece` is no byte token.
int parse_byte_token(std::string_view piece);

}  // namespace ft
