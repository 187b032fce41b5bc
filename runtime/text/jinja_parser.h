// Jinja parser: tokens to a syntax tree, with Jinja2's operator precedence
// (or < and < not < comparisons < + - < ~ < * / // % < ** < unary, and filters
// and tests binding tighter than any binary operator).
#pragma once

#include <vector>

#include "runtime/base/status.h"
#include "runtime/text/jinja_ast.h"
#include "runtime/text/jinja_lexer.h"

namespace ft::jinja {

// Errors name the line and column of the offending token.
Result<Body> parse_template(const std::vector<Token>& tokens);

}  // namespace ft::jinja
