#include "runtime/text/bpe_byte_level.h"

#include <array>

#include "runtime/text/utf8.h"

namespace ft {
namespace {

bool maps_to_itself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct ByteLevelTables {
  std::array<char32_t, 256> to_char{};
  std::array<int16_t, 512> to_byte{};  // indexed by code point; the alphabet is below U+0200

  ByteLevelTables() {
    to_byte.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      to_char[b] = maps_to_itself(b) ? static_cast<char32_t>(b) : next++;
      to_byte[to_char[b]] = static_cast<int16_t>(b);
    }
  }
};

const ByteLevelTables& tables() {
  static const ByteLevelTables t;
  return t;
}

}  // namespace

char32_t byte_level_char(uint8_t byte) { return tables().to_char[byte]; }

std::string byte_level_to_bytes(std::string_view token) {
  const ByteLevelTables& t = tables();
  std::string out;
  out.reserve(token.size());
  size_t pos = 0;
  while (pos < token.size()) {
    size_t start = pos;
    char32_t cp;
    if (!utf8_next(token, pos, cp)) {
      out.push_back(token[pos++]);
      continue;
    }
    if (cp < t.to_byte.size() && t.to_byte[cp] >= 0) {
      out.push_back(static_cast<char>(t.to_byte[cp]));
    } else {
      out.append(token.substr(start, pos - start));
    }
  }
  return out;
}

std::string bytes_to_byte_level(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) utf8_append(out, byte_level_char(static_cast<uint8_t>(c)));
  return out;
}

}  // namespace ft
