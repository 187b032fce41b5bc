#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "runtime/base/files.h"
#include "runtime/text/bpe_byte_level.h"
#include "runtime/text/tokenizer.h"
#include "tests/text_tokenizer/tokenizer_test_util.h"

namespace ft {
namespace {

using nlohmann::json;
using test::load_tokenizer;

// A tiny byte-level BPE: ids 0-255 are the bytes in order, then "aa", "ab",
// "aab"; two added tokens follow.
json tiny_tokenizer() {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[bytes_to_byte_level(std::string(1, static_cast<char>(b)))] = b;
  vocab["aa"] = 256;
  vocab["ab"] = 257;
  vocab["aab"] = 258;
  return json{
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({"a a", json::array({"a", "b"}), "aa b"})}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"added_tokens",
       json::array({{{"id", 259}, {"content", "<s>"}, {"special", true}},
                    {{"id", 260}, {"content", "<x>"}, {"special", false}}})},
  };
}

Tokenizer tiny(const std::string& config = "") {
  Result<Tokenizer> tokenizer = Tokenizer::from_hf_json(tiny_tokenizer().dump(), config);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().to_string();
  return std::move(tokenizer).value();
}

std::vector<int32_t> encode(const Tokenizer& tokenizer, const std::string& text, EncodeOptions options = {}) {
  Result<std::vector<int32_t>> ids = tokenizer.encode(text, options);
  EXPECT_TRUE(ids.ok()) << ids.status().to_string();
  return ids.ok() ? *ids : std::vector<int32_t>{};
}

TEST(TokenizerBpe, MergesLowestRankFirstAndLeftmostAmongEquals) {
  Tokenizer t = tiny();
  EXPECT_EQ(encode(t, "ab"), (std::vector<int32_t>{257}));
  // "a a" (rank 0) beats "a b" (rank 1), then "aa b" (rank 2) joins.
  EXPECT_EQ(encode(t, "aab"), (std::vector<int32_t>{258}));
  // Three a's: the leftmost pair merges first.
  EXPECT_EQ(encode(t, "aaa"), (std::vector<int32_t>{256, 'a'}));
  EXPECT_EQ(encode(t, "ba"), (std::vector<int32_t>{'b', 'a'}));
  EXPECT_EQ(encode(t, ""), (std::vector<int32_t>{}));
}

TEST(TokenizerBpe, AddedTokensAreSplitOut) {
  Tokenizer t = tiny();
  EXPECT_EQ(encode(t, "ab<s>ab<x>"), (std::vector<int32_t>{257, 259, 257, 260}));
  // As plain text, a special token is bytes again; a non-special one is not.
  std::vector<int32_t> plain = encode(t, "<s><x>", EncodeOptions{.parse_special = false});
  EXPECT_EQ(plain, (std::vector<int32_t>{'<', 's', '>', 260}));
  EXPECT_TRUE(t.is_special(259));
  EXPECT_FALSE(t.is_special(260));
  EXPECT_EQ(t.decode(std::vector<int32_t>{257, 259, 260}).value(), "ab<s><x>");
  EXPECT_EQ(t.decode(std::vector<int32_t>{257, 259, 260}, DecodeOptions{.skip_special = true}).value(), "ab<x>");
}

TEST(TokenizerBpe, ConfigAddsBos) {
  Tokenizer t = tiny(R"({"bos_token": "<s>", "add_bos_token": true, "eos_token": {"content": "<x>"}})");
  EXPECT_EQ(t.bos_id(), 259);
  EXPECT_EQ(t.eos_id(), 260);
  EXPECT_EQ(encode(t, "ab"), (std::vector<int32_t>{259, 257}));
  EXPECT_EQ(encode(t, "ab", EncodeOptions{.add_special = false}), (std::vector<int32_t>{257}));
}

TEST(TokenizerBpe, RejectsWhatItCannotTokenizeFaithfully) {
  json bad_merge = tiny_tokenizer();
  bad_merge["model"]["merges"].push_back("b c");  // "bc" is not in the vocabulary
  EXPECT_EQ(Tokenizer::from_hf_json(bad_merge.dump(), "").status().code(), ErrorCode::kCorrupt);

  json fallback = tiny_tokenizer();
  fallback["model"]["byte_fallback"] = true;
  EXPECT_EQ(Tokenizer::from_hf_json(fallback.dump(), "").status().code(), ErrorCode::kUnsupported);

  json unigram = tiny_tokenizer();
  unigram["model"]["type"] = "Unigram";
  EXPECT_EQ(Tokenizer::from_hf_json(unigram.dump(), "").status().code(), ErrorCode::kUnsupported);

  json missing_byte = tiny_tokenizer();
  missing_byte["model"]["vocab"].erase("z");
  EXPECT_EQ(Tokenizer::from_hf_json(missing_byte.dump(), "").status().code(), ErrorCode::kCorrupt);

  json lowercase = tiny_tokenizer();
  lowercase["normalizer"] = {{"type", "Lowercase"}};
  EXPECT_EQ(Tokenizer::from_hf_json(lowercase.dump(), "").status().code(), ErrorCode::kUnsupported);

  EXPECT_EQ(Tokenizer::from_hf_json("{not json", "").status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(Tokenizer::from_hf_json(R"({"model": 3})", "").status().code(), ErrorCode::kCorrupt);
  EXPECT_FALSE(Tokenizer::from_hf_path("/nonexistent/tokenizer/dir").ok());
}

TEST(TokenizerBpe, DecodeRejectsUnknownIds) {
  Tokenizer t = tiny();
  EXPECT_EQ(t.decode(std::vector<int32_t>{261}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(t.decode(std::vector<int32_t>{-1}).status().code(), ErrorCode::kInvalidArgument);
  StreamDecoder stream(t);
  EXPECT_FALSE(stream.push(999).ok());
}

TEST(TokenizerSpec, RefusesUnsupportedModels) {
  TokenizerSpec spec;
  spec.model = "llama";
  Status status = Tokenizer::from_spec(spec).status();
  EXPECT_EQ(status.code(), ErrorCode::kUnsupported);
  EXPECT_NE(status.message().find("not supported yet"), std::string::npos) << status.message();

  spec.model = "gpt2";
  spec.pre = "some-future-model";
  status = Tokenizer::from_spec(spec).status();
  EXPECT_EQ(status.code(), ErrorCode::kUnsupported);
  EXPECT_NE(status.message().find("some-future-model"), std::string::npos);

  spec.pre = "qwen2";
  spec.tokens = {"a"};
  spec.token_types = {1, 1};
  EXPECT_EQ(Tokenizer::from_spec(spec).status().code(), ErrorCode::kCorrupt);
}

TEST(TokenizerQwen3, SpecialTokensAsText) {
  const Tokenizer* t = load_tokenizer("qwen3");
  ASSERT_NE(t, nullptr);
  const std::string text = "<|im_start|>user\n<think>";
  std::vector<int32_t> parsed = encode(*t, text);
  std::vector<int32_t> plain = encode(*t, text, EncodeOptions{.parse_special = false});
  EXPECT_EQ(parsed.front(), t->token_id("<|im_start|>"));
  EXPECT_EQ(std::count(plain.begin(), plain.end(), t->token_id("<|im_start|>")), 0);
  // <think> is an added token but not a special one: it stays whole.
  EXPECT_EQ(plain.back(), t->token_id("<think>"));
  EXPECT_EQ(t->decode(plain).value(), text);
  EXPECT_EQ(t->eos_id(), t->token_id("<|im_end|>"));
  EXPECT_EQ(t->pad_id(), t->token_id("<|endoftext|>"));
  EXPECT_EQ(t->bos_id(), -1);
}

// An added token ends a byte sequence: the incomplete bytes before it come
// out as U+FFFD, as in a full decode.
TEST(TokenizerQwen3, StreamFlushesPartialBytesAtAddedToken) {
  const Tokenizer* t = load_tokenizer("qwen3");
  ASSERT_NE(t, nullptr);
  int32_t lead = t->token_id(bytes_to_byte_level("\xE4"));
  ASSERT_GE(lead, 0);
  int32_t end = t->token_id("<|endoftext|>");
  StreamDecoder stream(*t);
  EXPECT_EQ(stream.push(lead).value(), "");
  EXPECT_EQ(stream.push(end).value(), "\xEF\xBF\xBD<|endoftext|>");
  EXPECT_EQ(stream.push(lead).value(), "");
  EXPECT_EQ(stream.finish(), "\xEF\xBF\xBD");
  EXPECT_EQ(t->decode(std::vector<int32_t>{lead, end, lead}).value(),
            "\xEF\xBF\xBD<|endoftext|>\xEF\xBF\xBD");
}

TEST(TokenizerLlama3, BosFromConfigOverride) {
  Result<std::string> json_text = read_file(test::tokenizer_dir("llama3") + "/tokenizer.json");
  ASSERT_TRUE(json_text.ok());
  Result<Tokenizer> t =
      Tokenizer::from_hf_json(*json_text, R"({"bos_token": "<|begin_of_text|>", "add_bos_token": true})");
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  std::vector<int32_t> ids = encode(*t, "Hello");
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], 128000);
  EXPECT_EQ(t->decode(ids).value(), "<|begin_of_text|>Hello");
}

}  // namespace
}  // namespace ft
