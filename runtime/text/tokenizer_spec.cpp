// Loading a tokenizer from GGUF metadata values (TokenizerSpec). GGUF keeps
// no normalizer or regex, only the `tokenizer.ggml.pre` name, so the name
// decides what the HF tokenizer.json of that family would have said: its
// Split regex, NFC for Qwen2/Qwen3, ignore_merges for Llama-3.
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
  parts.vocab.token_bytes.resize(spec.tokens.size());
  for (size_t id = 0; id < spec.tokens.size(); ++id) {
    int32_t type = spec.token_types.empty() ? TokenizerSpec::kNormal : spec.token_types[id];
    if (!is_added_type(type)) {
      parts.vocab.token_bytes[id] = byte_level_to_bytes(spec.tokens[id]);
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

}  // namespace

Result<Tokenizer> Tokenizer::from_spec(const TokenizerSpec& spec) {
  if (spec.model == "llama") {
    return FT_ERROR(ErrorCode::kUnsupported,
                    "SentencePiece-style tokenizers (tokenizer.ggml.model = llama) are not supported yet");
  }
  if (spec.model != "gpt2") {
    return FT_ERROR(ErrorCode::kUnsupported, "tokenizer.ggml.model \"{}\" is not supported (only gpt2, byte-level BPE)",
                    spec.model);
  }
  if (spec.pre.empty()) {
    return FT_ERROR(ErrorCode::kUnsupported, "GGUF tokenizer has no tokenizer.ggml.pre, so its pre-tokenizer is unknown");
  }
  TokenizerParts parts;
  FT_ASSIGN_OR_RETURN(parts.patterns, pretokenizer_patterns_for_gguf(spec.pre));
  parts.nfc = spec.pre == "qwen2";
  parts.vocab.ignore_merges = spec.pre == "llama-bpe" || spec.pre == "llama3";
  FT_RETURN_IF_ERROR(read_vocab(spec, parts));
  FT_RETURN_IF_ERROR(check_id("bos", spec.bos_id, spec.tokens.size()));
  FT_RETURN_IF_ERROR(check_id("eos", spec.eos_id, spec.tokens.size()));
  FT_RETURN_IF_ERROR(check_id("pad", spec.pad_id, spec.tokens.size()));
  parts.bos_id = spec.bos_id;
  parts.eos_id = spec.eos_id;
  parts.pad_id = spec.pad_id;
  parts.add_bos = spec.add_bos;
  parts.add_eos = spec.add_eos;
  return make_tokenizer(std::move(parts));
}

}  // namespace ft
