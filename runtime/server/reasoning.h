// Reasoning in generated text. Thinking models (Qwen3, QwQ, DeepSeek-R1 and
// its distills) open their answer with <think>...</think>; the OpenAI-style
// servers return that part as message.reasoning_content (streamed as
// delta.reasoning_content) and the rest as content.
//
// The block counts only at the start of the answer (after whitespace), or
// from the first token when the prompt itself ends by opening it (QwQ and
// R1 templates write "<think>\n" after the assistant header). A block cut
// off before </think> (max_tokens) is all reasoning. The whitespace around
// the reasoning, and between </think> and the answer, is dropped. An answer
// that does not open with the block is all content, unchanged.
#pragma once

#include <string>
#include <string_view>

#include "runtime/text/chat_template.h"

namespace ft::server {

enum class ReasoningFormat {
  kNone,   // no reasoning is split out
  kThink,  // <think>...</think> at the start of the answer
};

// kThink when a template of `chat` writes <think> (so the model was trained
// to think in it); kNone otherwise or without a template.
ReasoningFormat reasoning_format_of(const ChatTemplate* chat);

// Whether a rendered prompt ends inside an opened <think> block (the answer
// starts with reasoning, without the tag).
bool prompt_opens_reasoning(std::string_view prompt);

struct ReasoningSplit {
  std::string reasoning;
  std::string content;
};

class ReasoningStream {
 public:
  // `opened`: the prompt opened the block (prompt_opens_reasoning).
  ReasoningStream(ReasoningFormat format, bool opened);

  // Takes the next generated text; returns what can go out now of each part.
  ReasoningSplit push(std::string_view text);
  // At the end of generation: what was held back.
  ReasoningSplit finish();

 private:
  enum class State { kStart, kReasoning, kContent };

  State state_;
  std::string pending_;       // not yet released
  bool trim_front_ = true;    // reasoning or content after </think>: drop leading whitespace
};

// The whole of a finished text.
ReasoningSplit split_reasoning(ReasoningFormat format, bool opened, std::string_view text);

}  // namespace ft::server
