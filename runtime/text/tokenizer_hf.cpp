// Loading a tokenizer from HF's tokenizer.json and tokenizer_config.json.
// Supported: model BPE over the byte-level alphabet, or with byte_fallback
// over characters (SentencePiece-style); normalizer null, NFC, Prepend and
// Replace of spaces by U+2581; pre_tokenizer ByteLevel, Split (behavior
// Isolated), Metaspace and Sequences of them; post_processor ByteLevel or
// TemplateProcessing (for BOS/EOS); for byte fallback, the decoders that undo
// the U+2581 spaces (Replace, ByteFallback, Fuse, Strip of one leading space,
// Metaspace). Anything else is refused by name rather than tokenized
// differently.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "runtime/base/files.h"
#include "runtime/text/bpe_byte_level.h"
#include "runtime/text/tokenizer_impl.h"

namespace ft {
namespace {

using nlohmann::json;

// A vocabulary string as the BPE model keeps it: raw bytes for byte-level
// BPE, the string itself for byte fallback.
std::string to_piece(const TokenizerParts& parts, const std::string& token) {
  return parts.vocab.alphabet == BpeVocab::Alphabet::kChars ? token : byte_level_to_bytes(token);
}

// A boolean field that may be missing or null (both read as false).
bool flag(const json& node, const char* key) {
  return node.contains(key) && node[key].is_boolean() && node[key].get<bool>();
}

std::string type_of(const json& node) {
  return node.is_object() && node.contains("type") && node["type"].is_string() ? node["type"].get<std::string>()
                                                                               : std::string();
}

bool is_marker(const json& node, const char* key) {
  return node.contains(key) && node[key].is_string() && node[key].get<std::string>() == SpaceMarker::kMarker;
}

// A Replace whose pattern is the string `from` and whose content is `to`.
bool is_replace(const json& node, std::string_view from, std::string_view to) {
  const json& pattern = node.value("pattern", json::object());
  return pattern.contains("String") && pattern["String"].is_string() && pattern["String"].get<std::string>() == from &&
         node.value("content", std::string()) == to;
}

Status read_normalizer(const json& node, TokenizerParts& parts) {
  if (node.is_null()) return Status::ok_status();
  std::string type = type_of(node);
  if (type == "NFC") {
    parts.nfc = true;
    return Status::ok_status();
  }
  if (type == "Prepend" && is_marker(node, "prepend")) {  // SentencePiece's space in front
    parts.spaces.prepend = SpaceMarker::Prepend::kAlways;
    return Status::ok_status();
  }
  if (type == "Replace" && is_replace(node, " ", SpaceMarker::kMarker)) {
    parts.spaces.enabled = true;
    return Status::ok_status();
  }
  if (type == "Sequence") {
    for (const json& item : node.at("normalizers")) FT_RETURN_IF_ERROR(read_normalizer(item, parts));
    return Status::ok_status();
  }
  return FT_ERROR(ErrorCode::kUnsupported, "tokenizer.json normalizer \"{}\" is not supported{}", type,
                  type == "Prepend" || type == "Replace" ? " (only U+2581 for spaces)" : "");
}

// PCRE2 reads \Q...\E as a literal, so a String pattern needs no escaping
// beyond the \E that would end it early.
std::string literal_pattern(const std::string& text) {
  std::string out = "\\Q";
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "\\E") == 0) {
      out += "\\E\\\\E\\Q";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out + "\\E";
}

// Metaspace's prepend_scheme ("always", "first", "never"), or the older
// add_prefix_space flag.
Result<SpaceMarker::Prepend> metaspace_prepend(const json& node) {
  if (!node.contains("prepend_scheme")) {
    return flag(node, "add_prefix_space") || !node.contains("add_prefix_space") ? SpaceMarker::Prepend::kAlways
                                                                                 : SpaceMarker::Prepend::kNever;
  }
  const std::string scheme = node["prepend_scheme"].is_string() ? node["prepend_scheme"].get<std::string>() : "";
  if (scheme == "always") return SpaceMarker::Prepend::kAlways;
  if (scheme == "first") return SpaceMarker::Prepend::kFirst;
  if (scheme == "never") return SpaceMarker::Prepend::kNever;
  return FT_ERROR(ErrorCode::kUnsupported, "Metaspace prepend_scheme \"{}\" is not supported", scheme);
}

Status read_pre_tokenizer(const json& node, TokenizerParts& parts, bool& byte_level) {
  if (node.is_null()) return Status::ok_status();
  std::string type = type_of(node);
  if (type == "Sequence") {
    for (const json& item : node.at("pretokenizers")) FT_RETURN_IF_ERROR(read_pre_tokenizer(item, parts, byte_level));
    return Status::ok_status();
  }
  if (type == "ByteLevel") {
    if (flag(node, "add_prefix_space")) {
      return FT_ERROR(ErrorCode::kUnsupported, "ByteLevel pre-tokenizer with add_prefix_space is not supported");
    }
    if (!node.contains("use_regex") || flag(node, "use_regex")) parts.patterns.emplace_back(kGpt2Pattern);
    byte_level = true;
    return Status::ok_status();
  }
  if (type == "Split") {
    std::string behavior = node.value("behavior", std::string("Isolated"));
    if (behavior != "Isolated" || flag(node, "invert")) {
      return FT_ERROR(ErrorCode::kUnsupported, "Split pre-tokenizer with behavior {}{} is not supported", behavior,
                      flag(node, "invert") ? " (inverted)" : "");
    }
    const json& pattern = node.at("pattern");
    if (pattern.contains("Regex")) {
      parts.patterns.push_back(pattern["Regex"].get<std::string>());
    } else {
      parts.patterns.push_back(literal_pattern(pattern.at("String").get<std::string>()));
    }
    return Status::ok_status();
  }
  if (type == "Metaspace") {
    if (!is_marker(node, "replacement")) {
      return FT_ERROR(ErrorCode::kUnsupported, "Metaspace pre-tokenizer with a replacement other than U+2581");
    }
    FT_ASSIGN_OR_RETURN(parts.spaces.prepend, metaspace_prepend(node));
    parts.spaces.enabled = true;
    parts.spaces.unless_marked = true;
    // split: each U+2581 starts a new piece.
    if (!node.contains("split") || flag(node, "split")) parts.patterns.push_back("\u2581[^\u2581]*");
    return Status::ok_status();
  }
  return FT_ERROR(ErrorCode::kUnsupported, "tokenizer.json pre_tokenizer \"{}\" is not supported", type);
}

// The decoder of a SentencePiece-style tokenizer: it must turn U+2581 back
// into spaces and byte tokens into bytes, as decode does; what it adds is
// whether a whole text loses its first space.
Status read_spm_decoder(const json& node, TokenizerParts& parts, bool& unmarks) {
  std::string type = type_of(node);
  if (type == "Sequence") {
    for (const json& item : node.at("decoders")) FT_RETURN_IF_ERROR(read_spm_decoder(item, parts, unmarks));
    return Status::ok_status();
  }
  if (type == "Replace" && is_replace(node, SpaceMarker::kMarker, " ")) {
    unmarks = true;
    return Status::ok_status();
  }
  if (type == "ByteFallback" || type == "Fuse") return Status::ok_status();
  if (type == "Strip" && node.value("content", std::string()) == " " && node.value("start", 0) <= 1 &&
      node.value("stop", 0) == 0) {
    parts.spaces.strip_first = node.value("start", 0) == 1;
    return Status::ok_status();
  }
  if (type == "Metaspace" && is_marker(node, "replacement")) {
    FT_ASSIGN_OR_RETURN(SpaceMarker::Prepend prepend, metaspace_prepend(node));
    parts.spaces.strip_first = prepend != SpaceMarker::Prepend::kNever;
    unmarks = true;
    return Status::ok_status();
  }
  return FT_ERROR(ErrorCode::kUnsupported, "tokenizer.json decoder \"{}\" is not supported with byte fallback",
                  type.empty() ? node.dump().substr(0, 60) : type);
}

// BOS/EOS from a TemplateProcessing post-processor: the special tokens that
// open and close its "single" template.
void read_post_processor(const json& node, TokenizerParts& parts) {
  std::string type = type_of(node);
  if (type == "Sequence") {
    for (const json& item : node.at("processors")) read_post_processor(item, parts);
    return;
  }
  if (type != "TemplateProcessing" || !node.contains("single")) return;
  const json& single = node["single"];
  const json& specials = node.value("special_tokens", json::object());
  auto special_id = [&](const json& item) -> int32_t {
    if (!item.contains("SpecialToken")) return -1;
    std::string name = item["SpecialToken"].at("id").get<std::string>();
    if (!specials.contains(name) || specials[name].at("ids").empty()) return -1;
    return specials[name]["ids"][0].get<int32_t>();
  };
  if (!single.empty() && special_id(single.front()) >= 0) {
    parts.add_bos = true;
    parts.bos_id = special_id(single.front());
  }
  if (single.size() > 1 && special_id(single.back()) >= 0) {
    parts.add_eos = true;
    parts.eos_id = special_id(single.back());
  }
}

Status read_model(const json& model, TokenizerParts& parts) {
  std::string type = type_of(model);
  if (!type.empty() && type != "BPE") {
    return FT_ERROR(ErrorCode::kUnsupported, "tokenizer.json model type \"{}\" is not supported (only BPE)", type);
  }
  if (flag(model, "byte_fallback")) parts.vocab.alphabet = BpeVocab::Alphabet::kChars;
  for (const auto& [token, id_node] : model.at("vocab").items()) {
    int64_t id = id_node.get<int64_t>();
    if (id < 0 || id > (1 << 24)) return FT_ERROR(ErrorCode::kCorrupt, "vocab token has id {}", id);
    if (static_cast<size_t>(id) >= parts.vocab.pieces.size()) parts.vocab.pieces.resize(id + 1);
    parts.vocab.pieces[id] = to_piece(parts, token);
  }
  for (const json& merge : model.at("merges")) {
    if (merge.is_array()) {
      parts.vocab.merges.emplace_back(to_piece(parts, merge.at(0).get<std::string>()),
                                      to_piece(parts, merge.at(1).get<std::string>()));
      continue;
    }
    std::string text = merge.get<std::string>();
    size_t space = text.find(' ');
    if (space == std::string::npos) return FT_ERROR(ErrorCode::kCorrupt, "BPE merge \"{}\" has no space", text);
    parts.vocab.merges.emplace_back(to_piece(parts, text.substr(0, space)), to_piece(parts, text.substr(space + 1)));
  }
  parts.vocab.ignore_merges = flag(model, "ignore_merges");
  if (parts.vocab.alphabet == BpeVocab::Alphabet::kChars) {
    parts.vocab.byte_tokens.fill(-1);
    for (size_t id = 0; id < parts.vocab.pieces.size(); ++id) {
      const int byte = parse_byte_token(parts.vocab.pieces[id]);
      if (byte >= 0 && parts.vocab.byte_tokens[byte] < 0) parts.vocab.byte_tokens[byte] = static_cast<int32_t>(id);
    }
    if (model.contains("unk_token") && model["unk_token"].is_string()) {
      const std::string unk = model["unk_token"].get<std::string>();
      for (size_t id = 0; id < parts.vocab.pieces.size() && parts.vocab.unk_id < 0; ++id) {
        if (parts.vocab.pieces[id] == unk) parts.vocab.unk_id = static_cast<int32_t>(id);
      }
    }
    parts.vocab.fuse_unk = flag(model, "fuse_unk");
  }
  return Status::ok_status();
}

void read_added_tokens(const json& list, TokenizerParts& parts) {
  for (const json& item : list) {
    AddedToken token;
    token.id = item.at("id").get<int32_t>();
    token.content = item.at("content").get<std::string>();
    token.special = flag(item, "special");
    token.lstrip = flag(item, "lstrip");
    token.rstrip = flag(item, "rstrip");
    parts.added.push_back(std::move(token));
  }
}

// A token named in tokenizer_config.json: a string, or {"content": ...}.
int32_t config_token_id(const json& config, const char* key, const TokenizerParts& parts) {
  if (!config.contains(key)) return -2;
  const json& node = config[key];
  std::string content;
  if (node.is_string()) {
    content = node.get<std::string>();
  } else if (node.is_object() && node.contains("content")) {
    content = node["content"].get<std::string>();
  } else {
    return -1;
  }
  for (const AddedToken& token : parts.added) {
    if (token.content == content) return token.id;
  }
  const std::string piece = to_piece(parts, content);
  for (size_t id = 0; id < parts.vocab.pieces.size(); ++id) {
    if (parts.vocab.pieces[id] == piece) return static_cast<int32_t>(id);
  }
  return -1;
}

void read_config(const json& config, TokenizerParts& parts) {
  // -2: the key is absent, so what tokenizer.json said stands.
  if (int32_t id = config_token_id(config, "bos_token", parts); id != -2) parts.bos_id = id;
  if (int32_t id = config_token_id(config, "eos_token", parts); id != -2) parts.eos_id = id;
  if (int32_t id = config_token_id(config, "pad_token", parts); id != -2) parts.pad_id = id;
  if (config.contains("add_bos_token") && config["add_bos_token"].is_boolean()) {
    parts.add_bos = config["add_bos_token"].get<bool>();
  }
  if (config.contains("add_eos_token") && config["add_eos_token"].is_boolean()) {
    parts.add_eos = config["add_eos_token"].get<bool>();
  }
}

Result<TokenizerParts> read_parts(std::string_view tokenizer_json, std::string_view config_json) {
  json root = json::parse(tokenizer_json, nullptr, false);
  if (root.is_discarded() || !root.is_object()) {
    return FT_ERROR(ErrorCode::kCorrupt, "tokenizer.json is not a JSON object");
  }
  TokenizerParts parts;
  bool byte_level = false;
  FT_RETURN_IF_ERROR(read_model(root.at("model"), parts));
  FT_RETURN_IF_ERROR(read_normalizer(root.value("normalizer", json()), parts));
  FT_RETURN_IF_ERROR(read_pre_tokenizer(root.value("pre_tokenizer", json()), parts, byte_level));
  if (parts.vocab.alphabet == BpeVocab::Alphabet::kChars) {
    if (byte_level) return FT_ERROR(ErrorCode::kUnsupported, "tokenizer.json has both byte fallback and ByteLevel");
    if (!parts.spaces.enabled) {
      return FT_ERROR(ErrorCode::kUnsupported,
                      "tokenizer.json has byte fallback but does not write spaces as U+2581 (no Replace normalizer "
                      "or Metaspace pre-tokenizer)");
    }
    bool unmarks = false;
    FT_RETURN_IF_ERROR(read_spm_decoder(root.value("decoder", json()), parts, unmarks));
    if (!unmarks) return FT_ERROR(ErrorCode::kUnsupported, "tokenizer.json decoder does not turn U+2581 into spaces");
  } else if (!byte_level) {
    return FT_ERROR(ErrorCode::kUnsupported,
                    "tokenizer.json has neither a ByteLevel pre-tokenizer nor byte fallback; only those BPE kinds are "
                    "supported");
  }
  read_post_processor(root.value("post_processor", json()), parts);
  read_added_tokens(root.value("added_tokens", json::array()), parts);
  if (!config_json.empty()) {
    json config = json::parse(config_json, nullptr, false);
    if (config.is_discarded() || !config.is_object()) {
      return FT_ERROR(ErrorCode::kCorrupt, "tokenizer_config.json is not a JSON object");
    }
    read_config(config, parts);
  }
  return parts;
}

}  // namespace

Result<Tokenizer> Tokenizer::from_hf_json(std::string_view tokenizer_json, std::string_view tokenizer_config_json) {
  Result<TokenizerParts> parts = Status(ErrorCode::kInternal, "unset");
  try {
    parts = read_parts(tokenizer_json, tokenizer_config_json);
  } catch (const json::exception& e) {
    return FT_ERROR(ErrorCode::kCorrupt, "tokenizer.json has an unexpected shape: {}", e.what());
  }
  if (!parts.ok()) return parts.status();
  return make_tokenizer(std::move(parts).value());
}

Result<Tokenizer> Tokenizer::from_hf_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path json_path = fs::is_directory(path, ec) ? fs::path(path) / "tokenizer.json" : fs::path(path);
  FT_ASSIGN_OR_RETURN(std::string tokenizer_json, read_file(json_path.string()));
  std::string config_json;
  fs::path config_path = json_path.parent_path() / "tokenizer_config.json";
  if (fs::exists(config_path, ec)) {
    FT_ASSIGN_OR_RETURN(config_json, read_file(config_path.string()));
  }
  Result<Tokenizer> tokenizer = from_hf_json(tokenizer_json, config_json);
  if (!tokenizer.ok()) {
    Status status = tokenizer.status();
    return status.with_context(fmt::format("loading {}", json_path.string()));
  }
  return tokenizer;
}

}  // namespace ft
