// Chat templates: turn OpenAI-style messages (and tools) into the prompt text a
// model was trained on, by rendering the model's Jinja chat template the way
// HF transformers' apply_chat_template does.
//
// JSON is nlohmann::ordered_json throughout: tojson in a template writes keys in
// the order they were given, and the prompt must match what the client sent.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.h"
#include "runtime/text/jinja.h"

namespace ft {

struct ChatRenderOptions {
  // [{role, content (string or [{type: "text", text}]), tool_calls, tool_call_id, name, ...}]
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  // null (the template sees `tools` as none) or an array of tool definitions.
  nlohmann::ordered_json tools;
  bool add_generation_prompt = true;
  // Unset: the template sees `enable_thinking` as undefined, as in transformers.
  std::optional<bool> enable_thinking;
  // Unset: the tokens read from the tokenizer config (if any).
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  // More template variables (e.g. date_string, tools_in_user_message).
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  // Applies normalize_messages() first; see there.
  bool normalize = true;
};

class ChatTemplate {
 public:
  // One template, used for every request.
  static Result<ChatTemplate> parse(std::string source);
  // From the contents of tokenizer_config.json: `chat_template` is a string or
  // a list of {name, template}; the special tokens (bos_token, eos_token, ...)
  // become template variables.
  static Result<ChatTemplate> from_tokenizer_config(const nlohmann::ordered_json& config);
  // `path`: a model directory (chat_template.jinja, else chat_template.json,
  // else tokenizer_config.json; special tokens from tokenizer_config.json),
  // a tokenizer_config.json or chat_template.json file, or a raw template file.
  static Result<ChatTemplate> load(const std::string& path);
  // From GGUF metadata: `tokenizer.chat_template`, and the named variants
  // `tokenizer.chat_template.<name>` as (name, source) pairs.
  static Result<ChatTemplate> from_gguf(std::string default_source,
                                        const std::vector<std::pair<std::string, std::string>>& named);

  // Picks the template as transformers does: "tool_use" when tools are given
  // and the model has one, else "default".
  Result<std::string> render(const ChatRenderOptions& options) const;

  // OpenAI requests as templates expect them: content given as a list of text
  // parts becomes one string (parts joined by "\n"; lists with other part types
  // are kept), null content becomes "", and tool-call arguments given as a JSON
  // string are parsed into an object.
  static nlohmann::ordered_json normalize_messages(const nlohmann::ordered_json& messages);

  // Template names in load order ("default" for a single template).
  std::vector<std::string> names() const;
  // Source of a named template; nullptr if there is none.
  const std::string* source(const std::string& name) const;
  // Sets or replaces a special-token variable (bos_token, eos_token, ...).
  void set_special_token(const std::string& name, std::string value);
  bool has_special_token(const std::string& name) const;

 private:
  struct Variant {
    std::string name;
    std::string source;
    JinjaTemplate compiled;
  };
  ChatTemplate() = default;
  Status add_variant(std::string name, std::string source);

  std::vector<Variant> variants_;
  nlohmann::ordered_json special_tokens_ = nlohmann::ordered_json::object();
};

}  // namespace ft
