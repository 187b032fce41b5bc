#include "runtime/model/tokenizer_gguf.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "runtime/text/tokenizer.h"

namespace ft {

namespace {

using json = nlohmann::json;

// Vocabulary ids can be sparse; a hole becomes an unused "[PADn]" token, as
// llama.cpp's converter does, so that token ids stay row indices.
constexpr uint32_t kMaxVocab = 1u << 24;

Result<std::vector<std::string>> read_merges(const json& model) {
  std::vector<std::string> merges;
  auto it = model.find("merges");
  if (it == model.end()) return merges;
  if (!it->is_array()) return FT_ERROR(ErrorCode::kCorrupt, "tokenizer.json: model.merges is not an array");
  merges.reserve(it->size());
  for (const auto& m : *it) {
    if (m.is_string()) {
      merges.push_back(m.get<std::string>());
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    } else {
      return FT_ERROR(ErrorCode::kCorrupt, "tokenizer.json: a merge is neither \"a b\" nor [a, b]");
    }
  }
  return merges;
}

// "bos_token": "<s>" or {"content": "<s>", ...} or null.
std::optional<std::string> special_token_text(const json& config, const char* key) {
  auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    return (*it)["content"].get<std::string>();
  return std::nullopt;
}

std::optional<std::string> chat_template_of(const json& config) {
  auto it = config.find("chat_template");
  if (it == config.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {  // [{name, template}, ...]: the default one
    for (const auto& t : *it)
      if (t.is_object() && t.value("name", "") == "default" && t.contains("template") && t["template"].is_string())
        return t["template"].get<std::string>();
  }
  return std::nullopt;
}

// SentencePiece scores from HF merges: a token's score is minus the rank of
// the first merge that makes it, so the best-scored pair is the first merge.
// Tokens no merge makes (characters, bytes, specials) score below all of them.
std::vector<float> scores_from_merges(const std::vector<std::string>& tokens, const std::vector<std::string>& merges,
                                      const std::vector<int32_t>& types) {
  std::unordered_map<std::string, uint32_t> ids;
  ids.reserve(tokens.size());
  for (uint32_t i = 0; i < tokens.size(); ++i)
    if (types[i] == static_cast<int32_t>(GgufTokenType::kNormal)) ids.emplace(tokens[i], i);
  const float lowest = -static_cast<float>(merges.size()) - 1.0f;
  std::vector<float> scores(tokens.size(), 0.0f);
  std::vector<bool> made(tokens.size(), false);
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    std::string joined = merges[rank];
    const size_t space = joined.find(' ');
    if (space == std::string::npos) continue;
    joined.erase(space, 1);
    auto it = ids.find(joined);
    if (it == ids.end() || made[it->second]) continue;
    made[it->second] = true;
    scores[it->second] = -static_cast<float>(rank);
  }
  for (const auto& [text, id] : ids)
    if (!made[id]) scores[id] = lowest;
  return scores;
}

Result<TokenizerMetadata> build(const TokenizerSources& src) {
  const json tok = json::parse(src.tokenizer_json);
  const json& model = tok.at("model");
  const bool spm = model.value("byte_fallback", false);
  if (model.value("type", "") != "BPE")
    return FT_ERROR(ErrorCode::kUnsupported, "tokenizer.json: only BPE tokenizers can be converted (model type {})",
                    model.value("type", "?"));
  const std::string unk = model.contains("unk_token") && model["unk_token"].is_string() ? model["unk_token"].get<std::string>() : "";
  // A SentencePiece-style tokenizer is loaded as ft will run it, which checks
  // it, tells its byte tokens and whether it prepends a space marker.
  std::optional<Tokenizer> spm_tokenizer;
  if (spm) {
    Result<Tokenizer> loaded = Tokenizer::from_hf_json(src.tokenizer_json, src.tokenizer_config_json.value_or(""));
    if (!loaded.ok()) return loaded.status();
    spm_tokenizer = std::move(*loaded);
  }
  std::map<uint32_t, std::pair<std::string, GgufTokenType>> by_id;
  for (const auto& [text, id] : model.at("vocab").items()) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() >= kMaxVocab)
      return FT_ERROR(ErrorCode::kCorrupt, "tokenizer.json: token {} has a bad id", text);
    GgufTokenType type = GgufTokenType::kNormal;
    if (spm && spm_tokenizer->byte_fallback_value(id.get<int32_t>()) >= 0) type = GgufTokenType::kByte;
    if (spm && text == unk) type = GgufTokenType::kUnknown;
    by_id[id.get<uint32_t>()] = {text, type};
  }
  std::map<std::string, uint32_t> added_ids;
  if (auto added = tok.find("added_tokens"); added != tok.end() && added->is_array()) {
    for (const auto& a : *added) {
      const uint64_t id = a.at("id").get<uint64_t>();
      if (id >= kMaxVocab) return FT_ERROR(ErrorCode::kCorrupt, "tokenizer.json: added token id {} too large", id);
      const std::string content = a.at("content").get<std::string>();
      GgufTokenType type = a.value("special", false) ? GgufTokenType::kControl : GgufTokenType::kUserDefined;
      if (spm && content == unk) type = GgufTokenType::kUnknown;
      by_id[static_cast<uint32_t>(id)] = {content, type};
      added_ids[content] = static_cast<uint32_t>(id);
    }
  }
  if (by_id.empty()) return FT_ERROR(ErrorCode::kCorrupt, "tokenizer.json has no tokens");
  const uint32_t n = std::max(by_id.rbegin()->first + 1, src.min_vocab_size);
  std::vector<std::string> tokens(n);
  std::vector<int32_t> types(n, static_cast<int32_t>(GgufTokenType::kUnused));
  for (uint32_t i = 0; i < n; ++i) tokens[i] = fmt::format("[PAD{}]", i);
  for (auto& [id, entry] : by_id) {
    tokens[id] = entry.first;
    types[id] = static_cast<int32_t>(entry.second);
  }
  FT_ASSIGN_OR_RETURN(std::vector<std::string> merges, read_merges(model));

  TokenizerMetadata out;
  out.vocab_size = n;
  if (spm) {  // SentencePiece's form, as llama.cpp writes it: scores, no merges
    std::vector<float> scores = scores_from_merges(tokens, merges, types);
    out.keys.emplace_back("tokenizer.ggml.model", GgufValue("llama"));
    out.keys.emplace_back("tokenizer.ggml.tokens", GgufValue::strings(std::move(tokens)));
    out.keys.emplace_back("tokenizer.ggml.scores", GgufValue::f32s(std::move(scores)));
    out.keys.emplace_back("tokenizer.ggml.token_type", GgufValue::i32s(std::move(types)));
    out.keys.emplace_back("tokenizer.ggml.add_space_prefix", GgufValue(spm_tokenizer->prepends_space_marker()));
  } else {
    out.keys.emplace_back("tokenizer.ggml.model", GgufValue("gpt2"));
    out.keys.emplace_back("tokenizer.ggml.pre", GgufValue(src.pre));
    out.keys.emplace_back("tokenizer.ggml.tokens", GgufValue::strings(std::move(tokens)));
    out.keys.emplace_back("tokenizer.ggml.token_type", GgufValue::i32s(std::move(types)));
    out.keys.emplace_back("tokenizer.ggml.merges", GgufValue::strings(std::move(merges)));
  }

  json config = json::object();
  if (src.tokenizer_config_json) config = json::parse(*src.tokenizer_config_json);
  auto id_of = [&](const std::optional<std::string>& text) -> std::optional<int32_t> {
    if (!text) return std::nullopt;
    if (auto it = added_ids.find(*text); it != added_ids.end()) return static_cast<int32_t>(it->second);
    if (auto it = model.at("vocab").find(*text); it != model.at("vocab").end()) return it->get<int32_t>();
    return std::nullopt;
  };
  auto put_id = [&](const char* key, std::optional<int32_t> id) {
    if (id) out.keys.emplace_back(key, GgufValue(static_cast<uint32_t>(*id)));
  };
  const auto bos = id_of(special_token_text(config, "bos_token"));
  put_id("tokenizer.ggml.bos_token_id", bos ? bos : src.fallback_bos_id);
  const auto eos = id_of(special_token_text(config, "eos_token"));
  put_id("tokenizer.ggml.eos_token_id", eos ? eos : src.fallback_eos_id);
  put_id("tokenizer.ggml.padding_token_id", id_of(special_token_text(config, "pad_token")));
  if (spm && !unk.empty()) put_id("tokenizer.ggml.unknown_token_id", id_of(unk));
  if (auto it = config.find("add_bos_token"); it != config.end() && it->is_boolean())
    out.keys.emplace_back("tokenizer.ggml.add_bos_token", GgufValue(it->get<bool>()));
  if (auto t = src.chat_template ? src.chat_template : chat_template_of(config))
    out.keys.emplace_back("tokenizer.chat_template", GgufValue(*t));
  return out;
}

}  // namespace

Result<TokenizerMetadata> tokenizer_metadata_from_hf(const TokenizerSources& sources) {
  try {
    return build(sources);
  } catch (const json::exception& e) {
    return FT_ERROR(ErrorCode::kCorrupt, "tokenizer files: {}", e.what());
  }
}

}  // namespace ft
