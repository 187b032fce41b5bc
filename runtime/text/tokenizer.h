// BPE tokenizer, loaded from an HF tokenizer.json (+ tokenizer_config.json)
// or from GGUF tokenizer metadata given as plain values (TokenizerSpec). Two
// kinds: byte-level BPE (GPT-2 style, as used by Qwen2/Qwen3 and Llama-3) and
// SentencePiece-style BPE with byte fallback (Llama-2, Mistral, Gemma:
// spaces written as U+2581, bytes of unknown characters as <0xXX> tokens).
//
// Encode: invalid UTF-8 is first replaced by U+FFFD (maximal subparts, see
// utf8.h), because the reference tokenizers only ever see Unicode strings;
// added tokens are split out of the text (longest match first); each other
// section is normalized (NFC where the tokenizer asks for it; SentencePiece
// style: spaces to U+2581, maybe one in front), cut into pieces by the
// pre-tokenizer regexes and BPE-encoded piece by piece.
//
// Decode: token bytes are joined and turned into UTF-8, with ill-formed
// sequences replaced by U+FFFD; added tokens decode to their text and end any
// byte sequence before them. SentencePiece-style tokenizers that put a space
// in front when encoding drop the first space of a decoded text (unless
// DecodeOptions::continuation). Decoding never applies HF's
// clean_up_tokenization_spaces: a runtime must give back the exact text.
//
// Thread safety: a Tokenizer is immutable after loading (the BPE cache locks
// itself); copies share the loaded data and may be used from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/status.h"

namespace ft {

struct TokenizerParts;

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;  // a control token: skippable on decode, plain text when parse_special is off
  bool lstrip = false;   // swallows whitespace on its left
  bool rstrip = false;   // swallows whitespace on its right
};

// A tokenizer as GGUF metadata stores it. The GGUF reader fills this; the
// tokenizer does not depend on the reader.
struct TokenizerSpec {
  // Values of tokenizer.ggml.token_type, as llama.cpp defines them.
  enum TokenType : int32_t {
    kNormal = 1,
    kUnknown = 2,
    kControl = 3,      // special added token
    kUserDefined = 4,  // non-special added token
    kUnused = 5,
    kByte = 6,
  };

  // tokenizer.ggml.model: "gpt2" (byte-level BPE) or "llama" (SentencePiece
  // BPE: merges from scores, byte fallback).
  std::string model;
  std::string pre;                   // tokenizer.ggml.pre: "qwen2", "llama-bpe", ... (gpt2 only)
  std::vector<std::string> tokens;   // tokenizer.ggml.tokens: byte-level strings, or pieces with U+2581
  std::vector<std::string> merges;   // tokenizer.ggml.merges, "left right" (gpt2)
  std::vector<float> scores;         // tokenizer.ggml.scores (llama): higher merges first
  std::vector<int32_t> token_types;  // tokenizer.ggml.token_type; empty: all normal
  int32_t bos_id = -1;               // tokenizer.ggml.bos_token_id, -1 when absent
  int32_t eos_id = -1;
  int32_t pad_id = -1;
  int32_t unk_id = -1;   // tokenizer.ggml.unknown_token_id
  bool add_bos = false;  // tokenizer.ggml.add_bos_token
  bool add_eos = false;  // tokenizer.ggml.add_eos_token
  bool add_space_prefix = true;  // tokenizer.ggml.add_space_prefix (llama)
};

struct EncodeOptions {
  // Special tokens written in the text become their ids; when false they are
  // encoded as ordinary text (non-special added tokens are still split out,
  // as HF's split_special_tokens does).
  bool parse_special = true;
  // Add BOS/EOS where the tokenizer's configuration asks for them.
  bool add_special = true;
};

struct DecodeOptions {
  bool skip_special = false;
  // The ids continue a text decoded before them (generated tokens after a
  // prompt): a SentencePiece-style tokenizer keeps their first space.
  bool continuation = false;
};

class Tokenizer {
 public:
  // `tokenizer_config_json` may be empty.
  static Result<Tokenizer> from_hf_json(std::string_view tokenizer_json,
                                        std::string_view tokenizer_config_json);
  // A directory holding tokenizer.json (and maybe tokenizer_config.json), or
  // the path of a tokenizer.json (its sibling tokenizer_config.json is read).
  static Result<Tokenizer> from_hf_path(const std::string& path);
  static Result<Tokenizer> from_spec(const TokenizerSpec& spec);

  Result<std::vector<int32_t>> encode(std::string_view text, const EncodeOptions& options = {}) const;
  // kInvalidArgument for an id outside the vocabulary.
  Result<std::string> decode(std::span<const int32_t> ids, const DecodeOptions& options = {}) const;

  int32_t vocab_size() const;
  int32_t bos_id() const;  // -1 when the tokenizer has none
  int32_t eos_id() const;
  int32_t pad_id() const;
  bool is_special(int32_t id) const;
  // The added token with this id, or nullptr.
  const AddedToken* added_token(int32_t id) const;
  // The token as its vocabulary writes it: the byte-level string of a
  // byte-level BPE token, the piece of a SentencePiece-style one ("\u2581the",
  // "<0x0A>"), the text of an added token; empty for an unknown id.
  std::string token_string(int32_t id) const;
  // Id of a token given as its vocabulary string, or -1.
  int32_t token_id(std::string_view token_string) const;
  // Raw bytes a BPE token decodes to (empty for added tokens and unknown ids).
  // SentencePiece-style: U+2581 as a space, a byte token as its byte.
  std::string_view token_bytes(int32_t id) const;
  // SentencePiece-style: the byte a byte-fallback token ("<0x0A>") stands
  // for; -1 for any other token, and for every token of a byte-level BPE.
  int byte_fallback_value(int32_t id) const;
  // SentencePiece-style: whether encoding puts a U+2581 in front of the text
  // (llama.cpp's add_space_prefix).
  bool prepends_space_marker() const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  friend class StreamDecoder;
  friend Result<Tokenizer> make_tokenizer(TokenizerParts parts);

  std::shared_ptr<const Impl> impl_;
};

// Decodes a stream of ids as they are generated. Each push returns only
// complete UTF-8 code points; an incomplete byte tail is held back until the
// next token completes it, or is flushed as U+FFFD by an added token or by
// finish(). The concatenation of all outputs equals Tokenizer::decode.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tokenizer, DecodeOptions options = {});
  ~StreamDecoder();
  StreamDecoder(StreamDecoder&&) noexcept;
  StreamDecoder& operator=(StreamDecoder&&) noexcept;

  Result<std::string> push(int32_t id);
  std::string finish();

 private:
  struct State;
  std::shared_ptr<const Tokenizer::Impl> impl_;
  DecodeOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace ft
