// JSON mode (response_format {"type": "json_object"}): the output is held to
// one JSON object (RFC 8259) by masking, before each draw, every token whose
// bytes cannot continue the text as a prefix of one. The request ends (stop)
// with the token that closes the object.
//
// JsonState recognizes the bytes one at a time; TokenTrie holds the
// vocabulary as a byte trie, so the tokens that share a prefix are checked
// once for it, and a rejected byte prunes every token below it. Limits that
// keep a sampled model from running on where JSON allows it: at most
// kMaxWhitespace whitespace bytes in a row, numbers of at most kMaxNumber
// bytes, nesting at most kMaxDepth deep.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/text/tokenizer.h"

namespace ft {

struct JsonState {
  static constexpr int kMaxDepth = 64;
  static constexpr int kMaxWhitespace = 24;
  static constexpr int kMaxNumber = 40;

  enum Mode : uint8_t {
    kValue,        // a value next (the top level: an object)
    kArrayFirst,   // after "[": a value or "]"
    kObjectFirst,  // after "{": a key or "}"
    kKey,          // after "," in an object: a key
    kColon,        // after a key
    kAfter,        // after a value inside an object or array: "," or its closer
    kString,
    kEscape,       // after a backslash in a string
    kUnicode,      // \u: aux hex digits to go
    kLiteral,      // true / false / null: aux = literal * 8 + characters read
    kNumMinus,
    kNumZero,
    kNumInt,
    kNumDot,
    kNumFrac,
    kNumExp,
    kNumExpSign,
    kNumExpDigits,
    kDone,  // the object is closed; nothing may follow
  };

  uint64_t stack = 0;  // bit d: the container at depth d + 1 is an object (1) or an array (0)
  uint8_t depth = 0;
  uint8_t mode = kValue;
  uint8_t aux = 0;
  uint8_t ws = 0;   // whitespace bytes in a row
  uint8_t key = 0;  // the string being read is an object key
  // In a string: UTF-8 continuation bytes still to come, and the range the
  // first of them must fall in (Utf8First), so strings stay valid UTF-8.
  uint8_t utf8_left = 0;
  uint8_t utf8_first = 0;
  uint8_t pad = 0;

  // Takes the next byte; false (and the state is then unspecified) when it
  // cannot come next.
  bool feed(uint8_t c);
  bool complete() const { return mode == kDone; }
  bool operator==(const JsonState&) const = default;
};

// The vocabulary's tokens as a trie of their bytes. Added tokens (special or
// not) are left out: JSON is written with the model's ordinary tokens.
//
// Inside a string nearly every token may come next, and a walk of the whole
// trie would visit all of them; so tokens that are plain string content
// (whole UTF-8 characters, no quote, backslash or control character) are one
// precomputed mask there, and only the others are walked, in a second trie.
class TokenTrie {
 public:
  TokenTrie(const Tokenizer& tokenizer, int valid_vocab);

  int vocab() const { return vocab_; }
  // allowed[id] = 1 for every token whose bytes `state` accepts, else 0.
  void allowed(const JsonState& state, std::vector<uint8_t>& allowed) const;

 private:
  struct Node {
    int32_t first_child = -1;
    int32_t next_sibling = -1;
    int32_t token = -1;  // a token that ends here (the next with the same bytes: Trie::same_bytes)
    uint8_t byte = 0;
  };
  struct Trie {
    Trie() : nodes(1) {}
    std::vector<Node> nodes;          // nodes[0] is the root
    std::vector<int32_t> same_bytes;  // per token: the next token with the same bytes, or -1
    void insert(int32_t id, std::string_view bytes);
    void visit(int32_t node, const JsonState& state, std::vector<uint8_t>& allowed) const;
  };

  Trie all_;
  Trie not_plain_;             // the tokens that are not plain string content
  std::vector<uint8_t> plain_;  // per token: 1 if plain string content
  int vocab_ = 0;
};

// One request's constraint.
class JsonConstraint {
 public:
  explicit JsonConstraint(std::shared_ptr<const TokenTrie> trie) : trie_(std::move(trie)) {}

  // The tokens that may come next (1: allowed), vocab() wide.
  std::span<const uint8_t> allowed();
  // Moves past a drawn token; false when the token was not allowed.
  bool accept(std::string_view bytes);
  bool complete() const { return state_.complete(); }

 private:
  std::shared_ptr<const TokenTrie> trie_;
  JsonState state_;
  // Masks of recent states: inside a long string most steps repeat one.
  struct Cached {
    JsonState state;
    std::vector<uint8_t> mask;
  };
  std::vector<Cached> cache_;  // most recently used last
};

}  // namespace ft
