// ChatTemplate: loading from tokenizer configs and model folders, template
// selection, the variables a template sees, message normalization, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/base/files.h"
#include "runtime/text/chat_template.h"

namespace ft {
namespace {

using json = nlohmann::ordered_json;
using ::testing::HasSubstr;

json user(const std::string& text) { return json::array({{{"role", "user"}, {"content", text}}}); }

std::string render_or_die(const ChatTemplate& t, const ChatRenderOptions& o) {
  auto out = t.render(o);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? *out : std::string();
}

class ChatTemplateFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = make_temp_dir("ft-chat-template");
    ASSERT_TRUE(d.ok());
    dir_ = *d;
  }
  void TearDown() override { EXPECT_TRUE(remove_tree(dir_).ok()); }
  void write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(write_file_atomic(dir_ + "/" + name, text.data(), text.size()).ok());
  }
  std::string dir_;
};

TEST(ChatTemplateConfig, StringTemplateAndSpecialTokens) {
  json config = {{"bos_token", {{"content", "<s>"}, {"lstrip", false}}},
                 {"eos_token", "</s>"},
                 {"pad_token", nullptr},
                 {"chat_template", "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}|{{ pad_token is defined }}"}};
  auto t = ChatTemplate::from_tokenizer_config(config);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  ChatRenderOptions o;
  o.messages = user("hi");
  EXPECT_EQ(render_or_die(*t, o), "<s>hi</s>|False");
  o.bos_token = "[B]";
  EXPECT_EQ(render_or_die(*t, o), "[B]hi</s>|False");
  EXPECT_EQ(t->names(), std::vector<std::string>{"default"});
}

TEST(ChatTemplateConfig, NamedTemplatesPickToolUseWhenToolsAreGiven) {
  json config = {{"chat_template",
                  {{{"name", "default"}, {"template", "plain"}}, {{"name", "tool_use"}, {"template", "tools:{{ tools | length }}"}}}}};
  auto t = ChatTemplate::from_tokenizer_config(config);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  ChatRenderOptions o;
  o.messages = user("x");
  EXPECT_EQ(render_or_die(*t, o), "plain");
  o.tools = json::array({{{"type", "function"}, {"function", {{"name", "f"}}}}});
  EXPECT_EQ(render_or_die(*t, o), "tools:1");
  ASSERT_NE(t->source("tool_use"), nullptr);
  EXPECT_EQ(*t->source("tool_use"), "tools:{{ tools | length }}");
  EXPECT_EQ(t->source("missing"), nullptr);

  json no_default = {{"chat_template", {{{"name", "rag"}, {"template", "r"}}, {{"name", "tool_use"}, {"template", "t"}}}}};
  auto nd = ChatTemplate::from_tokenizer_config(no_default);
  ASSERT_TRUE(nd.ok());
  ChatRenderOptions plain;
  plain.messages = user("x");
  EXPECT_FALSE(nd->render(plain).ok());
}

TEST(ChatTemplateConfig, MissingOrMalformedTemplateIsAnError) {
  EXPECT_EQ(ChatTemplate::from_tokenizer_config(json::object()).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(ChatTemplate::from_tokenizer_config({{"chat_template", 5}}).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(ChatTemplate::from_tokenizer_config({{"chat_template", {{{"name", "x"}}}}}).status().code(),
            ErrorCode::kCorrupt);
}

TEST(ChatTemplateRender, VariablesAsTransformersPassesThem) {
  auto t = ChatTemplate::parse(
      "{{ tools is none }} {{ enable_thinking is defined }} {{ add_generation_prompt }} {{ date_string }}");
  ASSERT_TRUE(t.ok());
  ChatRenderOptions o;
  o.messages = user("x");
  o.extra = {{"date_string", "01 Jan 2025"}};
  EXPECT_EQ(render_or_die(*t, o), "True False True 01 Jan 2025");
  o.enable_thinking = false;
  o.add_generation_prompt = false;
  o.tools = json::array();
  EXPECT_EQ(render_or_die(*t, o), "False True False 01 Jan 2025");
}

TEST(ChatTemplateRender, NormalizesOpenAiMessages) {
  json messages = json::parse(R"([
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "c"}]},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{\"z\": 1, \"a\": [2]}"}},
      {"id": "2", "type": "function", "function": {"name": "g", "arguments": "not json"}}]}
  ])");
  json n = ChatTemplate::normalize_messages(messages);
  EXPECT_EQ(n[0]["content"], "a\nb");
  EXPECT_TRUE(n[1]["content"].is_array());
  EXPECT_EQ(n[2]["content"], "");
  EXPECT_EQ(n[2]["tool_calls"][0]["function"]["arguments"].dump(), R"({"z":1,"a":[2]})");
  EXPECT_EQ(n[2]["tool_calls"][1]["function"]["arguments"], "not json");

  auto t = ChatTemplate::parse("{% for m in messages %}{{ m.content is string }}{% endfor %}"
                               "{{ messages[2].tool_calls[0].function.arguments | tojson }}");
  ASSERT_TRUE(t.ok());
  ChatRenderOptions o;
  o.messages = messages;
  EXPECT_EQ(render_or_die(*t, o), "TrueFalseTrue{\"z\": 1, \"a\": [2]}");
  o.normalize = false;
  EXPECT_EQ(render_or_die(*t, o), "FalseFalseFalse\"{\\\"z\\\": 1, \\\"a\\\": [2]}\"");
}

TEST(ChatTemplateRender, ErrorsNameTemplateAndLine) {
  auto bad = ChatTemplate::parse("ok\n{% for m in messages %}\n{{ m.content }");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("line 3"));

  auto t = ChatTemplate::parse("{% if messages[0].role != 'user' %}\n  {{ raise_exception('first must be user') }}\n{% endif %}");
  ASSERT_TRUE(t.ok());
  ChatRenderOptions o;
  o.messages = json::array({{{"role", "assistant"}, {"content", "x"}}});
  auto out = t->render(o);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("chat template 'default'"));
  EXPECT_THAT(out.status().message(), HasSubstr("line 2"));
  EXPECT_THAT(out.status().message(), HasSubstr("first must be user"));
  o.messages = json::object();
  EXPECT_FALSE(t->render(o).ok());
}

TEST_F(ChatTemplateFiles, LoadsFolderPreferringChatTemplateJinja) {
  write("tokenizer_config.json", R"({"bos_token": "<B>", "chat_template": "from config"})");
  auto from_config = ChatTemplate::load(dir_);
  ASSERT_TRUE(from_config.ok()) << from_config.status().to_string();
  ChatRenderOptions o;
  o.messages = user("x");
  EXPECT_EQ(render_or_die(*from_config, o), "from config");

  write("chat_template.jinja", "{{ bos_token }}from jinja file\n");
  auto from_file = ChatTemplate::load(dir_);
  ASSERT_TRUE(from_file.ok()) << from_file.status().to_string();
  EXPECT_EQ(render_or_die(*from_file, o), "<B>from jinja file");

  auto direct = ChatTemplate::load(dir_ + "/tokenizer_config.json");
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(render_or_die(*direct, o), "from config");
  auto raw = ChatTemplate::load(dir_ + "/chat_template.jinja");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(render_or_die(*raw, o), "from jinja file");
}

TEST_F(ChatTemplateFiles, LoadErrorsNameThePath) {
  auto missing = ChatTemplate::load(dir_ + "/nope.json");
  EXPECT_FALSE(missing.ok());
  write("broken.json", "{not json");
  auto broken = ChatTemplate::load(dir_ + "/broken.json");
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.status().message(), HasSubstr("broken.json"));
  auto empty_dir = ChatTemplate::load(dir_);
  ASSERT_FALSE(empty_dir.ok());
  EXPECT_THAT(empty_dir.status().message(), HasSubstr("no chat_template"));
}

TEST(ChatTemplateGguf, NamedVariantsAndMissingTemplate) {
  auto t = ChatTemplate::from_gguf("D", {{"tool_use", "T"}});
  ASSERT_TRUE(t.ok());
  ChatRenderOptions o;
  o.messages = user("x");
  EXPECT_EQ(render_or_die(*t, o), "D");
  o.tools = json::array();
  EXPECT_EQ(render_or_die(*t, o), "T");
  EXPECT_EQ(ChatTemplate::from_gguf("", {}).status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace ft
