#include "runtime/server/tool_calls.h"

#include <optional>

#include <nlohmann/json.hpp>

namespace ft::server {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_blank(std::string_view s) {
  for (char c : s)
    if (!is_space(c)) return false;
  return true;
}

// Length of the longest end of `s` that is a proper start of `tag`.
size_t partial_tag(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

// {"name": "f", "arguments": {...}} ("parameters" also read); the arguments
// go out as JSON text, as the OpenAI API sends them.
std::optional<ToolCall> parse_call(std::string_view body) {
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto name = j.find("name");
  if (name == j.end() || !name->is_string() || name->get<std::string>().empty()) return std::nullopt;
  auto args = j.find("arguments");
  if (args == j.end()) args = j.find("parameters");
  ToolCall call;
  call.name = name->get<std::string>();
  if (args == j.end() || args->is_null()) {
    call.arguments = "{}";
  } else if (args->is_string()) {
    call.arguments = args->get<std::string>();
  } else {
    call.arguments = args->dump();
  }
  return call;
}

}  // namespace

ToolCallFormat tool_call_format_of(const ChatTemplate* chat) {
  if (chat == nullptr) return ToolCallFormat::kNone;
  for (const std::string& name : chat->names()) {
    const std::string* source = chat->source(name);
    if (source != nullptr && source->find(kOpen) != std::string::npos) return ToolCallFormat::kHermes;
  }
  return ToolCallFormat::kNone;
}

std::string ToolCallStream::push(std::string_view text) {
  if (format_ == ToolCallFormat::kNone) return std::string(text);
  pending_ += text;
  return advance();
}

std::string ToolCallStream::advance() {
  std::string out;
  while (true) {
    if (!in_call_) {
      const size_t open = pending_.find(kOpen);
      if (open != std::string::npos) {
        // The whitespace before a call is not content (it was held back); it
        // is if the block turns out not to be a call.
        size_t end = open;
        while (end > 0 && is_space(pending_[end - 1])) --end;
        out.append(pending_, 0, end);
        gap_ = pending_.substr(end, open - end);
        pending_.erase(0, open + kOpen.size());
        in_call_ = true;
        continue;
      }
      // Held back: what may begin a call, and the whitespace before it.
      size_t keep = partial_tag(pending_, kOpen);
      while (keep < pending_.size() && is_space(pending_[pending_.size() - keep - 1])) ++keep;
      out.append(pending_, 0, pending_.size() - keep);
      pending_.erase(0, pending_.size() - keep);
      break;
    }
    const size_t close = pending_.find(kClose);
    if (close == std::string::npos) break;
    const std::string body = pending_.substr(0, close);
    pending_.erase(0, close + kClose.size());
    in_call_ = false;
    if (std::optional<ToolCall> call = parse_call(body)) {
      calls_.push_back(std::move(*call));
      ++found_;
    } else {
      out += gap_;
      out += kOpen;
      out += body;
      out += kClose;
    }
    gap_.clear();
  }
  return out;
}

std::vector<ToolCall> ToolCallStream::take_calls() { return std::exchange(calls_, {}); }

std::string ToolCallStream::finish() {
  if (format_ == ToolCallFormat::kNone) return {};
  std::string out;
  if (in_call_) {
    // Cut off (max_tokens) or closed without its tag: a call if it parses.
    if (std::optional<ToolCall> call = parse_call(pending_)) {
      calls_.push_back(std::move(*call));
      ++found_;
    } else {
      out = gap_ + std::string(kOpen) + pending_;
    }
  } else {
    out = pending_;
  }
  pending_.clear();
  gap_.clear();
  in_call_ = false;
  if (found_ > 0 && is_blank(out)) out.clear();  // the whitespace after the last call
  return out;
}

ParsedToolCalls parse_tool_calls(ToolCallFormat format, std::string_view text) {
  ToolCallStream stream(format);
  ParsedToolCalls parsed;
  parsed.content = stream.push(text);
  parsed.content += stream.finish();
  parsed.calls = stream.take_calls();
  if (!parsed.calls.empty()) {
    size_t begin = 0, end = parsed.content.size();
    while (begin < end && is_space(parsed.content[begin])) ++begin;
    while (end > begin && is_space(parsed.content[end - 1])) --end;
    parsed.content = parsed.content.substr(begin, end - begin);
  }
  return parsed;
}

}  // namespace ft::server
