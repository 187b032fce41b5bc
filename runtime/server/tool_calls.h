// Tool calls in generated text. A chat model given tools answers a call by
// writing it in its own format; the OpenAI API returns it as
// message.tool_calls instead of content. Supported:
//   Hermes: <tool_call>{"name": ..., "arguments": {...}}</tool_call> anywhere
//     in the text (Qwen2.5, Qwen3, QwQ, Hermes; templates that write the tag);
//   Llama-3 JSON: the whole answer is {"name": ..., "parameters": {...}},
//     or several joined by ";" (Llama 3.1-3.3; templates with <|python_tag|>
//     and "parameters");
//   Mistral: the whole answer is [TOOL_CALLS] [{"name": ..., "arguments":
//     {...}}, ...] (Mistral 7B v0.3, Nemo, Small; templates that write
//     [TOOL_CALLS]); the marker is a special token, so the text usually
//     starts at the list.
//
// ToolCallStream cuts the calls out of text as it is generated: content is
// released as soon as it cannot be the start of a call, and each call as soon
// as it closes (Llama-3 JSON and Mistral: an answer that opens with "{" or
// "[" is held to the end). A block that does not hold a valid call stays content.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/text/chat_template.h"

namespace ft::server {

enum class ToolCallFormat {
  kNone,    // tool calls are not parsed
  kHermes,      // <tool_call>{"name": ..., "arguments": ...}</tool_call>
  kLlama3Json,  // {"name": ..., "parameters": ...} as the whole answer
  kMistral,     // [TOOL_CALLS] [{"name": ..., "arguments": ...}, ...] as the whole answer
};

// Mistral's templates accept only tool call ids of 9 letters and digits.
bool wants_short_call_ids(ToolCallFormat format);

// The format the model of `chat` writes calls in, judged from its template's
// sources; kNone when no template or none is recognized.
ToolCallFormat tool_call_format_of(const ChatTemplate* chat);

// A function a forced call may name: its name and its parameters schema as
// JSON text (empty: any object).
struct CallableFunction {
  std::string name;
  std::string parameters;
};

// The opening of an answer that must be a call (tool_choice "required", or
// a named function), written at the end of the prompt so the model goes on
// from it: `tag` (the format's opening tag, if it has one), then `json`, the
// start of the call's object, which JSON mode then holds to one object. A
// named function's call is opened up to its arguments object; "required"
// leaves the name to the model. Null for kNone and Mistral (a list).
//
// `schema` is the JSON Schema of the whole call: {"name": that name,
// "arguments": the function's parameters} for a named function (`choices`
// holds it), and for "required" (`function` empty, `choices` every tool)
// those objects' union, told apart by the name (empty when a tool's
// parameters have definitions or references of their own: one root cannot
// hold several functions' $defs). Where the schema compiles, only `tag` is
// written and the call is held to the schema instead (the arguments then
// follow the parameters).
struct ForcedCall {
  std::string tag;
  std::string json;
  std::string schema;
};
std::optional<ForcedCall> forced_call(ToolCallFormat format, const std::string& function,
                                      std::span<const CallableFunction> choices = {});

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
  std::string advance_whole_answer();  // Llama-3 JSON and Mistral

  ToolCallFormat format_;
  std::string pending_;  // not yet released
  std::string gap_;      // the whitespace before the open call's tag
  bool in_call_ = false;  // Llama-3 JSON, Mistral: the answer opened with "{" / "["
  bool decided_ = false;  // Llama-3 JSON, Mistral: its first character has come
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
