#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
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
  spec.model = "bert";
  Status status = Tokenizer::from_spec(spec).status();
  EXPECT_EQ(status.code(), ErrorCode::kUnsupported);
  EXPECT_NE(status.message().find("\"bert\" is not supported"), std::string::npos) << status.message();

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

// A tiny SentencePiece-style vocabulary as GGUF stores it: <unk>, <s>,
// </s>, the 256 byte tokens (ids 3-258), then pieces with scores.
TokenizerSpec tiny_sentencepiece() {
  TokenizerSpec spec;
  spec.model = "llama";
  auto add = [&](std::string text, float score, int32_t type) {
    spec.tokens.push_back(std::move(text));
    spec.scores.push_back(score);
    spec.token_types.push_back(type);
  };
  add("<unk>", 0, TokenizerSpec::kUnknown);
  add("<s>", 0, TokenizerSpec::kControl);
  add("</s>", 0, TokenizerSpec::kControl);
  for (int b = 0; b < 256; ++b) add(fmt::format("<0x{:02X}>", b), 0, TokenizerSpec::kByte);
  const std::string sp = "\u2581";
  add(sp, -1, TokenizerSpec::kNormal);         // 259
  add("a", -2, TokenizerSpec::kNormal);        // 260
  add("b", -3, TokenizerSpec::kNormal);        // 261
  add("c", -4, TokenizerSpec::kNormal);        // 262
  add("ab", -10, TokenizerSpec::kNormal);      // 263
  add("bc", -5, TokenizerSpec::kNormal);       // 264
  add(sp + "a", -20, TokenizerSpec::kNormal);  // 265
  add(sp + sp, -7, TokenizerSpec::kNormal);    // 266
  add("aa", -6, TokenizerSpec::kNormal);       // 267
  spec.unk_id = 0;
  spec.bos_id = 1;
  spec.eos_id = 2;
  spec.add_bos = true;
  return spec;
}

// Hand-worked: the pair whose joined piece scores best merges first (bc
// before ab), the leftmost of equal pairs (aa|a), a space in front of each
// text section, bytes for a character with no piece, and decode drops the
// space it added unless the ids continue a text.
TEST(TokenizerSpec, SentencePieceMergesByScoreWithByteFallback) {
  Result<Tokenizer> t = Tokenizer::from_spec(tiny_sentencepiece());
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->encode("abc").value(), (std::vector<int32_t>{1, 265, 264}));
  EXPECT_EQ(t->encode("aaa").value(), (std::vector<int32_t>{1, 259, 267, 260}));
  EXPECT_EQ(t->encode("a b").value(), (std::vector<int32_t>{1, 265, 259, 261}));
  EXPECT_EQ(t->encode("a</s>b").value(), (std::vector<int32_t>{1, 265, 2, 259, 261}));
  EXPECT_EQ(t->encode("\xC3\xA9").value(), (std::vector<int32_t>{1, 259, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(t->encode("").value(), (std::vector<int32_t>{1}));

  EXPECT_EQ(t->decode(std::vector<int32_t>{265, 264}).value(), "abc");
  EXPECT_EQ(t->decode(std::vector<int32_t>{1, 265, 264}).value(), "<s> abc");
  EXPECT_EQ(t->decode(std::vector<int32_t>{1, 265, 264}, DecodeOptions{.skip_special = true}).value(), "abc");
  EXPECT_EQ(t->decode(std::vector<int32_t>{265, 264}, DecodeOptions{.continuation = true}).value(), " abc");
  EXPECT_EQ(t->decode(std::vector<int32_t>{259, 3 + 0xC3, 3 + 0xA9}).value(), "\xC3\xA9");
  EXPECT_EQ(t->token_string(265), "\u2581a");
  EXPECT_EQ(t->token_bytes(265), " a");
  EXPECT_EQ(t->token_bytes(3 + 0x41), "A");
  EXPECT_EQ(t->token_id("\u2581a"), 265);
  EXPECT_TRUE(t->is_special(0));  // <unk>, as HF's files mark it

  // Streaming: the first space goes only at the start of a whole text.
  StreamDecoder whole(*t);
  EXPECT_EQ(whole.push(265).value(), "a");
  EXPECT_EQ(whole.push(259).value(), " ");
  StreamDecoder continued(*t, DecodeOptions{.continuation = true});
  EXPECT_EQ(continued.push(265).value(), " a");

  TokenizerSpec no_prefix = tiny_sentencepiece();
  no_prefix.add_space_prefix = false;
  Result<Tokenizer> plain = Tokenizer::from_spec(no_prefix);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->encode("abc").value(), (std::vector<int32_t>{1, 260, 264}));
  EXPECT_EQ(plain->decode(std::vector<int32_t>{259, 260}).value(), " a");
}

// A tokenizer.json in the newer SentencePiece form: spaces through a
// Metaspace pre-tokenizer and decoder, read as HF's Rust tokenizers read them
// (transformers.js prepends even before a leading space). Byte fallback is
// set but there are no byte tokens, so <unk> stands in.
json metaspace_tokenizer(const std::string& scheme, bool split) {
  const std::string sp = "\u2581";
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}, {sp, 3}, {"a", 4}, {"b", 5}, {sp + "a", 6}, {"ab", 7}, {sp + "ab", 8}};
  json metaspace = {{"type", "Metaspace"}, {"replacement", sp}, {"prepend_scheme", scheme}, {"split", split}};
  return json{
      {"model",
       {{"type", "BPE"},
        {"vocab", vocab},
        {"merges", json::array({sp + " a", "a b", sp + "a b"})},
        {"byte_fallback", true},
        {"fuse_unk", true},
        {"unk_token", "<unk>"}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", metaspace},
      {"decoder", metaspace},
      {"added_tokens",
       json::array({{{"id", 0}, {"content", "<unk>"}, {"special", true}},
                    {{"id", 1}, {"content", "<s>"}, {"special", true}},
                    {{"id", 2}, {"content", "</s>"}, {"special", true}}})},
  };
}

TEST(TokenizerHf, MetaspacePrependsOnceAndUnknownsFuse) {
  Result<Tokenizer> first = Tokenizer::from_hf_json(metaspace_tokenizer("first", false).dump(), "");
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(first->encode("ab").value(), (std::vector<int32_t>{8}));
  EXPECT_EQ(first->encode(" ab").value(), (std::vector<int32_t>{8}));  // no second U+2581 before a space
  EXPECT_EQ(first->encode("ab</s>ab").value(), (std::vector<int32_t>{8, 2, 7}));  // only at the text's start
  EXPECT_EQ(first->encode("cc").value(), (std::vector<int32_t>{3, 0}));         // one <unk> for the run
  EXPECT_EQ(first->encode("c c").value(), (std::vector<int32_t>{3, 0, 3, 0}));
  EXPECT_EQ(first->decode(std::vector<int32_t>{8, 2, 7}).value(), "ab</s>ab");

  Result<Tokenizer> always = Tokenizer::from_hf_json(metaspace_tokenizer("always", false).dump(), "");
  ASSERT_TRUE(always.ok()) << always.status().to_string();
  EXPECT_EQ(always->encode("ab</s>ab").value(), (std::vector<int32_t>{8, 2, 8}));

  // split: each U+2581 starts a piece, so "b" and "\u2581a" never merge across it.
  Result<Tokenizer> never = Tokenizer::from_hf_json(metaspace_tokenizer("never", true).dump(), "");
  ASSERT_TRUE(never.ok()) << never.status().to_string();
  EXPECT_EQ(never->encode("ab ab").value(), (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(never->decode(std::vector<int32_t>{8}).value(), " ab");  // nothing was prepended, nothing stripped

  json bad = metaspace_tokenizer("first", false);
  bad["decoder"] = {{"type", "WordPiece"}};
  Status status = Tokenizer::from_hf_json(bad.dump(), "").status();
  EXPECT_EQ(status.code(), ErrorCode::kUnsupported);
  EXPECT_NE(status.message().find("WordPiece"), std::string::npos) << status.message();
  bad = metaspace_tokenizer("first", false);
  bad["pre_tokenizer"] = nullptr;  // byte fallback, but spaces stay spaces
  EXPECT_EQ(Tokenizer::from_hf_json(bad.dump(), "").status().code(), ErrorCode::kUnsupported);
}

TEST(TokenizerSpec, SentencePieceRefusesBrokenValues) {
  TokenizerSpec spec = tiny_sentencepiece();
  spec.scores.pop_back();
  EXPECT_EQ(Tokenizer::from_spec(spec).status().code(), ErrorCode::kCorrupt);
  spec = tiny_sentencepiece();
  spec.scores[263] = std::nanf("");  // would break the sort by score
  EXPECT_EQ(Tokenizer::from_spec(spec).status().code(), ErrorCode::kCorrupt);
  spec = tiny_sentencepiece();
  spec.tokens[3] = "<0xZZ>";
  Status status = Tokenizer::from_spec(spec).status();
  EXPECT_EQ(status.code(), ErrorCode::kCorrupt);
  EXPECT_NE(status.message().find("<0xZZ>"), std::string::npos) << status.message();
  spec = tiny_sentencepiece();
  spec.unk_id = -1;  // and no byte token for 0x00: nothing left for that byte
  spec.token_types[3] = TokenizerSpec::kUnused;
  EXPECT_EQ(Tokenizer::from_spec(spec).status().code(), ErrorCode::kCorrupt);
  spec.unk_id = 0;  // with an unknown token the byte falls back to it
  Result<Tokenizer> t = Tokenizer::from_spec(spec);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->encode(std::string("\0b", 2), EncodeOptions{.add_special = false}).value(),
            (std::vector<int32_t>{259, 0, 261}));
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
