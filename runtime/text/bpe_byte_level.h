// The GPT-2 byte-level alphabet: every byte maps to one printable code point
// so that BPE vocabularies can be stored as text. Printable Latin-1 bytes map
// to themselves; the other 68 bytes map to U+0100 onwards, in byte order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ft {

char32_t byte_level_char(uint8_t byte);
// Raw bytes of a byte-level token string. A code point outside the alphabet
// (possible only in hand-made vocabularies) keeps its own UTF-8 bytes.
std::string byte_level_to_bytes(std::string_view token);
// The byte-level string of raw bytes (for showing token strings as HF does).
std::string bytes_to_byte_level(std::string_view bytes);

}  // namespace ft
