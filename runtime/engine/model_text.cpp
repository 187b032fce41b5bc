#include "runtime/engine/model_text.h"

#include <filesystem>

namespace ft {

namespace {
bool is_gguf(const std::string& path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".gguf") == 0 && !std::filesystem::is_directory(path);
}
}  // namespace

Result<TokenizerSpec> tokenizer_spec_from_gguf(const GgufReader& reader) {
  TokenizerSpec spec;
  FT_ASSIGN_OR_RETURN(spec.model, reader.get_string("tokenizer.ggml.model"));
  spec.add_bos = spec.model == "llama";  // llama.cpp's default for SentencePiece files without the key
  if (reader.find("tokenizer.ggml.pre")) {
    FT_ASSIGN_OR_RETURN(spec.pre, reader.get_string("tokenizer.ggml.pre"));
  }
  FT_ASSIGN_OR_RETURN(spec.tokens, reader.get_strings("tokenizer.ggml.tokens"));
  if (reader.find("tokenizer.ggml.merges")) {
    FT_ASSIGN_OR_RETURN(spec.merges, reader.get_strings("tokenizer.ggml.merges"));
  }
  if (reader.find("tokenizer.ggml.token_type")) {
    FT_ASSIGN_OR_RETURN(const GgufArray* types, reader.get_array("tokenizer.ggml.token_type"));
    const std::vector<int32_t>* values = types->as<int32_t>();
    if (values == nullptr) return FT_ERROR(ErrorCode::kCorrupt, "tokenizer.ggml.token_type is not an int32 array");
    spec.token_types = *values;
  }
  if (reader.find("tokenizer.ggml.scores")) {
    FT_ASSIGN_OR_RETURN(const GgufArray* scores, reader.get_array("tokenizer.ggml.scores"));
    const std::vector<float>* values = scores->as<float>();
    if (values == nullptr) return FT_ERROR(ErrorCode::kCorrupt, "tokenizer.ggml.scores is not a float32 array");
    spec.scores = *values;
  }
  if (reader.find("tokenizer.ggml.add_space_prefix")) {
    FT_ASSIGN_OR_RETURN(spec.add_space_prefix, reader.get_bool("tokenizer.ggml.add_space_prefix"));
  }
  auto optional_id = [&](const char* key, int32_t& out) -> Status {
    if (!reader.find(key)) return Status::ok_status();
    FT_ASSIGN_OR_RETURN(int64_t id, reader.get_int(key));
    out = static_cast<int32_t>(id);
    return Status::ok_status();
  };
  FT_RETURN_IF_ERROR(optional_id("tokenizer.ggml.bos_token_id", spec.bos_id));
  FT_RETURN_IF_ERROR(optional_id("tokenizer.ggml.eos_token_id", spec.eos_id));
  FT_RETURN_IF_ERROR(optional_id("tokenizer.ggml.padding_token_id", spec.pad_id));
  FT_RETURN_IF_ERROR(optional_id("tokenizer.ggml.unknown_token_id", spec.unk_id));
  if (reader.find("tokenizer.ggml.add_bos_token")) {
    FT_ASSIGN_OR_RETURN(spec.add_bos, reader.get_bool("tokenizer.ggml.add_bos_token"));
  }
  if (reader.find("tokenizer.ggml.add_eos_token")) {
    FT_ASSIGN_OR_RETURN(spec.add_eos, reader.get_bool("tokenizer.ggml.add_eos_token"));
  }
  return spec;
}

Result<Tokenizer> load_model_tokenizer(const std::string& path, const GgufReader* opened) {
  if (!opened && !is_gguf(path)) return Tokenizer::from_hf_path(path);
  std::optional<GgufReader> own;
  if (!opened) {
    FT_ASSIGN_OR_RETURN(GgufReader reader, GgufReader::open(path));
    own.emplace(std::move(reader));
  }
  Result<TokenizerSpec> spec = tokenizer_spec_from_gguf(opened ? *opened : *own);
  if (!spec.ok()) return Status(spec.status()).with_context(fmt::format("reading the tokenizer of {}", path));
  return Tokenizer::from_spec(*spec);
}

Result<std::optional<ChatTemplate>> chat_template_from_gguf(const GgufReader& reader) {
  const std::string prefix = "tokenizer.chat_template";
  std::string default_source;
  std::vector<std::pair<std::string, std::string>> named;
  for (const auto& [key, value] : reader.metadata()) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string* text = value.get_if<std::string>();
    if (!text) return FT_ERROR(ErrorCode::kCorrupt, "{} is not a string", key);
    if (key == prefix) default_source = *text;
    else if (key.size() > prefix.size() && key[prefix.size()] == '.') named.emplace_back(key.substr(prefix.size() + 1), *text);
  }
  if (default_source.empty() && named.empty()) return std::optional<ChatTemplate>();
  FT_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::from_gguf(std::move(default_source), named));
  auto tokens = reader.get_strings("tokenizer.ggml.tokens");
  if (tokens.ok()) {
    for (const auto& [name, key] : {std::pair{"bos_token", "tokenizer.ggml.bos_token_id"},
                                    std::pair{"eos_token", "tokenizer.ggml.eos_token_id"},
                                    std::pair{"unk_token", "tokenizer.ggml.unknown_token_id"},
                                    std::pair{"pad_token", "tokenizer.ggml.padding_token_id"}}) {
      auto id = reader.get_uint(key);
      if (id.ok() && *id < tokens->size()) t.set_special_token(name, (*tokens)[*id]);
    }
  }
  return std::optional<ChatTemplate>(std::move(t));
}

Result<std::optional<ChatTemplate>> load_model_chat_template(const std::string& path, const GgufReader* opened) {
  if (opened) {
    auto t = chat_template_from_gguf(*opened);
    if (!t.ok()) return Status(t.status()).with_context(path);
    return t;
  }
  if (is_gguf(path)) {
    FT_ASSIGN_OR_RETURN(GgufReader reader, GgufReader::open(path));
    return load_model_chat_template(path, &reader);
  }
  FT_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::load(path));
  return std::optional<ChatTemplate>(std::move(t));
}

}  // namespace ft
