#include "runtime/text/utf8.h"

namespace ft {

void utf8_append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool utf8_next(std::string_view s, size_t& pos, char32_t& cp) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  size_t i = pos;
  if (i >= n) return false;
  uint8_t b0 = p[i];
  if (b0 < 0x80) {
    cp = b0;
    pos = i + 1;
    return true;
  }
  int len;
  uint8_t lower = 0x80, upper = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0F;
    if (b0 == 0xE0) lower = 0xA0;
    if (b0 == 0xED) upper = 0x9F;  // excludes UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07;
    if (b0 == 0xF0) lower = 0x90;
    if (b0 == 0xF4) upper = 0x8F;  // nothing above U+10FFFF
  } else {
    return false;
  }
  if (i + len > n) return false;
  for (int k = 1; k < len; ++k) {
    uint8_t b = p[i + k];
    if (b < lower || b > upper) return false;
    lower = 0x80, upper = 0xBF;
    cp = (cp << 6) | (b & 0x3F);
  }
  pos = i + len;
  return true;
}

bool utf8_is_valid(std::string_view s) {
  size_t pos = 0;
  char32_t cp;
  while (pos < s.size()) {
    if (!utf8_next(s, pos, cp)) return false;
  }
  return true;
}

// The decoder of the WHATWG Encoding standard, which implements the maximal
// subpart rule: a byte that cannot continue the current sequence ends it with
// one U+FFFD and is then looked at again as the start of a new sequence.
void Utf8LossyDecoder::push_byte(uint8_t b, std::string& out) {
  if (needed_ == 0) {
    if (b < 0x80) {
      out.push_back(static_cast<char>(b));
    } else if (b >= 0xC2 && b <= 0xDF) {
      needed_ = 1, cp_ = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      if (b == 0xE0) lower_ = 0xA0;
      if (b == 0xED) upper_ = 0x9F;
      needed_ = 2, cp_ = b & 0x0F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      if (b == 0xF0) lower_ = 0x90;
      if (b == 0xF4) upper_ = 0x8F;
      needed_ = 3, cp_ = b & 0x07;
    } else {
      utf8_append(out, kReplacementChar);
    }
    return;
  }
  if (b < lower_ || b > upper_) {
    reset();
    utf8_append(out, kReplacementChar);
    push_byte(b, out);
    return;
  }
  lower_ = 0x80, upper_ = 0xBF;
  cp_ = (cp_ << 6) | (b & 0x3F);
  if (++seen_ == needed_) {
    utf8_append(out, cp_);
    reset();
  }
}

void Utf8LossyDecoder::push(std::string_view bytes, std::string& out) {
  for (char c : bytes) push_byte(static_cast<uint8_t>(c), out);
}

void Utf8LossyDecoder::finish(std::string& out) {
  if (needed_ > 0) {
    reset();
    utf8_append(out, kReplacementChar);
  }
}

std::string utf8_sanitize(std::string_view s) {
  if (utf8_is_valid(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  Utf8LossyDecoder decoder;
  decoder.push(s, out);
  decoder.finish(out);
  return out;
}

}  // namespace ft
