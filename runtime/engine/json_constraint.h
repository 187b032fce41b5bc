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

// Whitespace between JSON tokens (RFC 8259).
inline bool is_json_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

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
  // kAnyTop: the top value may be of any kind (a value inside a schema);
  // kIntegerOnly: numbers without fraction or exponent.
  enum Flags : uint8_t { kAnyTop = 1, kIntegerOnly = 2 };
  uint8_t flags = 0;

  // Takes the next byte; false (and the state is then unspecified) when it
  // cannot come next.
  bool feed(uint8_t c);
  bool complete() const { return mode == kDone; }
  bool operator==(const JsonState&) const = default;
};

// Where a recognizer stands with respect to a string whose content is free:
// outside one; inside, between characters (every plain token may come); or
// inside, in the middle of a UTF-8 character (no plain token may come).
enum class StringSpot { kOutside, kBetween, kMidCharacter };

inline StringSpot string_spot(const JsonState& s) {
  if (s.mode != JsonState::kString) return StringSpot::kOutside;
  return s.utf8_left == 0 ? StringSpot::kBetween : StringSpot::kMidCharacter;
}
// How many more characters the string being read may take (-1: no limit).
inline int string_room(const JsonState&) { return -1; }

// The vocabulary's tokens as a trie of their bytes. Added tokens (special or
// not) are left out: JSON is written with the model's ordinary tokens.
//
// Inside a string nearly every token may come next, and a walk of the whole
// trie would visit all of them; so tokens that are plain string content
// (whole UTF-8 characters, at most kMaxPlainChars of them, no quote,
// backslash or control character) are one precomputed mask there, and only
// the others are walked, in a second trie. A string with a length limit
// (JSON Schema's maxLength) takes the mask of the plain tokens short enough
// for the room it has left.
//
// A recognizer State has bool feed(uint8_t) (false: the byte cannot come;
// the state is then unspecified), bool complete() (nothing may follow), and
// string_spot(const State&) and string_room(const State&) overloads.
class TokenTrie {
 public:
  static constexpr int kMaxPlainChars = 16;

  TokenTrie(const Tokenizer& tokenizer, int valid_vocab);

  int vocab() const { return vocab_; }
  // allowed[id] = 1 for every token whose bytes `state` accepts, else 0.
  template <typename State>
  void allowed(const State& state, std::vector<uint8_t>& allowed) const {
    const StringSpot spot = string_spot(state);
    if (spot == StringSpot::kOutside) {
      allowed.assign(static_cast<size_t>(vocab_), 0);
      all_.visit(0, state, allowed);
      return;
    }
    if (spot == StringSpot::kBetween) {
      const int room = string_room(state);
      allowed = room < 0 || room >= kMaxPlainChars ? plain_[kMaxPlainChars] : plain_[room];
    } else {
      allowed.assign(static_cast<size_t>(vocab_), 0);
    }
    not_plain_.visit(0, state, allowed);
  }

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
    template <typename State>
    void visit(int32_t node, const State& state, std::vector<uint8_t>& allowed) const {
      for (int32_t child = nodes[node].first_child; child >= 0; child = nodes[child].next_sibling) {
        State next = state;
        if (!next.feed(nodes[child].byte)) continue;
        for (int32_t id = nodes[child].token; id >= 0; id = same_bytes[id]) allowed[id] = 1;
        if (!next.complete()) visit(child, next, allowed);  // nothing may follow the end
      }
    }
  };

  Trie all_;
  Trie not_plain_;  // the tokens that are not plain string content
  // plain_[n][id] = 1 if token id is plain string content of at most n characters.
  std::vector<std::vector<uint8_t>> plain_;
  int vocab_ = 0;
};

// The same mask the plain way, each token's bytes fed to the recognizer on
// their own: the reference the trie is tested and measured against.
template <typename State>
std::vector<uint8_t> allowed_token_by_token(const Tokenizer& tokenizer, int vocab, const State& state) {
  std::vector<uint8_t> allowed(static_cast<size_t>(vocab), 0);
  for (int32_t id = 0; id < vocab; ++id) {
    const std::string_view bytes = tokenizer.token_bytes(id);
    if (tokenizer.added_token(id) || bytes.empty()) continue;
    State s = state;
    bool ok = true;
    for (char c : bytes)
      if (s.complete() || !s.feed(static_cast<uint8_t>(c))) {
        ok = false;
        break;
      }
    allowed[id] = ok;
  }
  return allowed;
}

// One request's constraint: which tokens may come next, and the text so far.
class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // The tokens that may come next (1: allowed), vocab() wide.
  virtual std::span<const uint8_t> allowed() = 0;
  // Moves past a drawn token's bytes; false (and no move) when they cannot come.
  virtual bool accept(std::string_view bytes) = 0;
  // The value is whole: the answer ends here.
  virtual bool complete() const = 0;
};

// A TokenConstraint over a recognizer State (JsonState for JSON mode).
template <typename State>
class RecognizerConstraint final : public TokenConstraint {
 public:
  RecognizerConstraint(std::shared_ptr<const TokenTrie> trie, State start)
      : trie_(std::move(trie)), state_(std::move(start)) {}

  std::span<const uint8_t> allowed() override {
    auto hit = cache_.begin();
    while (hit != cache_.end() && !(hit->state == state_)) ++hit;
    if (hit == cache_.end()) {
      if (cache_.size() >= kCachedMasks) cache_.erase(cache_.begin());
      Cached fresh{state_, {}};
      trie_->allowed(state_, fresh.mask);
      cache_.push_back(std::move(fresh));
    } else if (hit != cache_.end() - 1) {
      Cached moved = std::move(*hit);  // most recently used last
      cache_.erase(hit);
      cache_.push_back(std::move(moved));
    }
    return cache_.back().mask;
  }
  bool accept(std::string_view bytes) override {
    State next = state_;
    for (char c : bytes)
      if (next.complete() || !next.feed(static_cast<uint8_t>(c))) return false;
    state_ = next;
    return true;
  }
  bool complete() const override { return state_.complete(); }

 private:
  static constexpr size_t kCachedMasks = 16;
  std::shared_ptr<const TokenTrie> trie_;
  State state_;
  // Masks of recent states: inside a long string most steps repeat one.
  struct Cached {
    State state;
    std::vector<uint8_t> mask;
  };
  std::vector<Cached> cache_;  // most recently used last
};

// JSON mode's constraint: one JSON object.
std::unique_ptr<TokenConstraint> json_object_constraint(std::shared_ptr<const TokenTrie> trie);

}  // namespace ft
