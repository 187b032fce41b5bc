#include <gtest/gtest.h>

#include <random>

#include "runtime/text/bpe_byte_level.h"
#include "runtime/text/utf8.h"
#include "runtime/text/utf8_nfc.h"

namespace ft {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

std::string lossy(std::string_view bytes) {
  std::string out;
  Utf8LossyDecoder decoder;
  decoder.push(bytes, out);
  decoder.finish(out);
  return out;
}

TEST(TokenizerUtf8, ValidTextPassesThrough) {
  for (std::string s : {"", "abc", "é", "€", "😀", "a\xC2\x80z", "\xF4\x8F\xBF\xBF"}) {
    EXPECT_TRUE(utf8_is_valid(s)) << s;
    EXPECT_EQ(lossy(s), s);
    EXPECT_EQ(utf8_sanitize(s), s);
  }
}

// The worked example of U+FFFD substitution of maximal subparts in the
// Unicode standard (chapter 3.9, table 3-8).
TEST(TokenizerUtf8, MaximalSubpartReplacement) {
  std::string input = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
  std::string expected = "a" + kFffd + kFffd + kFffd + "b" + kFffd + "c" + kFffd + kFffd + "d";
  EXPECT_FALSE(utf8_is_valid(input));
  EXPECT_EQ(utf8_sanitize(input), expected);
}

TEST(TokenizerUtf8, IllFormedSequencesAreReplaced) {
  EXPECT_EQ(utf8_sanitize("\xC0\xAF"), kFffd + kFffd);               // overlong
  EXPECT_EQ(utf8_sanitize("\xED\xA0\x80"), kFffd + kFffd + kFffd);   // surrogate
  EXPECT_EQ(utf8_sanitize("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // above U+10FFFF
  EXPECT_EQ(utf8_sanitize("\xE2\x82"), kFffd);                       // truncated at the end
  EXPECT_EQ(utf8_sanitize("\xE2\x82x"), kFffd + "x");
  EXPECT_EQ(utf8_sanitize("\xFF"), kFffd);
}

// Feeding bytes one at a time never emits part of a code point, and gives
// the same text as decoding everything at once.
TEST(TokenizerUtf8, IncrementalDecodeMatchesWhole) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    std::string bytes;
    int length = static_cast<int>(rng() % 24);
    for (int i = 0; i < length; ++i) {
      // Bias towards lead and continuation bytes so sequences form often.
      uint8_t b = static_cast<uint8_t>(rng() % 3 == 0 ? rng() % 256 : 0x80 + rng() % 0x75);
      bytes.push_back(static_cast<char>(b));
    }
    Utf8LossyDecoder decoder;
    std::string joined;
    for (char c : bytes) {
      std::string chunk;
      decoder.push_byte(static_cast<uint8_t>(c), chunk);
      EXPECT_TRUE(utf8_is_valid(chunk));
      joined += chunk;
    }
    decoder.finish(joined);
    EXPECT_EQ(joined, utf8_sanitize(bytes));
    EXPECT_TRUE(utf8_is_valid(joined));
  }
}

TEST(TokenizerUtf8, ByteLevelAlphabetRoundTrips) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  std::string text = bytes_to_byte_level(all);
  EXPECT_TRUE(utf8_is_valid(text));
  EXPECT_EQ(byte_level_to_bytes(text), all);
  EXPECT_EQ(bytes_to_byte_level(" "), "\xC4\xA0");   // U+0120, the familiar "Ġ"
  EXPECT_EQ(bytes_to_byte_level("\n"), "\xC4\x8A");  // U+010A, "Ċ"
  EXPECT_EQ(bytes_to_byte_level("A!~"), "A!~");
}

TEST(TokenizerNfc, ComposesAndOrders) {
  EXPECT_EQ(utf8_nfc("e\xCC\x81"), "\xC3\xA9");                       // e + acute -> é
  EXPECT_EQ(utf8_nfc("\xE2\x84\xAB"), "\xC3\x85");                    // ANGSTROM SIGN -> Å (singleton)
  EXPECT_EQ(utf8_nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), "\xEA\xB0\x81");  // jamo -> 각
  // q + dot below (220) + acute (230) stays ordered; e + acute + dot below
  // reorders to e + dot below first and composes to ẹ (U+1EB9) + acute.
  EXPECT_EQ(utf8_nfc("e\xCC\x81\xCC\xA3"), "\xE1\xBA\xB9\xCC\x81");
  EXPECT_EQ(utf8_nfc("\xCC\x81x"), "\xCC\x81x");  // a leading mark has nothing to join
  EXPECT_EQ(utf8_nfc("plain ascii"), "plain ascii");
  EXPECT_EQ(utf8_nfc("\xE6\x88\x91\xE7\x88\xB1"), "\xE6\x88\x91\xE7\x88\xB1");  // CJK unchanged
}

TEST(TokenizerNfc, IsIdempotent) {
  std::mt19937 rng(11);
  const char32_t pool[] = {'a', 'e', 'o', 0x300, 0x301, 0x302, 0x323, 0x308, 0x1100, 0x1161, 0x11A8, 0xAC00, 0x212B};
  for (int trial = 0; trial < 300; ++trial) {
    std::string s;
    int length = static_cast<int>(rng() % 10);
    for (int i = 0; i < length; ++i) utf8_append(s, pool[rng() % std::size(pool)]);
    std::string once = utf8_nfc(s);
    EXPECT_EQ(utf8_nfc(once), once);
  }
}

}  // namespace
}  // namespace ft
