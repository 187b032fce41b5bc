#include "runtime/text/jinja_parser.h"

#include <algorithm>
#include <initializer_list>

#include <fmt/format.h>

#include "runtime/text/jinja_strings.h"

namespace ft::jinja {
namespace {

ExprPtr make_expr(ExprKind kind, SourcePos pos) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->pos = pos;
  return e;
}

ExprPtr make_binary(ExprKind kind, std::string op, ExprPtr a, ExprPtr b) {
  auto e = make_expr(kind, a->pos);
  e->name = std::move(op);
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}

StmtPtr make_stmt(StmtKind kind, SourcePos pos) {
  auto s = std::make_unique<Stmt>();
  s->kind = kind;
  s->pos = pos;
  return s;
}

const char* describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::kText: return "text";
    case TokenKind::kExprOpen: return "'{{'";
    case TokenKind::kExprClose: return "'}}'";
    case TokenKind::kStmtOpen: return "'{%'";
    case TokenKind::kStmtClose: return "'%}'";
    case TokenKind::kEnd: return "end of template";
    default: return nullptr;
  }
}

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  Result<Body> parse_all() {
    std::string end_tag;
    FT_ASSIGN_OR_RETURN(Body body, parse_body({}, end_tag));
    return body;
  }

 private:
  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& next() { return tokens_[std::min(pos_++, tokens_.size() - 1)]; }
  bool at_op(const char* op, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::kOperator && peek(ahead).text == op;
  }
  bool at_name(const char* name, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::kName && peek(ahead).text == name;
  }

  Status error_at(const Token& t, const std::string& message) const {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("line {}, column {}: {}", t.pos.line, t.pos.column, message));
  }
  Status unexpected(const Token& t, const std::string& wanted) const {
    const char* d = describe(t);
    std::string got = d ? d : fmt::format("'{}'", t.text);
    return error_at(t, fmt::format("expected {}, got {}", wanted, got));
  }
  Status expect_op(const char* op) {
    if (!at_op(op)) return unexpected(peek(), fmt::format("'{}'", op));
    ++pos_;
    return {};
  }
  Status expect_name(const char* name) {
    if (!at_name(name)) return unexpected(peek(), fmt::format("'{}'", name));
    ++pos_;
    return {};
  }
  Status expect_kind(TokenKind kind, const char* what) {
    if (peek().kind != kind) return unexpected(peek(), what);
    ++pos_;
    return {};
  }
  Result<std::string> expect_identifier() {
    if (peek().kind != TokenKind::kName) return unexpected(peek(), "a name");
    return next().text;
  }

  // Parses statements until a `{% name %}` tag whose name is in `ends` (left
  // unconsumed after its name, which is returned in `end_tag`) or the end.
  Result<Body> parse_body(std::initializer_list<const char*> ends, std::string& end_tag) {
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.kind == TokenKind::kEnd) {
        if (ends.size() == 0) return body;
        return error_at(t, fmt::format("unexpected end of template, expected '{{% {} %}}'", *(ends.end() - 1)));
      }
      if (t.kind == TokenKind::kText) {
        auto s = make_stmt(StmtKind::kText, t.pos);
        s->name = next().text;
        body.push_back(std::move(s));
        continue;
      }
      if (t.kind == TokenKind::kExprOpen) {
        ++pos_;
        auto s = make_stmt(StmtKind::kOutput, t.pos);
        FT_ASSIGN_OR_RETURN(ExprPtr e, parse_tuple_expression());
        s->exprs.push_back(std::move(e));
        FT_RETURN_IF_ERROR(expect_kind(TokenKind::kExprClose, "'}}'"));
        body.push_back(std::move(s));
        continue;
      }
      if (t.kind != TokenKind::kStmtOpen) return unexpected(t, "text or a tag");
      const Token& name = peek(1);
      if (name.kind != TokenKind::kName) return unexpected(name, "a tag name");
      for (const char* end : ends) {
        if (name.text == end) {
          pos_ += 2;
          end_tag = name.text;
          return body;
        }
      }
      pos_ += 2;
      FT_ASSIGN_OR_RETURN(StmtPtr stmt, parse_statement(name));
      if (stmt) body.push_back(std::move(stmt));
    }
  }

  Result<StmtPtr> parse_statement(const Token& tag) {
    const std::string& n = tag.text;
    if (n == "if") return parse_if(tag);
    if (n == "for") return parse_for(tag);
    if (n == "set") return parse_set(tag);
    if (n == "macro") return parse_macro(tag);
    if (n == "filter") return parse_filter_block(tag);
    if (n == "break" || n == "continue") {
      FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'%}'"));
      return make_stmt(n == "break" ? StmtKind::kBreak : StmtKind::kContinue, tag.pos);
    }
    if (n == "generation" || n == "endgeneration") {
      // transformers marks assistant spans with these for training masks; they render nothing.
      FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'%}'"));
      return StmtPtr();
    }
    return error_at(tag, fmt::format("unknown or unsupported tag '{}'", n));
  }

  Status expect_end_tag(const std::string& got, const char* wanted, const Token& at) {
    if (got != wanted) return error_at(at, fmt::format("expected '{}', got '{}'", wanted, got));
    return expect_kind(TokenKind::kStmtClose, "'%}'");
  }

  Result<StmtPtr> parse_if(const Token& tag) {
    auto s = make_stmt(StmtKind::kIf, tag.pos);
    while (true) {
      FT_ASSIGN_OR_RETURN(ExprPtr cond, parse_expression());
      s->exprs.push_back(std::move(cond));
      FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'%}'"));
      std::string end;
      FT_ASSIGN_OR_RETURN(Body body, parse_body({"elif", "else", "endif"}, end));
      s->bodies.push_back(std::move(body));
      if (end == "elif") continue;
      if (end == "else") {
        FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'%}'"));
        const Token& at = peek();
        FT_ASSIGN_OR_RETURN(Body else_body, parse_body({"endif"}, end));
        s->bodies.push_back(std::move(else_body));
        FT_RETURN_IF_ERROR(expect_end_tag(end, "endif", at));
        return s;
      }
      FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'%}'"));
      return s;
    }
  }

  Result<ExprPtr> parse_target(bool allow_attr) {
    const Token& first = peek();
    std::vector<ExprPtr> names;
    bool parens = at_op("(");
    if (parens) ++pos_;
    while (true) {
      const Token& t = peek();
      FT_ASSIGN_OR_RETURN(std::string name, expect_identifier());
      auto e = make_expr(ExprKind::kName, t.pos);
      e->name = name;
      if (allow_attr && at_op(".")) {
        ++pos_;
        auto attr = make_expr(ExprKind::kAttr, t.pos);
        FT_ASSIGN_OR_RETURN(attr->name, expect_identifier());
        attr->args.push_back(std::move(e));
        e = std::move(attr);
      }
      names.push_back(std::move(e));
      if (!at_op(",")) break;
      ++pos_;
    }
    if (parens) FT_RETURN_IF_ERROR(expect_op(")"));
    if (names.size() == 1 && !parens) return std::move(names[0]);
    auto tuple = make_expr(ExprKind::kTuple, first.pos);
    tuple->args = std::move(names);
    return tuple;
  }

  Result<StmtPtr> parse_for(const Token& tag) {
    auto s = make_stmt(StmtKind::kFor, tag.pos);
    FT_ASSIGN_OR_RETURN(ExprPtr target, parse_target(false));
    FT_RETURN_IF_ERROR(expect_name("in"));
    // The iterable takes no ternary: a trailing `if` filters the loop instead.
    FT_ASSIGN_OR_RETURN(ExprPtr iterable, parse_tuple_expression(false));
    ExprPtr cond;
    if (at_name("if")) {
      ++pos_;
      FT_ASSIGN_OR_RETURN(cond, parse_expression());
    }
    if (at_name("recursive")) return error_at(peek(), "recursive loops are not supported");
    FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'%}'"));
    s->exprs.push_back(std::move(target));
    s->exprs.push_back(std::move(iterable));
    s->exprs.push_back(std::move(cond));
    std::string end;
    FT_ASSIGN_OR_RETURN(Body body, parse_body({"else", "endfor"}, end));
    s->bodies.push_back(std::move(body));
    Body else_body;
    if (end == "else") {
      FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'%}'"));
      const Token& at = peek();
      FT_ASSIGN_OR_RETURN(else_body, parse_body({"endfor"}, end));
      FT_RETURN_IF_ERROR(expect_end_tag(end, "endfor", at));
    } else {
      FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'%}'"));
    }
    s->bodies.push_back(std::move(else_body));
    return s;
  }

  Result<StmtPtr> parse_set(const Token& tag) {
    FT_ASSIGN_OR_RETURN(ExprPtr target, parse_target(true));
    if (at_op("=")) {
      ++pos_;
      auto s = make_stmt(StmtKind::kSet, tag.pos);
      FT_ASSIGN_OR_RETURN(ExprPtr value, parse_tuple_expression());
      FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'%}'"));
      s->exprs.push_back(std::move(target));
      s->exprs.push_back(std::move(value));
      return s;
    }
    auto s = make_stmt(StmtKind::kSetBlock, tag.pos);
    FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'=' or '%}'"));
    std::string end;
    const Token& at = peek();
    FT_ASSIGN_OR_RETURN(Body body, parse_body({"endset"}, end));
    FT_RETURN_IF_ERROR(expect_end_tag(end, "endset", at));
    s->exprs.push_back(std::move(target));
    s->bodies.push_back(std::move(body));
    return s;
  }

  Result<StmtPtr> parse_macro(const Token& tag) {
    auto s = make_stmt(StmtKind::kMacro, tag.pos);
    FT_ASSIGN_OR_RETURN(s->name, expect_identifier());
    FT_RETURN_IF_ERROR(expect_op("("));
    while (!at_op(")")) {
      FT_ASSIGN_OR_RETURN(std::string param, expect_identifier());
      s->params.push_back(param);
      ExprPtr def;
      if (at_op("=")) {
        ++pos_;
        FT_ASSIGN_OR_RETURN(def, parse_expression());
      }
      s->exprs.push_back(std::move(def));
      if (!at_op(",")) break;
      ++pos_;
    }
    FT_RETURN_IF_ERROR(expect_op(")"));
    FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'%}'"));
    std::string end;
    const Token& at = peek();
    FT_ASSIGN_OR_RETURN(Body body, parse_body({"endmacro"}, end));
    FT_RETURN_IF_ERROR(expect_end_tag(end, "endmacro", at));
    s->bodies.push_back(std::move(body));
    return s;
  }

  Result<StmtPtr> parse_filter_block(const Token& tag) {
    auto s = make_stmt(StmtKind::kFilterBlock, tag.pos);
    FT_ASSIGN_OR_RETURN(ExprPtr filter, parse_filter(ExprPtr()));
    FT_RETURN_IF_ERROR(expect_kind(TokenKind::kStmtClose, "'%}'"));
    std::string end;
    const Token& at = peek();
    FT_ASSIGN_OR_RETURN(Body body, parse_body({"endfilter"}, end));
    FT_RETURN_IF_ERROR(expect_end_tag(end, "endfilter", at));
    s->exprs.push_back(std::move(filter));
    s->bodies.push_back(std::move(body));
    return s;
  }

  // expression (',' expression)* : a bare tuple where Jinja allows one.
  Result<ExprPtr> parse_tuple_expression(bool with_ternary = true) {
    FT_ASSIGN_OR_RETURN(ExprPtr first, with_ternary ? parse_expression() : parse_or());
    if (!at_op(",")) return first;
    auto tuple = make_expr(ExprKind::kTuple, first->pos);
    tuple->args.push_back(std::move(first));
    while (at_op(",")) {
      ++pos_;
      if (peek().kind != TokenKind::kName && peek().kind != TokenKind::kString &&
          peek().kind != TokenKind::kInt && peek().kind != TokenKind::kFloat && !at_op("(") &&
          !at_op("[") && !at_op("{") && !at_op("-") && !at_op("+")) {
        break;
      }
      FT_ASSIGN_OR_RETURN(ExprPtr item, with_ternary ? parse_expression() : parse_or());
      tuple->args.push_back(std::move(item));
    }
    return tuple;
  }

  Result<ExprPtr> parse_expression() {
    FT_ASSIGN_OR_RETURN(ExprPtr value, parse_or());
    if (!at_name("if")) return value;
    ++pos_;
    auto t = make_expr(ExprKind::kTernary, value->pos);
    FT_ASSIGN_OR_RETURN(ExprPtr cond, parse_or());
    ExprPtr otherwise;
    if (at_name("else")) {
      ++pos_;
      FT_ASSIGN_OR_RETURN(otherwise, parse_expression());
    }
    t->args.push_back(std::move(value));
    t->args.push_back(std::move(cond));
    t->args.push_back(std::move(otherwise));
    return t;
  }

  Result<ExprPtr> parse_or() {
    FT_ASSIGN_OR_RETURN(ExprPtr left, parse_and());
    while (at_name("or")) {
      ++pos_;
      FT_ASSIGN_OR_RETURN(ExprPtr right, parse_and());
      left = make_binary(ExprKind::kOr, "or", std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> parse_and() {
    FT_ASSIGN_OR_RETURN(ExprPtr left, parse_not());
    while (at_name("and")) {
      ++pos_;
      FT_ASSIGN_OR_RETURN(ExprPtr right, parse_not());
      left = make_binary(ExprKind::kAnd, "and", std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> parse_not() {
    if (!at_name("not")) return parse_compare();
    const Token& t = next();
    FT_ASSIGN_OR_RETURN(ExprPtr operand, parse_not());
    auto e = make_expr(ExprKind::kUnary, t.pos);
    e->name = "not";
    e->args.push_back(std::move(operand));
    return e;
  }

  Result<ExprPtr> parse_compare() {
    FT_ASSIGN_OR_RETURN(ExprPtr left, parse_math1());
    while (true) {
      std::string op;
      if (peek().kind == TokenKind::kOperator &&
          (peek().text == "==" || peek().text == "!=" || peek().text == "<" || peek().text == ">" ||
           peek().text == "<=" || peek().text == ">=")) {
        op = next().text;
      } else if (at_name("in")) {
        ++pos_;
        op = "in";
      } else if (at_name("not") && at_name("in", 1)) {
        pos_ += 2;
        op = "not in";
      } else {
        return left;
      }
      FT_ASSIGN_OR_RETURN(ExprPtr right, parse_math1());
      left = make_binary(ExprKind::kBinary, op, std::move(left), std::move(right));
    }
  }

  template <typename Next>
  Result<ExprPtr> parse_left_assoc(std::initializer_list<const char*> ops, Next next_level) {
    FT_ASSIGN_OR_RETURN(ExprPtr left, next_level());
    while (true) {
      const char* hit = nullptr;
      for (const char* op : ops) {
        if (at_op(op)) hit = op;
      }
      if (!hit) return left;
      ++pos_;
      FT_ASSIGN_OR_RETURN(ExprPtr right, next_level());
      left = make_binary(ExprKind::kBinary, hit, std::move(left), std::move(right));
    }
  }

  Result<ExprPtr> parse_math1() {
    return parse_left_assoc({"+", "-"}, [this] { return parse_concat(); });
  }
  Result<ExprPtr> parse_concat() {
    return parse_left_assoc({"~"}, [this] { return parse_math2(); });
  }
  Result<ExprPtr> parse_math2() {
    return parse_left_assoc({"*", "/", "//", "%"}, [this] { return parse_pow(); });
  }
  Result<ExprPtr> parse_pow() {
    return parse_left_assoc({"**"}, [this] { return parse_unary(true); });
  }

  Result<ExprPtr> parse_unary(bool with_filter) {
    ExprPtr node;
    if (at_op("-") || at_op("+")) {
      const Token& t = next();
      FT_ASSIGN_OR_RETURN(ExprPtr operand, parse_unary(false));
      node = make_expr(ExprKind::kUnary, t.pos);
      node->name = t.text;
      node->args.push_back(std::move(operand));
    } else {
      FT_ASSIGN_OR_RETURN(node, parse_primary());
    }
    FT_ASSIGN_OR_RETURN(node, parse_postfix(std::move(node)));
    if (!with_filter) return node;
    while (true) {
      if (at_op("|")) {
        FT_ASSIGN_OR_RETURN(node, parse_filter(std::move(node)));
      } else if (at_name("is")) {
        FT_ASSIGN_OR_RETURN(node, parse_test(std::move(node)));
      } else if (at_op("(")) {
        FT_ASSIGN_OR_RETURN(node, parse_call(std::move(node)));
      } else {
        return node;
      }
    }
  }

  Result<ExprPtr> parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::kName: {
        ++pos_;
        auto e = make_expr(ExprKind::kLiteral, t.pos);
        if (t.text == "true" || t.text == "True") {
          e->literal = Value(true);
        } else if (t.text == "false" || t.text == "False") {
          e->literal = Value(false);
        } else if (t.text == "none" || t.text == "None") {
          e->literal = Value::none();
        } else {
          e->kind = ExprKind::kName;
          e->name = t.text;
        }
        return e;
      }
      case TokenKind::kString: {
        auto e = make_expr(ExprKind::kLiteral, t.pos);
        std::string s;
        while (peek().kind == TokenKind::kString) s += next().text;  // adjacent literals join
        e->literal = Value(std::move(s));
        return e;
      }
      case TokenKind::kInt:
      case TokenKind::kFloat: {
        ++pos_;
        auto e = make_expr(ExprKind::kLiteral, t.pos);
        try {
          e->literal = t.kind == TokenKind::kInt ? Value(static_cast<int64_t>(std::stoll(t.text)))
                                                 : Value(std::stod(t.text));
        } catch (const std::exception&) {
          return error_at(t, fmt::format("number out of range: {}", t.text));
        }
        return e;
      }
      case TokenKind::kOperator:
        if (t.text == "(") return parse_paren();
        if (t.text == "[") return parse_list();
        if (t.text == "{") return parse_dict();
        break;
      default: break;
    }
    return unexpected(t, "an expression");
  }

  Result<ExprPtr> parse_paren() {
    const Token& open = next();
    if (at_op(")")) {
      ++pos_;
      return make_expr(ExprKind::kTuple, open.pos);
    }
    FT_ASSIGN_OR_RETURN(ExprPtr inner, parse_tuple_expression());
    FT_RETURN_IF_ERROR(expect_op(")"));
    return inner;
  }

  Result<ExprPtr> parse_list() {
    auto e = make_expr(ExprKind::kList, next().pos);
    while (!at_op("]")) {
      FT_ASSIGN_OR_RETURN(ExprPtr item, parse_expression());
      e->args.push_back(std::move(item));
      if (!at_op(",")) break;
      ++pos_;
    }
    FT_RETURN_IF_ERROR(expect_op("]"));
    return e;
  }

  Result<ExprPtr> parse_dict() {
    auto e = make_expr(ExprKind::kDict, next().pos);
    while (!at_op("}")) {
      FT_ASSIGN_OR_RETURN(ExprPtr key, parse_expression());
      FT_RETURN_IF_ERROR(expect_op(":"));
      FT_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
      e->args.push_back(std::move(key));
      e->args.push_back(std::move(value));
      if (!at_op(",")) break;
      ++pos_;
    }
    FT_RETURN_IF_ERROR(expect_op("}"));
    return e;
  }

  Result<ExprPtr> parse_postfix(ExprPtr node) {
    while (true) {
      if (at_op(".")) {
        const Token& dot = next();
        const Token& t = next();
        if (t.kind == TokenKind::kName) {
          auto e = make_expr(ExprKind::kAttr, dot.pos);
          e->name = t.text;
          e->args.push_back(std::move(node));
          node = std::move(e);
        } else if (t.kind == TokenKind::kInt) {
          const std::optional<int64_t> i = parse_decimal_digits(t.text);
          if (!i) return error_at(t, fmt::format("index out of range: {}", t.text));
          auto index = make_expr(ExprKind::kLiteral, t.pos);
          index->literal = Value(*i);
          node = make_binary(ExprKind::kItem, "", std::move(node), std::move(index));
        } else {
          return unexpected(t, "an attribute name");
        }
      } else if (at_op("[")) {
        FT_ASSIGN_OR_RETURN(node, parse_subscript(std::move(node)));
      } else if (at_op("(")) {
        FT_ASSIGN_OR_RETURN(node, parse_call(std::move(node)));
      } else {
        return node;
      }
    }
  }

  Result<ExprPtr> parse_subscript(ExprPtr object) {
    const Token& open = next();
    ExprPtr parts[3];
    int colons = 0;
    for (int i = 0; i < 3; ++i) {
      if (!at_op(":") && !at_op("]")) {
        FT_ASSIGN_OR_RETURN(parts[i], parse_expression());
      }
      if (i < 2 && at_op(":")) {
        ++pos_;
        ++colons;
        continue;
      }
      break;
    }
    FT_RETURN_IF_ERROR(expect_op("]"));
    if (colons == 0) {
      if (!parts[0]) return error_at(open, "empty subscript");
      return make_binary(ExprKind::kItem, "", std::move(object), std::move(parts[0]));
    }
    auto e = make_expr(ExprKind::kSlice, open.pos);
    e->args.push_back(std::move(object));
    for (auto& p : parts) e->args.push_back(std::move(p));
    return e;
  }

  // Parses "(args)" into node->args (after the existing ones) and node->kwargs.
  Status parse_call_args(Expr& node) {
    FT_RETURN_IF_ERROR(expect_op("("));
    while (!at_op(")")) {
      if (peek().kind == TokenKind::kName && at_op("=", 1)) {
        std::string key = next().text;
        ++pos_;
        FT_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
        node.kwargs.emplace_back(std::move(key), std::move(value));
      } else {
        if (!node.kwargs.empty()) return error_at(peek(), "positional argument follows keyword argument");
        FT_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
        node.args.push_back(std::move(value));
      }
      if (!at_op(",")) break;
      ++pos_;
    }
    return expect_op(")");
  }

  Result<ExprPtr> parse_call(ExprPtr callee) {
    auto e = make_expr(ExprKind::kCall, peek().pos);
    e->args.push_back(std::move(callee));
    FT_RETURN_IF_ERROR(parse_call_args(*e));
    return e;
  }

  // `| name(args)`; with a null operand for `{% filter %}` blocks (no leading '|').
  Result<ExprPtr> parse_filter(ExprPtr operand) {
    if (operand) ++pos_;
    const Token& t = peek();
    auto e = make_expr(ExprKind::kFilter, t.pos);
    FT_ASSIGN_OR_RETURN(e->name, expect_identifier());
    while (at_op(".") && peek(1).kind == TokenKind::kName) {
      pos_ += 2;
      e->name += "." + tokens_[pos_ - 1].text;
    }
    e->args.push_back(std::move(operand));
    if (at_op("(")) FT_RETURN_IF_ERROR(parse_call_args(*e));
    return e;
  }

  Result<ExprPtr> parse_test(ExprPtr operand) {
    ++pos_;  // 'is'
    auto e = make_expr(ExprKind::kTest, peek().pos);
    if (at_name("not")) {
      ++pos_;
      e->negated = true;
    }
    FT_ASSIGN_OR_RETURN(e->name, expect_identifier());
    e->args.push_back(std::move(operand));
    if (at_op("(")) {
      FT_RETURN_IF_ERROR(parse_call_args(*e));
      return e;
    }
    // A test may take one argument without parentheses: `x is divisibleby 3`.
    const Token& t = peek();
    bool starts_arg = t.kind == TokenKind::kString || t.kind == TokenKind::kInt ||
                      t.kind == TokenKind::kFloat || at_op("[") || at_op("{") ||
                      (t.kind == TokenKind::kName && t.text != "else" && t.text != "or" &&
                       t.text != "and" && t.text != "if" && t.text != "in" && t.text != "not" &&
                       t.text != "is");
    if (starts_arg) {
      FT_ASSIGN_OR_RETURN(ExprPtr arg, parse_primary());
      FT_ASSIGN_OR_RETURN(arg, parse_postfix(std::move(arg)));
      e->args.push_back(std::move(arg));
    }
    return e;
  }

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
};

}  // namespace

Result<Body> parse_template(const std::vector<Token>& tokens) { return Parser(tokens).parse_all(); }

}  // namespace ft::jinja
