// JSON mode's constraint: the byte recognizer against hand-picked valid and
// invalid texts, the trie's masks against checking every token one by one,
// and a random walk through the masks that must end in parseable JSON.
#include "runtime/engine/json_constraint.h"

#include "tests/engine/constraint_test_vocab.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace ft {
namespace {

// Feeds all of `text`: 1 complete, 0 a valid prefix, -1 rejected.
int run(std::string_view text) {
  JsonState s;
  for (char c : text)
    if (!s.feed(static_cast<uint8_t>(c))) return -1;
  return s.complete() ? 1 : 0;
}

TEST(JsonState, AcceptsObjectsAndTheirPrefixes) {
  const char* complete[] = {
      "{}",
      "{\"a\": 1}",
      "{\"a\":[1,-2.5e+3,0,0.0,1E9,true,false,null,\"x\\\"y\\\\\\u00e9\\n\"],\"b\":{\"c\":{}},\"d\":[]}",
      "{\n  \"name\": \"caf\xc3\xa9\",\n  \"list\": [ [ ], [1] ]\n}",
  };
  for (const char* text : complete) {
    EXPECT_EQ(run(text), 1) << text;
    EXPECT_FALSE(nlohmann::json::parse(text, nullptr, false).is_discarded()) << text;  // the spec agrees
    const std::string t = text;
    for (size_t n = 0; n < t.size(); ++n) {
      EXPECT_EQ(run(t.substr(0, n)), 0) << "prefix of " << n << " bytes of " << text;
    }
  }
}

TEST(JsonState, RejectsWhatCannotBeJsonOrIsNotAnObject) {
  const char* rejected[] = {
      "[1]",            // JSON mode answers an object
      "\"text\"", "42", "true",
      "{\"a\" 1}",      // no colon
      "{a: 1}",         // unquoted key
      "{\"a\": 01}",    // leading zero
      "{\"a\": 1.}",    // no fraction digits
      "{\"a\": -}",     "{\"a\": 1e}", "{\"a\": tru}", "{\"a\": nul}",
      "{\"a\": [1,]}",  // trailing comma
      "{\"a\": 1,}",    "{,}",
      "{\"a\": \"x\ny\"}",  // raw control character in a string
      "{\"a\": \"\\x\"}",   // bad escape
      "{\"a\": \"\\u12g4\"}",
      "{\"a\": \"\xff\"}",  // not UTF-8
      "{\"a\": \"\xc3\"}",  // a character cut short
      "{\"a\": \"\xe0\x80\x80\"}",  // overlong
      "{\"a\": \"\xed\xa0\x80\"}",  // a surrogate
      "{\"a\": 1]",     // wrong closer
      " {}",            // the answer opens with the object
      "{} ",            // nothing after the object
      "{}{}",
  };
  for (const char* text : rejected) EXPECT_EQ(run(text), -1) << text;
}

TEST(JsonState, LimitsKeepASampledModelFromRunningOn) {
  EXPECT_EQ(run("{" + std::string(JsonState::kMaxWhitespace, ' ')), 0);
  EXPECT_EQ(run("{" + std::string(JsonState::kMaxWhitespace + 1, ' ')), -1);
  EXPECT_EQ(run("{\"a\":" + std::string(JsonState::kMaxNumber, '1')), 0);
  EXPECT_EQ(run("{\"a\":" + std::string(JsonState::kMaxNumber + 1, '1')), -1);
  std::string deep = "{\"a\":";
  for (int i = 1; i < JsonState::kMaxDepth; ++i) deep += "[";
  EXPECT_EQ(run(deep), 0);
  EXPECT_EQ(run(deep + "["), -1);
  std::string closed = deep;
  for (int i = 1; i < JsonState::kMaxDepth; ++i) closed += "]";
  EXPECT_EQ(run(closed + "}"), 1);
}

// The trie's mask equals feeding each token's bytes on its own.
TEST(JsonTrie, MaskEqualsCheckingEveryToken) {
  for (const char* prefix : {"", "{", "{\"ke", "{\"key\":", "{\"key\": 12", "{\"a\": [true, \"x", "{\"a\": {\"b\": 1}",
                             "{\"a\": \"\xe4", "{\"a\": \"\xf0\x9f", "{\"a\": \"\\", "{\"a\": \"\\u00"}) {
    JsonState state;
    for (const char* c = prefix; *c; ++c) ASSERT_TRUE(state.feed(static_cast<uint8_t>(*c))) << prefix;
    expect_trie_mask_exact(state, prefix);
  }
}

// Drawing uniformly among the allowed tokens always stays valid; the walks
// that close their object within the budget parse as JSON objects.
TEST(JsonTrie, RandomWalksThroughTheMasksStayJson) {
  const ConstraintTestVocab& v = constraint_test_vocab();
  ASSERT_TRUE(v.trie);
  std::mt19937 rng(7);
  int closed = 0;
  for (int walk = 0; walk < 40; ++walk) {
    std::unique_ptr<TokenConstraint> c = json_object_constraint(v.trie);
    const std::string text = random_walk(*c, rng, 60, {"}", "]", "\""});
    EXPECT_EQ(run(text), c->complete() ? 1 : 0) << text;
    if (c->complete()) {
      ++closed;
      EXPECT_TRUE(nlohmann::json::parse(text, nullptr, false).is_object()) << text;
    }
  }
  EXPECT_GT(closed, 0);
  std::unique_ptr<TokenConstraint> c = json_object_constraint(v.trie);
  EXPECT_FALSE(c->accept("["));  // not allowed: the state stays
  EXPECT_TRUE(c->accept("{}"));
  EXPECT_TRUE(c->complete());
  EXPECT_FALSE(c->accept(" "));  // nothing after the end
}

}  // namespace
}  // namespace ft
