// Tool calls in generated text. A chat model given tools answers a call by
// writing it in its own format; the OpenAI API returns it as
// message.tool_calls instead of content. Supported: the format of models
// whose chat template writes <tool_call>...</tool_call> around a JSON object
// {"name": ..., "arguments": {...}} (Qwen2.5, Qwen3, QwQ, Hermes).
//
// ToolCallStream cuts the calls out of text as it is generated: content is
// released as soon as it cannot be the start of a call, and each call as soon
// as it closes. A block that does not hold a valid call stays content.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/text/chat_template.h"

namespace ft::server {

enum class ToolCallFormat {
  kNone,    // tool calls are not parsed
  kHermes,  // <tool_call>{"name": ..., "arguments": ...}</tool_call>
};

// The format the model of `chat` writes calls in, judged from its template's
// sources; kNone when no template or none is recognized.
ToolCallFormat tool_call_format_of(const ChatTemplate* chat);

struct ToolCall {
  std::string name;
  std::string arguments;  // JSON text of the arguments object
};

class ToolCallStream {
 public:
  explicit ToolCallStream(ToolCallFormat format) : format_(format) {}

  // Takes the next generated text; returns the content that can go out now.
  std::string push(std::string_view text);
  // The calls closed since the last take.
  std::vector<ToolCall> take_calls();
  // At the end of generation: the content held back (an unclosed call that
  // parses becomes a call, one that does not becomes content).
  std::string finish();
  // Whether any call was found.
  bool saw_calls() const { return found_ > 0; }

 private:
  // Releases what is settled in pending_.
  std::string advance();

  ToolCallFormat format_;
  std::string pending_;  // not yet released
  std::string gap_;      // the whitespace before the open call's tag
  bool in_call_ = false;
  std::vector<ToolCall> calls_;
  int found_ = 0;
};

// The whole of a finished text: its content (whitespace around the calls
// trimmed) and its calls.
struct ParsedToolCalls {
  std::string content;
  std::vector<ToolCall> calls;
};
ParsedToolCalls parse_tool_calls(ToolCallFormat format, std::string_view text);

}  // namespace ft::server
