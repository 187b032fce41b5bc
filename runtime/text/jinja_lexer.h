// Jinja lexer: splits a template into text and tag tokens, applying whitespace
// control the way HF transformers configures Jinja2 (trim_blocks and
// lstrip_blocks on, `-` modifiers, one trailing newline dropped).
#pragma once

#include <string>
#include <vector>

#include "runtime/base/status.h"

namespace ft::jinja {

struct SourcePos {
  int line = 1;
  int column = 1;
};

enum class TokenKind {
  kText,
  kExprOpen,   // {{
  kExprClose,  // }}
  kStmtOpen,   // {%
  kStmtClose,  // %}
  kName,
  kString,
  kInt,
  kFloat,
  kOperator,
  kEnd,
};

struct Token {
  TokenKind kind;
  std::string text;  // text, name, decoded string literal, number or operator
  SourcePos pos;
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

// Errors name the line and column ("line 3, column 7: unterminated string").
Result<std::vector<Token>> tokenize(const std::string& source, const LexOptions& options = {});

}  // namespace ft::jinja
