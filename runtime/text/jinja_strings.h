// UTF-8 helpers with Python str semantics: templates index, slice, strip and
// measure strings by code point, the way Python does, not by byte.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ft::jinja {

// Splits into code points (each as its UTF-8 bytes); invalid bytes stand alone.
std::vector<std::string_view> split_code_points(std::string_view s);
size_t code_point_count(std::string_view s);
// Python str.isspace() for one code point given as UTF-8.
bool is_python_space(std::string_view code_point);
void append_utf8(std::string& out, uint32_t code_point);

enum class StripSide { kBoth, kLeft, kRight };
// Python str.strip/lstrip/rstrip; `chars` null means whitespace.
std::string python_strip(std::string_view s, const std::string* chars, StripSide side);
// Python str.split(sep, maxsplit) / rsplit; a null sep splits on runs of whitespace.
std::vector<std::string> python_split(std::string_view s, const std::string* sep, int64_t maxsplit,
                                      bool from_right);
std::string python_replace(std::string_view s, std::string_view from, std::string_view to,
                           int64_t count);
// ASCII-only case mapping (non-ASCII letters pass through unchanged).
std::string ascii_upper(std::string_view s);
std::string ascii_lower(std::string_view s);
// Python str.title() / str.capitalize() over ASCII letters.
std::string python_title(std::string_view s);
std::string python_capitalize(std::string_view s);
// Python repr() of a str: single quotes unless the text has ' and no ".
std::string python_string_repr(std::string_view s);
// A run of decimal digits as an int64; nullopt for anything else (a sign,
// an empty run, or a value past int64, which templates may write).
std::optional<int64_t> parse_decimal_digits(std::string_view digits);
// A JSON string literal as json.dumps writes it.
void append_json_string(std::string& out, std::string_view s, bool ensure_ascii);

}  // namespace ft::jinja
