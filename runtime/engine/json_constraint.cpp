#include "runtime/engine/json_constraint.h"

#include <algorithm>

namespace ft {
namespace {

constexpr const char* kLiterals[3] = {"true", "false", "null"};

bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
bool is_hex(uint8_t c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

bool JsonState::feed(uint8_t c) {
  auto value_done = [&] {
    mode = depth == 0 ? kDone : kAfter;
    ws = 0;
    aux = 0;  // equal states compare equal (the mask cache)
  };
  auto push = [&](bool object) {
    if (depth >= kMaxDepth) return false;
    if (object) stack |= uint64_t{1} << depth;
    else stack &= ~(uint64_t{1} << depth);
    ++depth;
    mode = object ? kObjectFirst : kArrayFirst;
    ws = 0;
    return true;
  };
  auto pop = [&] {  // the bits above the depth are kept zero, so equal states compare equal
    --depth;
    stack &= (uint64_t{1} << depth) - 1;
    value_done();
  };
  auto top_is_object = [&] { return depth > 0 && ((stack >> (depth - 1)) & 1) != 0; };
  auto number = [&](Mode next) {
    if (++aux > kMaxNumber) return false;
    mode = next;
    return true;
  };

  switch (mode) {
    case kString:
      if (utf8_left > 0) {
        // The first continuation byte of E0, ED, F0 and F4 leads is narrower
        // (no overlong forms, no surrogates, nothing past U+10FFFF).
        uint8_t lo = 0x80, hi = 0xBF;
        switch (utf8_first) {
          case 0xE0: lo = 0xA0; break;
          case 0xED: hi = 0x9F; break;
          case 0xF0: lo = 0x90; break;
          case 0xF4: hi = 0x8F; break;
          default: break;
        }
        if (c < lo || c > hi) return false;
        --utf8_left;
        utf8_first = 0;
        return true;
      }
      if (c >= 0x80) {
        if (c >= 0xC2 && c <= 0xDF) utf8_left = 1;
        else if (c >= 0xE0 && c <= 0xEF) utf8_left = 2;
        else if (c >= 0xF0 && c <= 0xF4) utf8_left = 3;
        else return false;
        utf8_first = c;
        return true;
      }
      if (c == '"') {
        if (key) {
          key = 0;
          mode = kColon;
          ws = 0;
        } else {
          value_done();
        }
        return true;
      }
      if (c == '\\') {
        mode = kEscape;
        return true;
      }
      return c >= 0x20;  // control characters must be escaped
    case kEscape:
      if (c == 'u') {
        mode = kUnicode;
        aux = 4;
        return true;
      }
      if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
        mode = kString;
        return true;
      }
      return false;
    case kUnicode:
      if (!is_hex(c)) return false;
      if (--aux == 0) mode = kString;
      return true;
    case kLiteral: {
      const int lit = aux >> 3, pos = aux & 7;
      if (c != static_cast<uint8_t>(kLiterals[lit][pos])) return false;
      if (kLiterals[lit][pos + 1] == '\0') {
        value_done();
      } else {
        aux = static_cast<uint8_t>(lit * 8 + pos + 1);
      }
      return true;
    }
    case kNumMinus:
      if (c == '0') return number(kNumZero);
      if (is_digit(c)) return number(kNumInt);
      return false;
    case kNumDot:
      return is_digit(c) && number(kNumFrac);
    case kNumExp:
      if (c == '+' || c == '-') return number(kNumExpSign);
      return is_digit(c) && number(kNumExpDigits);
    case kNumExpSign:
      return is_digit(c) && number(kNumExpDigits);
    case kNumZero:
    case kNumInt:
    case kNumFrac:
    case kNumExpDigits:
      if (is_digit(c) && mode != kNumZero) return number(static_cast<Mode>(mode));
      if (c == '.' && (mode == kNumZero || mode == kNumInt) && !(flags & kIntegerOnly)) return number(kNumDot);
      if ((c == 'e' || c == 'E') && mode != kNumExpDigits && !(flags & kIntegerOnly)) return number(kNumExp);
      value_done();  // the number ends; the byte is what follows it
      return feed(c);
    case kDone:
      return false;
    default:
      break;
  }

  // The structural modes: whitespace (not before the object: the answer
  // opens with it), then what each expects.
  if (is_json_space(c)) return !(mode == kValue && depth == 0) && ++ws <= kMaxWhitespace;
  ws = 0;
  switch (mode) {
    case kArrayFirst:
      if (c == ']') {
        pop();
        return true;
      }
      [[fallthrough]];
    case kValue:
      if (depth == 0 && c != '{' && !(flags & kAnyTop)) return false;  // JSON mode's answer is an object
      switch (c) {
        case '{': return push(true);
        case '[': return push(false);
        case '"':
          mode = kString;
          key = 0;
          return true;
        case '-':
          mode = kNumMinus;
          aux = 1;
          return true;
        case 't':
        case 'f':
        case 'n':
          mode = kLiteral;
          aux = static_cast<uint8_t>((c == 't' ? 0 : c == 'f' ? 1 : 2) * 8 + 1);
          return true;
        default:
          if (!is_digit(c)) return false;
          mode = c == '0' ? kNumZero : kNumInt;
          aux = 1;
          return true;
      }
    case kObjectFirst:
      if (c == '}') {
        pop();
        return true;
      }
      [[fallthrough]];
    case kKey:
      if (c != '"') return false;
      mode = kString;
      key = 1;
      return true;
    case kColon:
      if (c != ':') return false;
      mode = kValue;
      return true;
    case kAfter:
      if (c == ',') {
        mode = top_is_object() ? kKey : kValue;
        return true;
      }
      if (c == (top_is_object() ? '}' : ']')) {
        pop();
        return true;
      }
      return false;
    default:
      return false;
  }
}

// The number of characters if `bytes` are whole UTF-8 characters that a
// string may hold as they are (what JsonState accepts in a string, starting
// and ending between characters), else -1.
static int plain_string_chars(std::string_view bytes) {
  JsonState s;
  s.mode = JsonState::kString;
  int chars = 0;
  for (char c : bytes) {
    if (c == '"' || c == '\\' || !s.feed(static_cast<uint8_t>(c))) return -1;
    chars += (static_cast<uint8_t>(c) & 0xC0) != 0x80;  // not a continuation byte: a character starts
  }
  return s.utf8_left == 0 ? chars : -1;
}

void TokenTrie::Trie::insert(int32_t id, std::string_view bytes) {
  int32_t node = 0;
  for (char ch : bytes) {
    const uint8_t b = static_cast<uint8_t>(ch);
    int32_t child = nodes[node].first_child;
    while (child >= 0 && nodes[child].byte != b) child = nodes[child].next_sibling;
    if (child < 0) {
      child = static_cast<int32_t>(nodes.size());
      Node n;
      n.byte = b;
      n.next_sibling = nodes[node].first_child;
      nodes.push_back(n);
      nodes[node].first_child = child;
    }
    node = child;
  }
  if (same_bytes.size() <= static_cast<size_t>(id)) same_bytes.resize(static_cast<size_t>(id) + 1, -1);
  same_bytes[id] = nodes[node].token;
  nodes[node].token = id;
}

TokenTrie::TokenTrie(const Tokenizer& tokenizer, int valid_vocab)
    : plain_(kMaxPlainChars + 1, std::vector<uint8_t>(static_cast<size_t>(valid_vocab), 0)), vocab_(valid_vocab) {
  for (int32_t id = 0; id < vocab_; ++id) {
    if (tokenizer.added_token(id)) continue;
    const std::string_view bytes = tokenizer.token_bytes(id);
    if (bytes.empty()) continue;
    all_.insert(id, bytes);
    const int chars = plain_string_chars(bytes);
    if (chars >= 1 && chars <= kMaxPlainChars) {
      for (int n = chars; n <= kMaxPlainChars; ++n) plain_[n][id] = 1;
    } else {
      not_plain_.insert(id, bytes);
    }
  }
}

std::unique_ptr<TokenConstraint> json_object_constraint(std::shared_ptr<const TokenTrie> trie) {
  return std::make_unique<RecognizerConstraint<JsonState>>(std::move(trie), JsonState{});
}

}  // namespace ft
