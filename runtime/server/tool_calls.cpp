#include "runtime/server/tool_calls.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "runtime/server/text_scan.h"

namespace ft::server {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

// {"name": "f", "arguments": {...}} ("parameters" also read); the arguments
// go out as JSON text, as the OpenAI API sends them.
std::optional<ToolCall> call_from_json(const nlohmann::ordered_json& j) {
  if (!j.is_object()) return std::nullopt;
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

std::optional<ToolCall> parse_call(std::string_view body) {
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(body, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return call_from_json(j);
}

// The Mistral answer: [TOOL_CALLS] (when the marker was decoded) and a list of calls.
constexpr std::string_view kMistralMarker = "[TOOL_CALLS]";
std::optional<std::vector<ToolCall>> parse_mistral_calls(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text.substr(first).starts_with(kMistralMarker))
    text.remove_prefix(first + kMistralMarker.size());
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array() || j.empty()) return std::nullopt;
  std::vector<ToolCall> calls;
  for (const auto& item : j) {
    std::optional<ToolCall> call = call_from_json(item);
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
  }
  return calls;
}

// The Llama-3 JSON answer: one call, or several joined by ";".
std::optional<std::vector<ToolCall>> parse_llama3_calls(std::string_view text) {
  std::vector<ToolCall> calls;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ';') continue;
    if (i == text.size() && !calls.empty() && is_blank(text.substr(start))) break;  // a trailing ';'
    std::optional<ToolCall> call = parse_call(text.substr(start, i - start));
    if (call) {
      calls.push_back(std::move(*call));
      start = i + 1;
    } else if (i == text.size()) {
      return std::nullopt;  // a ';' inside a string split wrongly, or not a call at all
    }
  }
  if (calls.empty()) return std::nullopt;
  return calls;
}

}  // namespace

ToolCallFormat tool_call_format_of(const ChatTemplate* chat) {
  if (chat == nullptr) return ToolCallFormat::kNone;
  for (const std::string& name : chat->names()) {
    const std::string* source = chat->source(name);
    if (source == nullptr) continue;
    if (source->find(kOpen) != std::string::npos) return ToolCallFormat::kHermes;
    if (source->find("<|python_tag|>") != std::string::npos && source->find("\"parameters\"") != std::string::npos)
      return ToolCallFormat::kLlama3Json;
    if (source->find(kMistralMarker) != std::string::npos) return ToolCallFormat::kMistral;
  }
  return ToolCallFormat::kNone;
}

bool wants_short_call_ids(ToolCallFormat format) { return format == ToolCallFormat::kMistral; }

std::optional<ForcedCall> forced_call(ToolCallFormat format, const std::string& function,
                                      std::span<const CallableFunction> choices) {
  // JSON mode holds an object; Mistral's calls are a list.
  if (format == ToolCallFormat::kNone || format == ToolCallFormat::kMistral) return std::nullopt;
  const char* arguments = format == ToolCallFormat::kLlama3Json ? "parameters" : "arguments";
  ForcedCall f;
  f.json = function.empty() ? std::string(R"({"name": ")")
                            : R"({"name": )" + nlohmann::json(function).dump() + R"(, ")" + arguments + R"(": {)";
  f.tag = format == ToolCallFormat::kHermes ? std::string(kOpen) + "\n" : "";
  using ojson = nlohmann::ordered_json;
  // One function's call: its name, its parameters as the arguments.
  auto call_of = [&](const CallableFunction& c) {
    ojson params = c.parameters.empty() ? ojson() : ojson::parse(c.parameters, nullptr, false);
    if (params.is_discarded() || !params.is_object() || params.empty()) params = {{"type", "object"}};  // any object
    ojson call = {{"type", "object"},
                  {"properties", {{"name", {{"const", c.name}}}, {arguments, ojson::object()}}},
                  {"required", {"name", arguments}}};
    call["properties"][arguments] = std::move(params);
    return call;
  };
  if (choices.size() == 1) {
    ojson call = call_of(choices[0]);
    ojson& params = call["properties"][arguments];
    for (const char* defs : {"$defs", "definitions"})  // their $refs point at the root, now the call's
      if (auto it = params.find(defs); it != params.end()) {
        call[defs] = *it;
        params.erase(defs);
      }
    f.schema = call.dump();
  } else if (choices.size() > 1) {
    ojson any = ojson::array();
    for (const CallableFunction& c : choices) {
      if (c.parameters.find("\"$ref\"") != std::string::npos || c.parameters.find("\"$defs\"") != std::string::npos ||
          c.parameters.find("\"definitions\"") != std::string::npos)
        return f;  // held to JSON only
      any.push_back(call_of(c));
    }
    f.schema = ojson{{"anyOf", std::move(any)}}.dump();
  }
  return f;
}

std::string ToolCallStream::push(std::string_view text) {
  if (format_ == ToolCallFormat::kNone) return std::string(text);
  pending_ += text;
  return format_ == ToolCallFormat::kHermes ? advance() : advance_whole_answer();
}

std::string ToolCallStream::advance_whole_answer() {
  if (!decided_) {
    const size_t first = pending_.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return {};
    decided_ = true;
    in_call_ = pending_[first] == (format_ == ToolCallFormat::kMistral ? '[' : '{');
  }
  if (in_call_) return {};  // calls, or text that opens like them: known at the end
  return std::exchange(pending_, {});
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
  if (format_ != ToolCallFormat::kHermes) {
    std::optional<std::vector<ToolCall>> parsed;
    if (in_call_)
      parsed = format_ == ToolCallFormat::kMistral ? parse_mistral_calls(pending_) : parse_llama3_calls(pending_);
    if (!parsed) return std::exchange(pending_, {});
    found_ += static_cast<int>(parsed->size());
    for (ToolCall& call : *parsed) calls_.push_back(std::move(call));
    pending_.clear();
    return {};
  }
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
  if (!parsed.calls.empty()) parsed.content = std::string(trim_space(parsed.content));
  return parsed;
}

}  // namespace ft::server
