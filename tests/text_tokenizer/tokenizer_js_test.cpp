// The C++ tokenizer against @lenml/tokenizers (node) on the real Qwen3 and
// Llama-3 tokenizer files: identical ids and identical decoded text for every
// corpus string.
//
// Invalid UTF-8: JS (like HF's Rust and Python tokenizers) only sees Unicode
// strings, so a caller must first turn bytes into a string; the usual way
// (TextDecoder, from_utf8_lossy, errors="replace") replaces each maximal
// ill-formed subpart with U+FFFD. Our encode does that replacement itself, so
// the C++ side gets the raw bytes and the JS side the replaced string, and the
// ids must still match.
//
// The corpus keeps out U+0085 (NEL), which JS regexes do not count as `\s`
// while PCRE2 and HF's Oniguruma do (see pretokenizer.h), and characters
// assigned after Unicode 14 (PCRE2's tables) but known to node's ICU.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "runtime/base/files.h"
#include "runtime/model/tokenizer_gguf.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/utf8.h"
#include "runtime/text/utf8_nfc.h"
#include "tests/text_tokenizer/tokenizer_test_util.h"

namespace ft::test {
namespace {

std::string printable(const std::string& s) { return nlohmann::json(utf8_sanitize(s)).dump().substr(0, 200); }

class TokenizerJsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerJsTest, EncodeAndDecodeMatchJs) {
  const Tokenizer* tokenizer = load_tokenizer(GetParam());
  ASSERT_NE(tokenizer, nullptr);
  std::vector<std::string> corpus = make_corpus();
  std::vector<std::string> js_input;
  for (const std::string& text : corpus) js_input.push_back(utf8_sanitize(text));
  std::vector<JsResult> js = run_js_tokenizer(GetParam(), js_input);
  ASSERT_EQ(js.size(), corpus.size());

  int mismatches = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    Result<std::vector<int32_t>> ids = tokenizer->encode(corpus[i]);
    ASSERT_TRUE(ids.ok()) << ids.status().to_string();
    EXPECT_EQ(*ids, js[i].ids) << "text " << i << ": " << printable(corpus[i]);
    Result<std::string> decoded = tokenizer->decode(*ids);
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_EQ(*decoded, js[i].decoded) << "text " << i << ": " << printable(corpus[i]);
    // Decode gives back the text, up to the replacement of invalid bytes and
    // (for tokenizers with an NFC normalizer) normalization, when encode adds
    // no BOS (the corpus has no SentencePiece special tokens, after which
    // those tokenizers add a space).
    Result<std::vector<int32_t>> plain = tokenizer->encode(corpus[i], EncodeOptions{.add_special = false});
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(utf8_nfc(tokenizer->decode(*plain).value()), utf8_nfc(js_input[i])) << "text " << i;
    if (*ids != js[i].ids && ++mismatches > 10) FAIL() << "stopping after 10 mismatches";
  }
}

// Streaming decode token by token: every chunk is whole code points, and the
// chunks add up to the full decode.
TEST_P(TokenizerJsTest, StreamDecodeMatchesDecode) {
  const Tokenizer* tokenizer = load_tokenizer(GetParam());
  ASSERT_NE(tokenizer, nullptr);
  int split_code_points = 0;
  for (const std::string& text : make_corpus()) {
    Result<std::vector<int32_t>> ids = tokenizer->encode(text);
    ASSERT_TRUE(ids.ok());
    StreamDecoder stream(*tokenizer);
    std::string joined;
    for (int32_t id : *ids) {
      Result<std::string> chunk = stream.push(id);
      ASSERT_TRUE(chunk.ok()) << chunk.status().to_string();
      EXPECT_TRUE(utf8_is_valid(*chunk)) << printable(text);
      if (tokenizer->token_bytes(id).size() > 0 && !utf8_is_valid(tokenizer->token_bytes(id))) ++split_code_points;
      joined += *chunk;
    }
    joined += stream.finish();
    Result<std::string> full = tokenizer->decode(*ids);
    ASSERT_TRUE(full.ok());
    EXPECT_EQ(joined, *full) << printable(text);
  }
  // The corpus must exercise tokens that end inside a code point.
  EXPECT_GT(split_code_points, 0);
}

bool is_sentencepiece(const std::string& name) { return name == "llama2" || name == "gemma"; }

// The tokenizer.ggml.* values ft-model convert writes for a tokenizer.json,
// read back as the GGUF reader fills TokenizerSpec.
TokenizerSpec spec_from_converter(const std::string& name) {
  TokenizerSources sources;
  sources.tokenizer_json = read_file(tokenizer_dir(name) + "/tokenizer.json").value();
  sources.tokenizer_config_json = read_file(tokenizer_dir(name) + "/tokenizer_config.json").value();
  Result<TokenizerMetadata> meta = tokenizer_metadata_from_hf(sources);
  EXPECT_TRUE(meta.ok()) << meta.status().to_string();
  TokenizerSpec spec;
  if (!meta.ok()) return spec;
  for (const auto& [key, value] : meta->keys) {
    const GgufArray* array = value.array();
    if (key == "tokenizer.ggml.model") spec.model = *value.get_if<std::string>();
    if (key == "tokenizer.ggml.tokens") spec.tokens = *array->as<std::string>();
    if (key == "tokenizer.ggml.scores") spec.scores = *array->as<float>();
    if (key == "tokenizer.ggml.token_type") spec.token_types = *array->as<int32_t>();
    if (key == "tokenizer.ggml.add_space_prefix") spec.add_space_prefix = *value.get_if<bool>();
    if (key == "tokenizer.ggml.add_bos_token") spec.add_bos = *value.get_if<bool>();
    if (key == "tokenizer.ggml.bos_token_id") spec.bos_id = static_cast<int32_t>(value.to_int().value());
    if (key == "tokenizer.ggml.eos_token_id") spec.eos_id = static_cast<int32_t>(value.to_int().value());
    if (key == "tokenizer.ggml.unknown_token_id") spec.unk_id = static_cast<int32_t>(value.to_int().value());
  }
  return spec;
}

// A byte-level tokenizer's vocabulary and merges as GGUF keeps them.
TokenizerSpec byte_level_spec(const std::string& name, const Tokenizer& json_tokenizer) {
  TokenizerSpec spec;
  spec.model = "gpt2";
  spec.pre = name == "qwen3" ? "qwen2" : "llama-bpe";
  for (int32_t id = 0; id < json_tokenizer.vocab_size(); ++id) {
    spec.tokens.push_back(json_tokenizer.token_string(id));
    const AddedToken* added = json_tokenizer.added_token(id);
    spec.token_types.push_back(added == nullptr  ? TokenizerSpec::kNormal
                               : added->special ? TokenizerSpec::kControl
                                                : TokenizerSpec::kUserDefined);
  }
  const nlohmann::json root = nlohmann::json::parse(read_file(tokenizer_dir(name) + "/tokenizer.json").value());
  for (const auto& merge : root["model"]["merges"]) {
    spec.merges.push_back(merge.is_array() ? merge[0].get<std::string>() + " " + merge[1].get<std::string>()
                                           : merge.get<std::string>());
  }
  spec.bos_id = json_tokenizer.bos_id();
  spec.eos_id = json_tokenizer.eos_id();
  return spec;
}

// The GGUF path: the same vocabulary given as TokenizerSpec values (as the
// GGUF reader fills them) must tokenize exactly like tokenizer.json. For
// SentencePiece-style tokenizers the values are what ft-model convert writes
// (scores from the merge ranks, no merges), tokenized llama.cpp's way.
TEST_P(TokenizerJsTest, SpecFromGgufValuesMatchesJson) {
  const Tokenizer* json_tokenizer = load_tokenizer(GetParam());
  ASSERT_NE(json_tokenizer, nullptr);
  TokenizerSpec spec;
  if (is_sentencepiece(GetParam())) {
    spec = spec_from_converter(GetParam());
    EXPECT_EQ(spec.model, "llama");
    EXPECT_EQ(spec.add_space_prefix, GetParam() == "llama2");
    EXPECT_EQ(json_tokenizer->prepends_space_marker(), GetParam() == "llama2");
    EXPECT_EQ(json_tokenizer->byte_fallback_value(json_tokenizer->token_id("<0x0A>")), 10);
    EXPECT_EQ(json_tokenizer->byte_fallback_value(json_tokenizer->token_id("<0xFF>")), 255);
    EXPECT_EQ(json_tokenizer->byte_fallback_value(json_tokenizer->token_id("\u2581the")), -1);
  } else {
    EXPECT_FALSE(json_tokenizer->prepends_space_marker());
    EXPECT_EQ(json_tokenizer->byte_fallback_value(json_tokenizer->token_id("A")), -1);
    spec = byte_level_spec(GetParam(), *json_tokenizer);
  }
  Result<Tokenizer> spec_tokenizer = Tokenizer::from_spec(spec);
  ASSERT_TRUE(spec_tokenizer.ok()) << spec_tokenizer.status().to_string();
  EXPECT_EQ(spec_tokenizer->vocab_size(), json_tokenizer->vocab_size());
  EXPECT_EQ(spec_tokenizer->bos_id(), json_tokenizer->bos_id());
  int mismatches = 0;
  for (const std::string& text : make_corpus()) {
    Result<std::vector<int32_t>> a = json_tokenizer->encode(text);
    Result<std::vector<int32_t>> b = spec_tokenizer->encode(text);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b) << printable(text);
    EXPECT_EQ(spec_tokenizer->decode(*b).value(), json_tokenizer->decode(*a).value());
    if (*a != *b && ++mismatches > 10) FAIL() << "stopping after 10 mismatches";
  }
}

// Encoding from several threads at once (sharing the piece cache) gives the
// same ids as encoding alone.
TEST_P(TokenizerJsTest, ConcurrentEncodeIsConsistent) {
  const Tokenizer* tokenizer = load_tokenizer(GetParam());
  ASSERT_NE(tokenizer, nullptr);
  std::vector<std::string> corpus = make_corpus();
  std::vector<std::vector<int32_t>> expected;
  for (const std::string& text : corpus) expected.push_back(tokenizer->encode(text).value());
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        for (size_t i = 0; i < corpus.size(); ++i) {
          size_t k = (i * 7 + t + round) % corpus.size();
          Result<std::vector<int32_t>> ids = tokenizer->encode(corpus[k]);
          if (!ids.ok() || *ids != expected[k]) ++failures[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

INSTANTIATE_TEST_SUITE_P(Real, TokenizerJsTest, ::testing::Values("qwen3", "llama3", "llama2", "gemma"));

}  // namespace
}  // namespace ft::test
