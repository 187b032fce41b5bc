// libFuzzer target: a chat template (it comes from the model file, so from
// whoever made the model) parsed, then rendered for a short conversation
// with a tool. Either step succeeds or returns an error; none may crash,
// read out of bounds or run away (libFuzzer's -timeout and -rss_limit_mb
// catch the last).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/text/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tmpl = ft::ChatTemplate::parse(std::string(reinterpret_cast<const char*>(data), size));
  if (!tmpl.ok()) return 0;
  static const ft::ChatRenderOptions options = [] {
    ft::ChatRenderOptions o;
    o.messages = nlohmann::ordered_json::parse(R"([
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "12 C"},
      {"role": "assistant", "content": "<think>ok</think>12 C."}])");
    o.tools = nlohmann::ordered_json::parse(R"([{"type": "function", "function": {"name": "weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])");
    o.enable_thinking = true;
    o.bos_token = "<s>";
    o.eos_token = "</s>";
    return o;
  }();
  (void)tmpl->render(options);
  return 0;
}
