// Small scans shared by the parsers that cut tagged blocks out of generated
// text as it streams (tool_calls.h, reasoning.h).
#pragma once

#include <algorithm>
#include <string_view>

namespace ft::server {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

inline bool is_blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return is_space(c); });
}

// Length of the longest end of `s` that is a proper start of `tag`: what must
// be held back because the next text may complete the tag.
inline size_t partial_tag(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

// `s` without the whitespace at its end, and at both ends.
inline std::string_view trim_end_space(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}
inline std::string_view trim_space(std::string_view s) {
  s = trim_end_space(s);
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}

}  // namespace ft::server
