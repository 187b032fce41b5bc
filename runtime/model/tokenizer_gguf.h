// HF tokenizer files -> the GGUF tokenizer keys (tokenizer.ggml.*), the form
// llama.cpp-compatible runtimes and ft's own tokenizer read back.
//
// BPE tokenizers only: byte-level (Qwen2/3, Llama-3) as model "gpt2" with
// merges; with byte fallback (Llama-2, Mistral, Gemma) as model "llama" with
// scores derived from the merge ranks. Others give kUnsupported.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/base/status.h"
#include "runtime/model/gguf_value.h"

namespace ft {

// llama.cpp token types.
enum class GgufTokenType : int32_t {
  kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6,
};

struct TokenizerSources {
  std::string tokenizer_json;                         // text of tokenizer.json
  std::optional<std::string> tokenizer_config_json;   // text of tokenizer_config.json
  std::optional<std::string> chat_template;           // overrides the config's template
  std::string pre;                                    // tokenizer.ggml.pre: "qwen2", "llama-bpe"
  uint32_t min_vocab_size = 0;  // pad the token list up to this (the embedding rows)
  std::optional<int32_t> fallback_bos_id;  // from config.json, when the tokenizer config has none
  std::optional<int32_t> fallback_eos_id;
};

struct TokenizerMetadata {
  std::vector<std::pair<std::string, GgufValue>> keys;
  uint32_t vocab_size = 0;  // length of tokenizer.ggml.tokens
};

Result<TokenizerMetadata> tokenizer_metadata_from_hf(const TokenizerSources& sources);

}  // namespace ft
