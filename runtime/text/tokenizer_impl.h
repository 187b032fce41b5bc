// Inside the tokenizer: what the loaders (tokenizer_hf.cpp, tokenizer_spec.cpp)
// produce and what encode/decode run on. Not for use outside runtime/text.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "runtime/text/bpe.h"
#include "runtime/text/pretokenizer.h"
#include "runtime/text/tokenizer.h"

namespace ft {

// Everything a loader reads out of its source, before anything is compiled.
struct TokenizerParts {
  BpeVocab vocab;
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

  const AddedToken* added_token(int32_t id) const {
    if (id < 0 || id >= static_cast<int32_t>(added_index.size()) || added_index[id] < 0) return nullptr;
    return &added[added_index[id]];
  }
};

Result<Tokenizer> make_tokenizer(TokenizerParts parts);

}  // namespace ft
