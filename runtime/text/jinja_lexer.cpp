#include "runtime/text/jinja_lexer.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "runtime/text/jinja_strings.h"

namespace ft::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(const std::string& source, const LexOptions& options) : src_(source), options_(options) {
    if (!options_.keep_trailing_newline && !src_.empty() && src_.back() == '\n') src_.pop_back();
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  Result<std::vector<Token>> run() {
    size_t pos = 0;
    while (pos < src_.size()) {
      size_t start = find_tag(pos);
      FT_RETURN_IF_ERROR(emit_text(pos, start));
      if (start == src_.size()) break;
      FT_ASSIGN_OR_RETURN(pos, lex_tag(start));
    }
    tokens_.push_back(Token{TokenKind::kEnd, "", position(src_.size())});
    return std::move(tokens_);
  }

 private:
  SourcePos position(size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    size_t line = static_cast<size_t>(it - line_starts_.begin());
    return SourcePos{static_cast<int>(line), static_cast<int>(offset - line_starts_[line - 1] + 1)};
  }

  Status error(size_t offset, const std::string& message) const {
    SourcePos p = position(offset);
    return Status(ErrorCode::kInvalidArgument, fmt::format("line {}, column {}: {}", p.line, p.column, message));
  }

  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return src_.size();
  }

  // Text in [begin, end) before a tag at `end` (or the end of the template).
  Status emit_text(size_t begin, size_t end) {
    if (strip_next_ == Strip::kAllWhitespace) {
      while (begin < end && is_space(src_[begin])) ++begin;
    } else if (strip_next_ == Strip::kOneNewline) {
      if (begin < end && src_[begin] == '\n') {
        ++begin;
      } else if (begin + 1 < end && src_[begin] == '\r' && src_[begin + 1] == '\n') {
        begin += 2;
      }
    }
    strip_next_ = Strip::kNone;
    if (end < src_.size()) {
      char kind = src_[end + 1];
      char modifier = end + 2 < src_.size() ? src_[end + 2] : '\0';
      if (modifier == '-') {
        while (end > begin && is_space(src_[end - 1])) --end;
      } else if (options_.lstrip_blocks && kind != '{' && modifier != '+') {
        size_t k = end;
        while (k > 0 && (src_[k - 1] == ' ' || src_[k - 1] == '\t')) --k;
        if (k == 0 || src_[k - 1] == '\n') end = std::max(begin, k);
      }
    }
    if (end > begin) tokens_.push_back(Token{TokenKind::kText, src_.substr(begin, end - begin), position(begin)});
    return {};
  }

  // Lexes the tag starting at `start`; returns the offset after it.
  Result<size_t> lex_tag(size_t start) {
    char kind = src_[start + 1];
    size_t pos = start + 2;
    if (pos < src_.size() && (src_[pos] == '-' || src_[pos] == '+')) ++pos;
    if (kind == '#') {
      size_t close = src_.find("#}", pos);
      if (close == std::string::npos) return error(start, "unterminated comment");
      set_strip_after(close > pos && src_[close - 1] == '-', close > pos && src_[close - 1] == '+', true);
      return close + 2;
    }
    bool is_expr = kind == '{';
    tokens_.push_back(Token{is_expr ? TokenKind::kExprOpen : TokenKind::kStmtOpen, "", position(start)});
    size_t first_token = tokens_.size();
    int depth = 0;
    while (true) {
      while (pos < src_.size() && is_space(src_[pos])) ++pos;
      if (pos >= src_.size()) return error(start, is_expr ? "unclosed '{{'" : "unclosed '{%'");
      bool modifier = (src_[pos] == '-' || src_[pos] == '+');
      size_t close_at = modifier ? pos + 1 : pos;
      const char* close = is_expr ? "}}" : "%}";
      if (depth == 0 && src_.compare(close_at, 2, close) == 0 && (!modifier || !is_expr || src_[pos] == '-')) {
        tokens_.push_back(Token{is_expr ? TokenKind::kExprClose : TokenKind::kStmtClose, "", position(pos)});
        set_strip_after(modifier && src_[pos] == '-', modifier && src_[pos] == '+', !is_expr);
        pos = close_at + 2;
        break;
      }
      FT_ASSIGN_OR_RETURN(pos, lex_token(pos, depth));
    }
    if (!is_expr && tokens_.size() == first_token + 2 && tokens_[first_token].text == "raw") {
      return lex_raw(first_token, pos);
    }
    return pos;
  }

  void set_strip_after(bool minus, bool plus, bool block_tag) {
    if (minus) {
      strip_next_ = Strip::kAllWhitespace;
    } else if (block_tag && options_.trim_blocks && !plus) {
      strip_next_ = Strip::kOneNewline;
    } else {
      strip_next_ = Strip::kNone;
    }
  }

  // `{% raw %}...{% endraw %}`: the body is text, tags and all.
  Result<size_t> lex_raw(size_t first_token, size_t body) {
    SourcePos open_pos = tokens_[first_token - 1].pos;
    tokens_.resize(first_token - 1);
    size_t search = body;
    while (true) {
      size_t tag = src_.find("{%", search);
      if (tag == std::string::npos) {
        return Status(ErrorCode::kInvalidArgument,
                      fmt::format("line {}, column {}: missing {{% endraw %}}", open_pos.line, open_pos.column));
      }
      size_t p = tag + 2;
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
      while (p < src_.size() && is_space(src_[p])) ++p;
      if (src_.compare(p, 6, "endraw") != 0) {
        search = tag + 2;
        continue;
      }
      p += 6;
      while (p < src_.size() && is_space(src_[p])) ++p;
      bool minus = p < src_.size() && src_[p] == '-';
      if (minus || (p < src_.size() && src_[p] == '+')) ++p;
      if (src_.compare(p, 2, "%}") != 0) return error(tag, "malformed endraw tag");
      // Jinja2 keeps the newline after `{% raw %}` (trim_blocks does not apply);
      // only `{% raw -%}` strips.
      if (strip_next_ == Strip::kOneNewline) strip_next_ = Strip::kNone;
      FT_RETURN_IF_ERROR(emit_text(body, tag));
      set_strip_after(minus, false, true);
      return p + 2;
    }
  }

  Result<size_t> lex_token(size_t pos, int& depth) {
    char c = src_[pos];
    SourcePos where = position(pos);
    if (c == '"' || c == '\'') return lex_string(pos);
    if (is_digit(c)) return lex_number(pos);
    if (is_name_start(c)) {
      size_t end = pos;
      while (end < src_.size() && is_name_char(src_[end])) ++end;
      tokens_.push_back(Token{TokenKind::kName, src_.substr(pos, end - pos), where});
      return end;
    }
    static const char* kTwo[] = {"**", "//", "==", "!=", "<=", ">="};
    for (const char* op : kTwo) {
      if (src_.compare(pos, 2, op) == 0) {
        tokens_.push_back(Token{TokenKind::kOperator, op, where});
        return pos + 2;
      }
    }
    if (std::strchr("+-*/%~<>=()[]{},.:|", c) == nullptr) {
      return error(pos, fmt::format("unexpected character '{}'", c));
    }
    if (c == '{' || c == '(' || c == '[') ++depth;
    if (c == '}' || c == ')' || c == ']') --depth;
    tokens_.push_back(Token{TokenKind::kOperator, std::string(1, c), where});
    return pos + 1;
  }

  Result<size_t> lex_number(size_t pos) {
    size_t end = pos;
    while (end < src_.size() && (is_digit(src_[end]) || src_[end] == '_')) ++end;
    bool is_float = false;
    bool after_dot = !tokens_.empty() && tokens_.back().kind == TokenKind::kOperator && tokens_.back().text == ".";
    if (!after_dot && end + 1 < src_.size() && src_[end] == '.' && is_digit(src_[end + 1])) {
      is_float = true;
      ++end;
      while (end < src_.size() && is_digit(src_[end])) ++end;
    }
    if (!after_dot && end < src_.size() && (src_[end] == 'e' || src_[end] == 'E')) {
      size_t k = end + 1;
      if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < src_.size() && is_digit(src_[k])) {
        is_float = true;
        end = k;
        while (end < src_.size() && is_digit(src_[end])) ++end;
      }
    }
    std::string text = src_.substr(pos, end - pos);
    text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
    tokens_.push_back(Token{is_float ? TokenKind::kFloat : TokenKind::kInt, text, position(pos)});
    return end;
  }

  Result<size_t> lex_string(size_t pos) {
    char quote = src_[pos];
    std::string out;
    size_t i = pos + 1;
    while (true) {
      if (i >= src_.size()) return error(pos, "unterminated string literal");
      char c = src_[i];
      if (c == quote) break;
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) return error(pos, "unterminated string literal");
      char e = src_[i + 1];
      i += 2;
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case '0': out += '\0'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case '\n': break;  // a backslash-newline continues the literal
        case 'x':
        case 'u':
        case 'U': {
          size_t digits = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
          uint32_t cp = 0;
          for (size_t k = 0; k < digits; ++k) {
            int h = i + k < src_.size() ? hex_value(src_[i + k]) : -1;
            if (h < 0) return error(i - 2, fmt::format("invalid \\{} escape", e));
            cp = cp * 16 + static_cast<uint32_t>(h);
          }
          i += digits;
          append_utf8(out, cp);
          break;
        }
        default:
          // Python keeps unknown escapes as written ("\d" stays "\d").
          out += '\\';
          out += e;
      }
    }
    tokens_.push_back(Token{TokenKind::kString, std::move(out), position(pos)});
    return i + 1;
  }

  enum class Strip { kNone, kOneNewline, kAllWhitespace };

  std::string src_;
  LexOptions options_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
  Strip strip_next_ = Strip::kNone;
};

}  // namespace

Result<std::vector<Token>> tokenize(const std::string& source, const LexOptions& options) {
  return Lexer(source, options).run();
}

}  // namespace ft::jinja
