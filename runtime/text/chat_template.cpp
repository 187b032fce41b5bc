#include "runtime/text/chat_template.h"

#include <sys/stat.h>

#include <algorithm>

#include "runtime/base/files.h"

namespace ft {
namespace {

using json = nlohmann::ordered_json;

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<json> read_json(const std::string& path) {
  FT_ASSIGN_OR_RETURN(std::string text, read_file(path));
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return FT_ERROR(ErrorCode::kCorrupt, "{} is not valid JSON", path);
  return parsed;
}

// transformers passes every special token of the tokenizer to the template;
// each is either a string or an AddedToken object with a "content" field.
json special_tokens_of(const json& config) {
  json tokens = json::object();
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token",
                          "mask_token"}) {
    auto it = config.find(key);
    if (it == config.end()) continue;
    if (it->is_string()) {
      tokens[key] = *it;
    } else if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
      tokens[key] = (*it)["content"];
    }
  }
  if (auto it = config.find("additional_special_tokens"); it != config.end() && it->is_array()) {
    json extra = json::array();
    for (const auto& t : *it) {
      if (t.is_string()) extra.push_back(t);
      if (t.is_object() && t.contains("content") && t["content"].is_string()) extra.push_back(t["content"]);
    }
    tokens["additional_special_tokens"] = std::move(extra);
  }
  return tokens;
}

bool is_text_part(const json& part) {
  return part.is_object() && part.value("type", "") == "text" && part.contains("text") && part["text"].is_string();
}

json normalize_message(const json& message) {
  if (!message.is_object()) return message;
  json out = message;
  if (auto it = out.find("content"); it != out.end()) {
    if (it->is_null()) {
      *it = "";
    } else if (it->is_array() && !it->empty() && std::all_of(it->begin(), it->end(), is_text_part)) {
      std::string text;
      for (const auto& part : *it) {
        if (!text.empty()) text += "\n";
        text += part["text"].get<std::string>();
      }
      *it = text;
    }
  }
  if (auto calls = out.find("tool_calls"); calls != out.end() && calls->is_array()) {
    for (auto& call : *calls) {
      if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) continue;
      json& function = call["function"];
      if (!function.contains("arguments") || !function["arguments"].is_string()) continue;
      json args = json::parse(function["arguments"].get<std::string>(), nullptr, false);
      if (!args.is_discarded() && args.is_object()) function["arguments"] = std::move(args);
    }
  }
  return out;
}

}  // namespace

Status ChatTemplate::add_variant(std::string name, std::string source) {
  auto compiled = JinjaTemplate::parse(source);
  if (!compiled.ok()) return Status(compiled.status()).with_context(fmt::format("chat template '{}'", name));
  variants_.push_back(Variant{std::move(name), std::move(source), std::move(compiled).value()});
  return {};
}

Result<ChatTemplate> ChatTemplate::parse(std::string source) {
  ChatTemplate t;
  FT_RETURN_IF_ERROR(t.add_variant("default", std::move(source)));
  return t;
}

Result<ChatTemplate> ChatTemplate::from_tokenizer_config(const json& config) {
  if (!config.is_object()) return FT_ERROR(ErrorCode::kInvalidArgument, "tokenizer config must be a JSON object");
  auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) {
    return FT_ERROR(ErrorCode::kNotFound, "the tokenizer config has no chat_template");
  }
  ChatTemplate t;
  if (it->is_string()) {
    FT_RETURN_IF_ERROR(t.add_variant("default", it->get<std::string>()));
  } else if (it->is_array()) {
    for (const auto& entry : *it) {
      if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
          !entry["name"].is_string() || !entry["template"].is_string()) {
        return FT_ERROR(ErrorCode::kCorrupt, "chat_template list entries must be {{name, template}} strings");
      }
      FT_RETURN_IF_ERROR(t.add_variant(entry["name"].get<std::string>(), entry["template"].get<std::string>()));
    }
  } else {
    return FT_ERROR(ErrorCode::kCorrupt, "chat_template must be a string or a list of {{name, template}}");
  }
  if (t.variants_.empty()) return FT_ERROR(ErrorCode::kNotFound, "the chat_template list is empty");
  t.special_tokens_ = special_tokens_of(config);
  return t;
}

Result<ChatTemplate> ChatTemplate::from_gguf(std::string default_source,
                                             const std::vector<std::pair<std::string, std::string>>& named) {
  ChatTemplate t;
  if (!default_source.empty()) FT_RETURN_IF_ERROR(t.add_variant("default", std::move(default_source)));
  for (const auto& [name, source] : named) FT_RETURN_IF_ERROR(t.add_variant(name, source));
  if (t.variants_.empty()) return FT_ERROR(ErrorCode::kNotFound, "the GGUF file has no tokenizer.chat_template");
  return t;
}

Result<ChatTemplate> ChatTemplate::load(const std::string& path) {
  if (is_directory(path)) {
    std::string config_path = path + "/tokenizer_config.json";
    json config = json::object();
    if (is_file(config_path)) {
      FT_ASSIGN_OR_RETURN(config, read_json(config_path));
    }
    // Newer transformers save the template beside the config, and prefer it.
    if (is_file(path + "/chat_template.jinja")) {
      FT_ASSIGN_OR_RETURN(std::string source, read_file(path + "/chat_template.jinja"));
      config["chat_template"] = source;
    } else if (is_file(path + "/chat_template.json")) {
      FT_ASSIGN_OR_RETURN(json separate, read_json(path + "/chat_template.json"));
      if (separate.is_object() && separate.contains("chat_template")) config["chat_template"] = separate["chat_template"];
    }
    auto t = from_tokenizer_config(config);
    if (!t.ok()) return Status(t.status()).with_context(path);
    return t;
  }
  if (ends_with(path, ".json")) {
    FT_ASSIGN_OR_RETURN(json config, read_json(path));
    auto t = from_tokenizer_config(config);
    if (!t.ok()) return Status(t.status()).with_context(path);
    return t;
  }
  FT_ASSIGN_OR_RETURN(std::string source, read_file(path));
  auto t = parse(std::move(source));
  if (!t.ok()) return Status(t.status()).with_context(path);
  return t;
}

json ChatTemplate::normalize_messages(const json& messages) {
  if (!messages.is_array()) return messages;
  json out = json::array();
  for (const auto& m : messages) out.push_back(normalize_message(m));
  return out;
}

std::vector<std::string> ChatTemplate::names() const {
  std::vector<std::string> out;
  for (const auto& v : variants_) out.push_back(v.name);
  return out;
}

const std::string* ChatTemplate::source(const std::string& name) const {
  for (const auto& v : variants_) {
    if (v.name == name) return &v.source;
  }
  return nullptr;
}

void ChatTemplate::set_special_token(const std::string& name, std::string value) {
  special_tokens_[name] = std::move(value);
}

bool ChatTemplate::has_special_token(const std::string& name) const { return special_tokens_.contains(name); }

Result<std::string> ChatTemplate::render(const ChatRenderOptions& options) const {
  if (!options.messages.is_array()) return FT_ERROR(ErrorCode::kInvalidArgument, "messages must be a JSON array");
  if (!options.tools.is_null() && !options.tools.is_array()) {
    return FT_ERROR(ErrorCode::kInvalidArgument, "tools must be a JSON array");
  }
  if (!options.extra.is_object()) return FT_ERROR(ErrorCode::kInvalidArgument, "extra variables must be an object");
  // As transformers: tools given at all (even an empty list) select "tool_use"
  // and reach the template as given; absent tools reach it as none.
  bool has_tools = options.tools.is_array();
  const Variant* chosen = nullptr;
  for (const char* wanted : {has_tools ? "tool_use" : "default", "default"}) {
    for (const auto& v : variants_) {
      if (!chosen && v.name == wanted) chosen = &v;
    }
  }
  if (!chosen && variants_.size() == 1) chosen = &variants_[0];
  if (!chosen) {
    return FT_ERROR(ErrorCode::kInvalidArgument, "the model has several chat templates and none named 'default'");
  }
  json vars = special_tokens_;
  if (options.bos_token) vars["bos_token"] = *options.bos_token;
  if (options.eos_token) vars["eos_token"] = *options.eos_token;
  vars["messages"] = options.normalize ? normalize_messages(options.messages) : options.messages;
  vars["tools"] = options.tools;
  vars["add_generation_prompt"] = options.add_generation_prompt;
  if (options.enable_thinking) vars["enable_thinking"] = *options.enable_thinking;
  for (const auto& [k, v] : options.extra.items()) vars[k] = v;
  auto out = chosen->compiled.render(vars);
  if (!out.ok()) return Status(out.status()).with_context(fmt::format("chat template '{}'", chosen->name));
  return out;
}

}  // namespace ft
