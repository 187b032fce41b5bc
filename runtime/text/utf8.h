// UTF-8 helpers shared by the tokenizer: strict decoding of one code point,
// encoding, and a lossy decoder that replaces ill-formed input with U+FFFD.
//
// Replacement follows the "maximal subpart" rule of the Unicode standard
// (chapter 3, U+FFFD substitution of maximal subparts), which is also what the
// WHATWG TextDecoder, Rust's String::from_utf8_lossy and Python's
// errors="replace" do. Using the same rule everywhere keeps our decode output
// byte-identical to the reference tokenizers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ft {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Appends the UTF-8 encoding of `cp` (which must be a scalar value).
void utf8_append(std::string& out, char32_t cp);

// Decodes the well-formed code point at `s[pos]`, advancing `pos`. Returns
// false (and leaves `pos`) when the bytes there are not well-formed UTF-8.
bool utf8_next(std::string_view s, size_t& pos, char32_t& cp);

bool utf8_is_valid(std::string_view s);

// Incremental lossy decoder. Feed bytes with `push`; it appends only complete
// code points (or U+FFFD for ill-formed subparts) to `out` and holds back an
// incomplete tail until more bytes arrive or `finish` flushes it as U+FFFD.
class Utf8LossyDecoder {
 public:
  void push(std::string_view bytes, std::string& out);
  void push_byte(uint8_t byte, std::string& out);
  void finish(std::string& out);
  bool has_pending() const { return needed_ > 0; }

 private:
  void reset() { needed_ = 0, seen_ = 0, lower_ = 0x80, upper_ = 0xBF; }

  char32_t cp_ = 0;
  int needed_ = 0;
  int seen_ = 0;
  uint8_t lower_ = 0x80;
  uint8_t upper_ = 0xBF;
};

// `s` with every ill-formed subpart replaced by U+FFFD; `s` itself when valid.
std::string utf8_sanitize(std::string_view s);

}  // namespace ft
