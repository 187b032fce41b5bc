// Syntax tree of a parsed Jinja template. Nodes are plain structs with a kind;
// the meaning of `args`, `name` and `bodies` per kind is listed beside each kind.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/text/jinja_lexer.h"
#include "runtime/text/jinja_value.h"

namespace ft::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  kLiteral,  // literal
  kName,     // name
  kList,     // args: items
  kTuple,    // args: items
  kDict,     // args: key, value, key, value, ...
  kAttr,     // args[0]: object; name: attribute
  kItem,     // args[0]: object, args[1]: subscript
  kSlice,    // args[0]: object, args[1..3]: start, stop, step (null when absent)
  kCall,     // args[0]: callee, args[1..]: positional; kwargs
  kFilter,   // args[0]: operand, args[1..]: positional; name: filter; kwargs
  kTest,     // args[0]: operand, args[1..]: positional; name: test; negated
  kUnary,    // args[0]: operand; name: "-", "+" or "not"
  kBinary,   // args[0], args[1]; name: operator (+ - * / // % ** ~ == != < > <= >= in "not in")
  kAnd,      // args[0], args[1]
  kOr,       // args[0], args[1]
  kTernary,  // args[0]: value if true, args[1]: condition, args[2]: value if false (may be null)
};

struct Expr {
  ExprKind kind;
  SourcePos pos;
  std::string name;
  Value literal;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  bool negated = false;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class StmtKind {
  kText,         // name: the text
  kOutput,       // exprs[0]
  kIf,           // exprs: one condition per branch; bodies: one per branch, plus else if present
  kFor,          // exprs: target, iterable, filter condition (may be null); bodies: body, else
  kSet,          // exprs: target, value
  kSetBlock,     // exprs: target; bodies[0]: captured body
  kMacro,        // name; params; exprs: defaults (null when none); bodies[0]
  kFilterBlock,  // exprs[0]: a kFilter node whose operand is null; bodies[0]
  kBreak,
  kContinue,
};

struct Stmt {
  StmtKind kind;
  SourcePos pos;
  std::string name;
  std::vector<std::string> params;
  std::vector<ExprPtr> exprs;
  std::vector<Body> bodies;
};

}  // namespace ft::jinja
