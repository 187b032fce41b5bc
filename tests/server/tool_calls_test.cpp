// Tool calls cut out of generated text: whole, and streamed in every split
// of the text into two pushes (the tags may break anywhere).
#include "runtime/server/tool_calls.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ft::server {
namespace {

constexpr ToolCallFormat kHermes = ToolCallFormat::kHermes;

// Content streamed plus the finish, and the calls, for `text` pushed in two parts cut at `cut`.
ParsedToolCalls stream_in_two(std::string_view text, size_t cut) {
  ToolCallStream stream(kHermes);
  ParsedToolCalls out;
  out.content = stream.push(text.substr(0, cut));
  std::vector<ToolCall> early = stream.take_calls();
  out.content += stream.push(text.substr(cut));
  out.content += stream.finish();
  out.calls = early;
  for (ToolCall& c : stream.take_calls()) out.calls.push_back(std::move(c));
  return out;
}

TEST(ToolCalls, HermesCallsAreCutOutWholeAndStreamed) {
  const std::string text =
      "Let me check both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n"
      "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
  ParsedToolCalls whole = parse_tool_calls(kHermes, text);
  EXPECT_EQ(whole.content, "Let me check both.");
  ASSERT_EQ(whole.calls.size(), 2u);
  EXPECT_EQ(whole.calls[0].name, "get_weather");
  EXPECT_EQ(nlohmann::json::parse(whole.calls[0].arguments), nlohmann::json({{"city", "Paris"}, {"days", 2}}));
  EXPECT_EQ(whole.calls[1].name, "get_time");
  EXPECT_EQ(whole.calls[1].arguments, "{}");
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    ParsedToolCalls streamed = stream_in_two(text, cut);
    // The text before the calls goes out whole, without the whitespace
    // before the first tag, and nothing of the tags leaks.
    EXPECT_EQ(streamed.content, "Let me check both.") << "cut at " << cut;
    ASSERT_EQ(streamed.calls.size(), 2u) << "cut at " << cut;
    EXPECT_EQ(streamed.calls[0].arguments, whole.calls[0].arguments);
  }
}

TEST(ToolCalls, ContentIsReleasedAsSoonAsItCannotStartACall) {
  ToolCallStream stream(kHermes);
  EXPECT_EQ(stream.push("Hello <tool"), "Hello");  // the space may precede a tag
  EXPECT_EQ(stream.push("box> and more"), " <toolbox> and more");
  EXPECT_EQ(stream.finish(), "");
  EXPECT_FALSE(stream.saw_calls());
}

TEST(ToolCalls, BadOrCutOffBlocksStayText) {
  ParsedToolCalls bad = parse_tool_calls(kHermes, "a <tool_call>not json</tool_call> b");
  EXPECT_TRUE(bad.calls.empty());
  EXPECT_EQ(bad.content, "a <tool_call>not json</tool_call> b");
  ParsedToolCalls nameless = parse_tool_calls(kHermes, "<tool_call>{\"arguments\": {}}</tool_call>");
  EXPECT_TRUE(nameless.calls.empty());
  // Cut off by max_tokens: a complete object still counts, a torn one stays text.
  ParsedToolCalls unclosed = parse_tool_calls(kHermes, "<tool_call>\n{\"name\": \"f\", \"parameters\": {\"x\": 1}}\n");
  ASSERT_EQ(unclosed.calls.size(), 1u);
  EXPECT_EQ(unclosed.calls[0].arguments, "{\"x\":1}");
  ParsedToolCalls torn = parse_tool_calls(kHermes, "<tool_call>\n{\"name\": \"f\", \"argu");
  EXPECT_TRUE(torn.calls.empty());
  EXPECT_EQ(torn.content, "<tool_call>\n{\"name\": \"f\", \"argu");
  // Arguments given as a JSON string pass through as that string.
  ParsedToolCalls string_args = parse_tool_calls(kHermes, "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"y\\\": 2}\"}</tool_call>");
  ASSERT_EQ(string_args.calls.size(), 1u);
  EXPECT_EQ(string_args.calls[0].arguments, "{\"y\": 2}");
}

TEST(ToolCalls, NoFormatPassesTextThrough) {
  ToolCallStream stream(ToolCallFormat::kNone);
  EXPECT_EQ(stream.push("<tool_call>{\"name\": \"f\"}</tool_call>"), "<tool_call>{\"name\": \"f\"}</tool_call>");
  EXPECT_EQ(stream.finish(), "");
  EXPECT_EQ(tool_call_format_of(nullptr), ToolCallFormat::kNone);
  auto plain = ChatTemplate::parse("{% for m in messages %}{{ m.content }}{% endfor %}");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(tool_call_format_of(&*plain), ToolCallFormat::kNone);
  auto hermes = ChatTemplate::parse("{% if tools %}<tool_call>{% endif %}");
  ASSERT_TRUE(hermes.ok());
  EXPECT_EQ(tool_call_format_of(&*hermes), kHermes);
}

}  // namespace
}  // namespace ft::server
