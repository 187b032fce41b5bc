#include "runtime/text/jinja_strings.h"

#include <charconv>

#include <algorithm>

#include <fmt/format.h>

namespace ft::jinja {
namespace {

size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

uint32_t decode(std::string_view cp) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(cp[i])); };
  switch (cp.size()) {
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    case 4: return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
    default: return b(0);
  }
}

bool in_set(std::string_view cp, const std::vector<std::string_view>& set) {
  return std::find(set.begin(), set.end(), cp) != set.end();
}

}  // namespace

std::vector<std::string_view> split_code_points(std::string_view s) {
  std::vector<std::string_view> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t n = sequence_length(static_cast<unsigned char>(s[i]));
    bool valid = i + n <= s.size();
    for (size_t k = 1; valid && k < n; ++k) {
      valid = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    }
    if (!valid) n = 1;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

size_t code_point_count(std::string_view s) { return split_code_points(s).size(); }

bool is_python_space(std::string_view code_point) {
  uint32_t c = decode(code_point);
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string python_strip(std::string_view s, const std::string* chars, StripSide side) {
  std::vector<std::string_view> cps = split_code_points(s);
  std::vector<std::string_view> set;
  if (chars) set = split_code_points(*chars);
  auto strip_it = [&](std::string_view cp) { return chars ? in_set(cp, set) : is_python_space(cp); };
  size_t begin = 0, end = cps.size();
  if (side != StripSide::kRight) {
    while (begin < end && strip_it(cps[begin])) ++begin;
  }
  if (side != StripSide::kLeft) {
    while (end > begin && strip_it(cps[end - 1])) --end;
  }
  if (begin == end) return {};
  const char* first = cps[begin].data();
  const char* last = cps[end - 1].data() + cps[end - 1].size();
  return std::string(first, last);
}

namespace {

std::vector<std::string> split_whitespace(std::string_view s, int64_t maxsplit, bool from_right) {
  std::vector<std::string_view> cps = split_code_points(s);
  std::vector<std::string> out;
  auto join = [&](size_t a, size_t b) {
    std::string r;
    for (size_t i = a; i < b; ++i) r.append(cps[i]);
    return r;
  };
  if (!from_right) {
    size_t i = 0;
    while (i < cps.size()) {
      while (i < cps.size() && is_python_space(cps[i])) ++i;
      if (i == cps.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        out.push_back(join(i, cps.size()));
        break;
      }
      size_t start = i;
      while (i < cps.size() && !is_python_space(cps[i])) ++i;
      out.push_back(join(start, i));
    }
    return out;
  }
  size_t i = cps.size();
  while (i > 0) {
    while (i > 0 && is_python_space(cps[i - 1])) --i;
    if (i == 0) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
      out.push_back(join(0, i));
      break;
    }
    size_t end = i;
    while (i > 0 && !is_python_space(cps[i - 1])) --i;
    out.push_back(join(i, end));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> python_split(std::string_view s, const std::string* sep, int64_t maxsplit,
                                      bool from_right) {
  if (!sep) return split_whitespace(s, maxsplit, from_right);
  std::vector<std::string> out;
  if (!from_right) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      size_t hit = s.find(*sep, pos);
      if (hit == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, hit - pos));
      pos = hit + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  size_t end = s.size();
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    if (end < sep->size()) break;
    size_t hit = s.rfind(*sep, end - sep->size());
    if (hit == std::string_view::npos) break;
    out.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
    end = hit;
  }
  out.emplace_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return out;
}

std::string python_replace(std::string_view s, std::string_view from, std::string_view to,
                           int64_t count) {
  std::string out;
  if (from.empty()) {
    // Python inserts `to` between code points and at both ends.
    std::vector<std::string_view> cps = split_code_points(s);
    int64_t done = 0;
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out.append(to);
        ++done;
      }
      if (i < cps.size()) out.append(cps[i]);
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t hit = s.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

std::string ascii_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string python_title(std::string_view s) {
  std::string out(s);
  bool prev_cased = false;
  for (char& c : out) {
    bool upper = c >= 'A' && c <= 'Z';
    bool lower = c >= 'a' && c <= 'z';
    // Non-ASCII bytes count as letters so that "éa" stays one word.
    bool letter = upper || lower || static_cast<unsigned char>(c) >= 0x80;
    if (upper && prev_cased) c = static_cast<char>(c - 'A' + 'a');
    if (lower && !prev_cased) c = static_cast<char>(c - 'a' + 'A');
    prev_cased = letter;
  }
  return out;
}

std::string python_capitalize(std::string_view s) {
  std::string out = ascii_lower(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}

std::string python_string_repr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

void append_json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  for (std::string_view cp : split_code_points(s)) {
    unsigned char u = static_cast<unsigned char>(cp[0]);
    if (cp.size() == 1 && u < 0x80) {
      switch (cp[0]) {
        case '"': out += "\\\""; continue;
        case '\\': out += "\\\\"; continue;
        case '\n': out += "\\n"; continue;
        case '\r': out += "\\r"; continue;
        case '\t': out += "\\t"; continue;
        case '\b': out += "\\b"; continue;
        case '\f': out += "\\f"; continue;
        default: break;
      }
      if (u < 0x20 || (ensure_ascii && u == 0x7F)) {
        out += fmt::format("\\u{:04x}", u);
      } else {
        out += cp[0];
      }
      continue;
    }
    if (!ensure_ascii) {
      out.append(cp);
      continue;
    }
    uint32_t c = decode(cp);
    if (c >= 0x10000) {
      uint32_t v = c - 0x10000;
      out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
    } else {
      out += fmt::format("\\u{:04x}", c);
    }
  }
  out += '"';
}

std::optional<int64_t> parse_decimal_digits(std::string_view digits) {
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return v;
}

}  // namespace ft::jinja
