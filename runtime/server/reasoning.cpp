#include "runtime/server/reasoning.h"

#include "runtime/server/text_scan.h"

namespace ft::server {
namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

}  // namespace

ReasoningFormat reasoning_format_of(const ChatTemplate* chat) {
  if (chat == nullptr) return ReasoningFormat::kNone;
  for (const std::string& name : chat->names()) {
    const std::string* source = chat->source(name);
    if (source != nullptr && source->find(kOpen) != std::string::npos) return ReasoningFormat::kThink;
  }
  return ReasoningFormat::kNone;
}

bool prompt_opens_reasoning(std::string_view prompt) {
  prompt = trim_end_space(prompt);
  return prompt.size() >= kOpen.size() && prompt.substr(prompt.size() - kOpen.size()) == kOpen;
}

ReasoningStream::ReasoningStream(ReasoningFormat format, bool opened)
    : state_(format == ReasoningFormat::kNone ? State::kContent
             : opened                          ? State::kReasoning
                                               : State::kStart),
      trim_front_(format != ReasoningFormat::kNone) {}

ReasoningSplit ReasoningStream::push(std::string_view text) {
  ReasoningSplit out;
  pending_ += text;
  while (true) {
    if (state_ == State::kStart) {
      // Undecided until the first non-space text shows whether it opens the block.
      const size_t first = pending_.find_first_not_of(" \t\r\n");
      if (first == std::string::npos) return out;
      const std::string_view rest = std::string_view(pending_).substr(first);
      if (rest.substr(0, kOpen.size()) == kOpen) {
        pending_.erase(0, first + kOpen.size());
        state_ = State::kReasoning;
        continue;
      }
      if (rest.size() < kOpen.size() && kOpen.substr(0, rest.size()) == rest) return out;  // "<thi" so far
      state_ = State::kContent;
      trim_front_ = false;  // no block: the answer goes out as written
      continue;
    }
    if (trim_front_) {
      const size_t first = pending_.find_first_not_of(" \t\r\n");
      if (first == std::string::npos) {
        pending_.clear();
        return out;
      }
      pending_.erase(0, first);
      trim_front_ = false;
    }
    if (state_ == State::kContent) {
      out.content += pending_;
      pending_.clear();
      return out;
    }
    const size_t close = pending_.find(kClose);
    if (close != std::string::npos) {
      // Its front was trimmed above or continues reasoning already released.
      out.reasoning += trim_end_space(std::string_view(pending_).substr(0, close));
      pending_.erase(0, close + kClose.size());
      state_ = State::kContent;
      trim_front_ = true;
      continue;
    }
    // Held back: a partial </think>, and the whitespace before it (the end
    // of the reasoning, if the tag follows).
    size_t keep = partial_tag(pending_, kClose);
    while (keep < pending_.size() && is_space(pending_[pending_.size() - keep - 1])) ++keep;
    out.reasoning.append(pending_, 0, pending_.size() - keep);
    pending_.erase(0, pending_.size() - keep);
    return out;
  }
}

ReasoningSplit ReasoningStream::finish() {
  ReasoningSplit out;
  if (state_ == State::kReasoning) {
    // Cut off inside the block: the rest is reasoning, its trailing whitespace dropped.
    out.reasoning = trim_end_space(pending_);
  } else {
    out.content = pending_;  // kStart: only whitespace or the start of "<think>" came
  }
  pending_.clear();
  return out;
}

ReasoningSplit split_reasoning(ReasoningFormat format, bool opened, std::string_view text) {
  ReasoningStream stream(format, opened);
  ReasoningSplit out = stream.push(text);
  ReasoningSplit rest = stream.finish();
  out.reasoning += rest.reasoning;
  out.content += rest.content;
  return out;
}

}  // namespace ft::server
