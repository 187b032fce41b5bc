// Tree-walking evaluator for parsed Jinja templates (internal to ft_chat_template;
// the public entry point is jinja.h). One Interpreter renders one template once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "runtime/base/status.h"
#include "runtime/text/jinja_ast.h"
#include "runtime/text/jinja_value.h"

namespace ft::jinja {

class Scope;
using ScopePtr = std::shared_ptr<Scope>;

// Variables of one frame. Lookups walk to the parent; assignments stay local,
// which gives Jinja's rule that a `set` inside a loop does not leak out of it.
class Scope {
 public:
  explicit Scope(ScopePtr parent = nullptr) : parent_(std::move(parent)) {}
  const Value* lookup(const std::string& name) const;
  void set(const std::string& name, Value value) { vars_[name] = std::move(value); }

 private:
  ScopePtr parent_;
  std::unordered_map<std::string, Value> vars_;
};

class Interpreter {
 public:
  Interpreter() = default;

  // Renders `body` with the given variables on top of the builtin globals.
  Result<std::string> render(const Body& body, ScopePtr context);

  Result<Value> eval(const Expr& e, const ScopePtr& scope);
  Result<Value> call(const Value& callee, CallArgs& args);

  // Adds "line L, column C: " to an error that does not carry a position yet.
  Status locate(const SourcePos& pos, Status status);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Result<Flow> exec_body(const Body& body, const ScopePtr& scope, std::string& out);
  Result<Flow> exec(const Stmt& s, const ScopePtr& scope, std::string& out);
  Result<Flow> exec_for(const Stmt& s, const ScopePtr& scope, std::string& out);
  Status assign(const Expr& target, Value value, const ScopePtr& scope);
  Value define_macro(const Stmt& s, const ScopePtr& scope);
  Result<Value> call_macro(const Stmt& s, const ScopePtr& defining, CallArgs& args);

  Result<Value> eval_call(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_filter(const Expr& e, const Value& operand, const ScopePtr& scope);
  Result<Value> eval_test(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_slice(const Expr& e, const ScopePtr& scope);
  Result<CallArgs> eval_args(const Expr& e, size_t first, const ScopePtr& scope);

  bool located_ = false;
  int depth_ = 0;
};

// Python-style operators shared by the evaluator and filters.
Result<Value> binary_op(std::string_view op, const Value& a, const Value& b);
Result<bool> contains(const Value& container, const Value& item);
Value get_attribute(const Value& object, const std::string& name);
Value get_item(const Value& object, const Value& key);
// The items a `for` loop visits: list items, dict keys, string code points.
Result<std::vector<Value>> iterate(const Value& v);

// Filters, tests and methods (jinja_filters.cpp, jinja_tests.cpp, jinja_methods.cpp).
Result<Value> apply_filter(Interpreter& interp, const std::string& name, const Value& operand,
                           CallArgs& args);
Result<bool> apply_test(const std::string& name, const Value& v, CallArgs& args);
// A bound method of a str, list or dict (`s.startswith`), or undefined.
Value get_method(const Value& object, const std::string& name);
// range, namespace, dict, raise_exception, strftime_now.
void add_globals(Scope& scope);

}  // namespace ft::jinja
