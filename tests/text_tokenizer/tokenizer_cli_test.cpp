// ft-model tokenize / detokenize, run as processes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "runtime/base/files.h"
#include "tests/text_tokenizer/tokenizer_test_util.h"

namespace ft::test {
namespace {

std::string ft_model_path() {
  const char* dir = std::getenv("FT_BIN_DIR");
  return std::string(dir != nullptr ? dir : FT_BINARY_DIR "/bin") + "/ft-model";
}

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::istringstream in(text);
  int32_t id;
  while (in >> id) ids.push_back(id);
  return ids;
}

class TokenizerCliTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // tests/text_tokenizer/CMakeLists.txt builds ft-model with this test.
    ASSERT_TRUE(std::filesystem::exists(ft_model_path())) << ft_model_path() << " is not built";
  }
};

TEST_P(TokenizerCliTest, TokenizeAndDetokenize) {
  const Tokenizer* tokenizer = load_tokenizer(GetParam());
  ASSERT_NE(tokenizer, nullptr);
  const std::string text = "Hello <|im_start|>wörld 12345 😀\n  x";
  std::vector<int32_t> expected = tokenizer->encode(text).value();
  std::string model = shell_quote(tokenizer_dir(GetParam()));

  CommandResult plain = run_command(ft_model_path() + " tokenize --model " + model + " " + shell_quote(text));
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(parse_ids(plain.output), expected);

  // The tokenizer.json path works as well as its folder.
  CommandResult json_out = run_command(ft_model_path() + " tokenize --json --model " +
                                       shell_quote(tokenizer_dir(GetParam()) + "/tokenizer.json") + " " +
                                       shell_quote(text));
  ASSERT_EQ(json_out.exit_code, 0) << json_out.output;
  nlohmann::json parsed = nlohmann::json::parse(json_out.output, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << json_out.output;
  EXPECT_EQ(parsed["ids"].get<std::vector<int32_t>>(), expected);
  ASSERT_EQ(parsed["tokens"].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(parsed["tokens"][i].get<std::string>(), tokenizer->token_string(expected[i]));
  }

  std::string id_args;
  for (int32_t id : expected) {
    id_args += ' ';
    id_args += std::to_string(id);
  }
  CommandResult back = run_command(ft_model_path() + " detokenize --model " + model + id_args);
  ASSERT_EQ(back.exit_code, 0) << back.output;
  // SentencePiece-style: a BOS in front, and the space encode put after it.
  const std::string bos = tokenizer->bos_id() >= 0 && expected.front() == tokenizer->bos_id()
                              ? tokenizer->token_string(tokenizer->bos_id()) + (GetParam() == "llama2" ? " " : "")
                              : "";
  EXPECT_EQ(back.output, bos + text + "\n");
}

TEST_P(TokenizerCliTest, NoSpecialEncodesMarkersAsText) {
  const Tokenizer* tokenizer = load_tokenizer(GetParam());
  ASSERT_NE(tokenizer, nullptr);
  const std::string text = GetParam() == "qwen3"    ? "<|im_start|>"
                           : GetParam() == "llama3" ? "<|begin_of_text|>"
                           : GetParam() == "llama2" ? "</s>"
                                                    : "<eos>";
  std::string model = shell_quote(tokenizer_dir(GetParam()));
  CommandResult out =
      run_command(ft_model_path() + " tokenize --no-special --model " + model + " " + shell_quote(text));
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(parse_ids(out.output), tokenizer->encode(text, EncodeOptions{.parse_special = false}).value());
  EXPECT_GT(parse_ids(out.output).size(), 1u);
}

TEST_P(TokenizerCliTest, ErrorsAreClear) {
  std::string model = shell_quote(tokenizer_dir(GetParam()));
  CommandResult bad_id = run_command(ft_model_path() + " detokenize --model " + model + " 99999999");
  EXPECT_NE(bad_id.exit_code, 0);
  EXPECT_NE(bad_id.output.find("99999999"), std::string::npos) << bad_id.output;

  CommandResult not_number = run_command(ft_model_path() + " detokenize --model " + model + " 12x");
  EXPECT_NE(not_number.exit_code, 0);

  CommandResult missing = run_command(ft_model_path() + " tokenize --model /nonexistent/dir hello");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("/nonexistent/dir"), std::string::npos) << missing.output;

  CommandResult no_model = run_command(ft_model_path() + " tokenize hello");
  EXPECT_NE(no_model.exit_code, 0);
}

// A GGUF written by ft-model synth carries the tokenizer as tokenizer.ggml.*
// keys; tokenizing through it must give the ids of tokenizer.json.
TEST_P(TokenizerCliTest, GgufModelTokenizesLikeTokenizerJson) {
  const Tokenizer* tokenizer = load_tokenizer(GetParam());
  ASSERT_NE(tokenizer, nullptr);
  Result<std::string> dir = make_temp_dir("ft-tokenizer-cli");
  ASSERT_TRUE(dir.ok());
  std::string gguf = *dir + "/tiny.gguf";
  CommandResult synth = run_command(
      ft_model_path() + " synth --arch " + (GetParam() == "qwen3" ? "qwen3" : "llama") +
      " --layers 1 --hidden 64 --intermediate 64 --heads 1 --kv-heads 1 --head-dim 64 --vocab-from " +
      shell_quote(tokenizer_dir(GetParam()) + "/tokenizer.json") + " --tokenizer-config " +
      shell_quote(tokenizer_dir(GetParam()) + "/tokenizer_config.json") + " -o " + shell_quote(gguf));
  ASSERT_EQ(synth.exit_code, 0) << synth.output;
  for (const std::string text : {"Hello <|im_start|>wörld 12345 <think> café 😀", "<|begin_of_text|>x\n\n  y",
                                 "def f(x):\n\treturn x  # 1234567"}) {
    CommandResult out = run_command(ft_model_path() + " tokenize --model " + shell_quote(gguf) + " " + shell_quote(text));
    ASSERT_EQ(out.exit_code, 0) << out.output;
    EXPECT_EQ(parse_ids(out.output), tokenizer->encode(text).value()) << text;
  }
  (void)remove_tree(*dir);
}

INSTANTIATE_TEST_SUITE_P(Real, TokenizerCliTest, ::testing::Values("qwen3", "llama3", "llama2", "gemma"));

}  // namespace
}  // namespace ft::test
