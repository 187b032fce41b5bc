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

TEST(ToolCalls, Llama3JsonAnswersAreCalls) {
  constexpr ToolCallFormat kLlama3 = ToolCallFormat::kLlama3Json;
  ParsedToolCalls one = parse_tool_calls(kLlama3, " {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}");
  ASSERT_EQ(one.calls.size(), 1u);
  EXPECT_EQ(one.calls[0].name, "get_weather");
  EXPECT_EQ(one.calls[0].arguments, "{\"city\":\"Paris\"}");
  EXPECT_EQ(one.content, "");
  // Several joined by ';', one with a ';' inside a string, and a trailing ';'.
  ParsedToolCalls two = parse_tool_calls(
      kLlama3, "{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {\"x\": \"1;2\"}};");
  ASSERT_EQ(two.calls.size(), 2u);
  EXPECT_EQ(two.calls[1].name, "b");
  EXPECT_EQ(two.calls[1].arguments, "{\"x\":\"1;2\"}");
  // Text, or JSON that is no call, stays content.
  EXPECT_TRUE(parse_tool_calls(kLlama3, "Sure: {\"name\": \"a\", \"parameters\": {}}").calls.empty());
  ParsedToolCalls not_call = parse_tool_calls(kLlama3, "{\"answer\": 42}");
  EXPECT_TRUE(not_call.calls.empty());
  EXPECT_EQ(not_call.content, "{\"answer\": 42}");

  // Streamed: text goes out at once (after the leading whitespace settles
  // what it is); an answer that opens with '{' waits for the end.
  ToolCallStream text(kLlama3);
  EXPECT_EQ(text.push("  "), "");
  EXPECT_EQ(text.push("Hi"), "  Hi");
  EXPECT_EQ(text.push(" there"), " there");
  EXPECT_EQ(text.finish(), "");
  ToolCallStream call(kLlama3);
  EXPECT_EQ(call.push("{\"name\": \"f\", "), "");
  EXPECT_EQ(call.push("\"parameters\": {\"k\": 1}}"), "");
  EXPECT_TRUE(call.take_calls().empty());
  EXPECT_EQ(call.finish(), "");
  EXPECT_TRUE(call.saw_calls());
  ASSERT_EQ(call.take_calls().size(), 1u);

  auto llama = ChatTemplate::parse("{{ '<|python_tag|>' }}{\"name\": \"x\", \"parameters\": {}}");
  ASSERT_TRUE(llama.ok()) << llama.status().to_string();
  EXPECT_EQ(tool_call_format_of(&*llama), kLlama3);
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

namespace ft::server {
namespace {

// A forced call's opening, and what the parser makes of it once the model's
// continuation closes it.
TEST(ToolCalls, ForcedCallOpenings) {
  EXPECT_FALSE(forced_call(ToolCallFormat::kNone, "f"));
  std::optional<ForcedCall> hermes = forced_call(kHermes, "get \"x\"");
  ASSERT_TRUE(hermes);
  EXPECT_EQ(hermes->json, R"({"name": "get \"x\"", "arguments": {)");  // the name JSON-escaped
  EXPECT_EQ(hermes->tag, "<tool_call>\n");
  ParsedToolCalls parsed = parse_tool_calls(kHermes, hermes->tag + hermes->json + R"("a": 1}})");  // no closing tag: cut off at the end
  ASSERT_EQ(parsed.calls.size(), 1u);
  EXPECT_EQ(parsed.calls[0].name, "get \"x\"");
  EXPECT_EQ(parsed.calls[0].arguments, R"({"a":1})");
  EXPECT_EQ(parsed.content, "");

  // A named function's call schema: its name, its parameters as the arguments, their $defs at the root.
  const CallableFunction f{"f", R"({"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "$defs": {"P": {"type": "string"}}})"};
  std::optional<ForcedCall> typed = forced_call(kHermes, "f", std::span(&f, 1));
  ASSERT_TRUE(typed);
  EXPECT_EQ(typed->tag, "<tool_call>\n");
  const nlohmann::json call = nlohmann::json::parse(typed->schema);
  EXPECT_EQ(call["properties"]["name"]["const"], "f");
  EXPECT_EQ(call["properties"]["arguments"]["properties"]["p"]["$ref"], "#/$defs/P");
  EXPECT_FALSE(call["properties"]["arguments"].contains("$defs"));
  EXPECT_EQ(call["$defs"]["P"]["type"], "string");
  EXPECT_EQ(call["required"], nlohmann::json({"name", "arguments"}));
  EXPECT_TRUE(forced_call(kHermes, "")->schema.empty());  // no functions: no schema

  // "required": the union of every tool's call, told apart by the name; none
  // where a tool's parameters bring definitions of their own.
  const std::vector<CallableFunction> tools = {
      {"a", R"({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})"}, {"b", ""}};
  std::optional<ForcedCall> any = forced_call(kHermes, "", tools);
  ASSERT_TRUE(any);
  EXPECT_EQ(any->json, R"({"name": ")");
  const nlohmann::json u = nlohmann::json::parse(any->schema);
  ASSERT_EQ(u["anyOf"].size(), 2u);
  EXPECT_EQ(u["anyOf"][0]["properties"]["name"]["const"], "a");
  EXPECT_EQ(u["anyOf"][0]["properties"]["arguments"]["required"], nlohmann::json({"x"}));
  EXPECT_EQ(u["anyOf"][1]["properties"]["name"]["const"], "b");
  EXPECT_EQ(u["anyOf"][1]["properties"]["arguments"], nlohmann::json({{"type", "object"}}));  // no parameters: any object
  const std::vector<CallableFunction> with_defs = {tools[0], f};
  EXPECT_TRUE(forced_call(kHermes, "", with_defs)->schema.empty());

  std::optional<ForcedCall> llama = forced_call(ToolCallFormat::kLlama3Json, "");
  ASSERT_TRUE(llama);
  EXPECT_EQ(llama->json, R"({"name": ")");
  EXPECT_EQ(llama->tag, "");
  parsed = parse_tool_calls(ToolCallFormat::kLlama3Json, llama->tag + llama->json + R"(f", "parameters": {"b": [true]}})");
  ASSERT_EQ(parsed.calls.size(), 1u);
  EXPECT_EQ(parsed.calls[0].name, "f");
  EXPECT_EQ(parsed.calls[0].arguments, R"({"b":[true]})");
}

}  // namespace
}  // namespace ft::server

namespace ft::server {
namespace {

TEST(ToolCalls, MistralListsAreCalls) {
  constexpr ToolCallFormat kMistral = ToolCallFormat::kMistral;
  // The marker is a special token, skipped when decoding; the list is the answer.
  ParsedToolCalls two = parse_tool_calls(
      kMistral, R"( [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {}}])");
  ASSERT_EQ(two.calls.size(), 2u);
  EXPECT_EQ(two.calls[0].name, "get_weather");
  EXPECT_EQ(two.calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(two.calls[1].name, "get_time");
  EXPECT_EQ(two.content, "");
  // With the marker decoded as text, the same.
  ParsedToolCalls marked = parse_tool_calls(kMistral, R"([TOOL_CALLS] [{"name": "f", "arguments": {"x": 1}}])");
  ASSERT_EQ(marked.calls.size(), 1u);
  EXPECT_EQ(marked.calls[0].name, "f");
  // Lists that are not calls, and text, stay content.
  for (const char* text : {"[1, 2, 3]", "[]", R"([{"name": "f"}, 7])", "The list: [1]", R"([{"name": "f", )"}) {
    ParsedToolCalls p = parse_tool_calls(kMistral, text);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  // Streamed: an answer that opens with '[' is held to the end.
  ToolCallStream stream(kMistral);
  EXPECT_EQ(stream.push(" [{\"name\": \"f\", "), "");
  EXPECT_EQ(stream.push("\"arguments\": {}}]"), "");
  EXPECT_EQ(stream.finish(), "");
  EXPECT_EQ(stream.take_calls().size(), 1u);
  ToolCallStream text(kMistral);
  EXPECT_EQ(text.push("Hello"), "Hello");

  auto mistral = ChatTemplate::parse("{% if tools %}[AVAILABLE_TOOLS]{% endif %}{{ '[TOOL_CALLS]' }}");
  ASSERT_TRUE(mistral.ok()) << mistral.status().to_string();
  EXPECT_EQ(tool_call_format_of(&*mistral), kMistral);
  EXPECT_TRUE(wants_short_call_ids(kMistral));
  EXPECT_FALSE(wants_short_call_ids(kHermes));
  EXPECT_FALSE(forced_call(kMistral, "f"));  // JSON mode holds objects, not lists
}

}  // namespace
}  // namespace ft::server
