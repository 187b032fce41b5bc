#include "runtime/text/jinja_interpreter.h"

#include <algorithm>

#include "runtime/text/jinja_strings.h"

namespace ft::jinja {
namespace {

// Deep enough for any real template; stops runaway recursive macros.
constexpr int kMaxCallDepth = 200;

Status undefined_error(const Value& v, const std::string& fallback) {
  const std::string& name = v.undefined_name();
  return Status(ErrorCode::kInvalidArgument, name.empty() ? fallback : name);
}

Value make_loop(size_t i, const std::vector<Value>& items) {
  Value loop = Value::dict();
  Dict& d = loop.as_dict();
  int64_t n = static_cast<int64_t>(items.size());
  int64_t k = static_cast<int64_t>(i);
  d.entries = {
      {"index", Value(k + 1)},
      {"index0", Value(k)},
      {"revindex", Value(n - k)},
      {"revindex0", Value(n - k - 1)},
      {"first", Value(k == 0)},
      {"last", Value(k == n - 1)},
      {"length", Value(n)},
      {"previtem", i > 0 ? items[i - 1] : Value::undefined("there is no previous item")},
      {"nextitem", i + 1 < items.size() ? items[i + 1] : Value::undefined("there is no next item")},
  };
  d.entries.emplace_back("cycle", make_callable("loop.cycle", [k](CallArgs& args) -> Result<Value> {
                           if (args.positional.empty()) {
                             return Status(ErrorCode::kInvalidArgument, "no items for cycling given");
                           }
                           return args.positional[static_cast<size_t>(k) % args.positional.size()];
                         }));
  return loop;
}

}  // namespace

const Value* Scope::lookup(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent_.get()) {
    auto it = s->vars_.find(name);
    if (it != s->vars_.end()) return &it->second;
  }
  return nullptr;
}

Status Interpreter::locate(const SourcePos& pos, Status status) {
  if (status.ok() || located_) return status;
  located_ = true;
  return Status(status.code(), fmt::format("line {}, column {}: {}", pos.line, pos.column, status.message()));
}

Result<std::string> Interpreter::render(const Body& body, ScopePtr context) {
  std::string out;
  FT_ASSIGN_OR_RETURN(Flow flow, exec_body(body, context, out));
  (void)flow;  // break/continue outside a loop are ignored, as in Jinja2's loopcontrols
  return out;
}

Result<Interpreter::Flow> Interpreter::exec_body(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const StmtPtr& s : body) {
    FT_ASSIGN_OR_RETURN(Flow flow, exec(*s, scope, out));
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Result<Interpreter::Flow> Interpreter::exec(const Stmt& s, const ScopePtr& scope, std::string& out) {
  switch (s.kind) {
    case StmtKind::kText: out += s.name; return Flow::kNormal;
    case StmtKind::kOutput: {
      FT_ASSIGN_OR_RETURN(Value v, eval(*s.exprs[0], scope));
      out += v.str();
      return Flow::kNormal;
    }
    case StmtKind::kIf:
      for (size_t i = 0; i < s.bodies.size(); ++i) {
        bool take = i >= s.exprs.size();  // the else branch
        if (!take) {
          FT_ASSIGN_OR_RETURN(Value cond, eval(*s.exprs[i], scope));
          take = cond.truthy();
        }
        if (take) return exec_body(s.bodies[i], scope, out);
      }
      return Flow::kNormal;
    case StmtKind::kFor: return exec_for(s, scope, out);
    case StmtKind::kSet: {
      FT_ASSIGN_OR_RETURN(Value v, eval(*s.exprs[1], scope));
      FT_RETURN_IF_ERROR(assign(*s.exprs[0], std::move(v), scope));
      return Flow::kNormal;
    }
    case StmtKind::kSetBlock: {
      std::string captured;
      FT_ASSIGN_OR_RETURN(Flow flow, exec_body(s.bodies[0], scope, captured));
      (void)flow;
      FT_RETURN_IF_ERROR(assign(*s.exprs[0], Value(std::move(captured)), scope));
      return Flow::kNormal;
    }
    case StmtKind::kMacro: scope->set(s.name, define_macro(s, scope)); return Flow::kNormal;
    case StmtKind::kFilterBlock: {
      std::string captured;
      FT_ASSIGN_OR_RETURN(Flow flow, exec_body(s.bodies[0], scope, captured));
      (void)flow;
      FT_ASSIGN_OR_RETURN(Value v, eval_filter(*s.exprs[0], Value(std::move(captured)), scope));
      out += v.str();
      return Flow::kNormal;
    }
    case StmtKind::kBreak: return Flow::kBreak;
    case StmtKind::kContinue: return Flow::kContinue;
  }
  return Flow::kNormal;
}

Result<Interpreter::Flow> Interpreter::exec_for(const Stmt& s, const ScopePtr& scope, std::string& out) {
  const Expr& target = *s.exprs[0];
  FT_ASSIGN_OR_RETURN(Value iterable, eval(*s.exprs[1], scope));
  auto listed = iterate(iterable);
  if (!listed.ok()) return locate(s.exprs[1]->pos, listed.status());
  auto loop_scope = std::make_shared<Scope>(scope);
  std::vector<Value> items;
  if (s.exprs[2]) {
    // The loop filter runs first, so loop.length and loop.last count kept items only.
    for (Value& item : listed.value()) {
      FT_RETURN_IF_ERROR(assign(target, item, loop_scope));
      FT_ASSIGN_OR_RETURN(Value keep, eval(*s.exprs[2], loop_scope));
      if (keep.truthy()) items.push_back(std::move(item));
    }
  } else {
    items = std::move(listed.value());
  }
  for (size_t i = 0; i < items.size(); ++i) {
    loop_scope->set("loop", make_loop(i, items));
    FT_RETURN_IF_ERROR(assign(target, items[i], loop_scope));
    FT_ASSIGN_OR_RETURN(Flow flow, exec_body(s.bodies[0], loop_scope, out));
    if (flow == Flow::kBreak) break;
  }
  if (items.empty()) {
    FT_ASSIGN_OR_RETURN(Flow flow, exec_body(s.bodies[1], loop_scope, out));
    (void)flow;
  }
  return Flow::kNormal;
}

Status Interpreter::assign(const Expr& target, Value value, const ScopePtr& scope) {
  if (target.kind == ExprKind::kName) {
    scope->set(target.name, std::move(value));
    return {};
  }
  if (target.kind == ExprKind::kAttr) {
    FT_ASSIGN_OR_RETURN(Value object, eval(*target.args[0], scope));
    if (!object.is_namespace()) {
      return locate(target.pos, Status(ErrorCode::kInvalidArgument,
                                       fmt::format("cannot assign attribute '{}' on a {} (only a namespace())",
                                                   target.name, object.type_name())));
    }
    object.as_dict().set(target.name, std::move(value));
    return {};
  }
  // A tuple of names: unpack.
  auto items = iterate(value);
  if (!items.ok()) return locate(target.pos, items.status());
  if (items->size() != target.args.size()) {
    return locate(target.pos, Status(ErrorCode::kInvalidArgument,
                                     fmt::format("cannot unpack {} values into {} names", items->size(),
                                                 target.args.size())));
  }
  for (size_t i = 0; i < target.args.size(); ++i) {
    FT_RETURN_IF_ERROR(assign(*target.args[i], std::move((*items)[i]), scope));
  }
  return {};
}

Value Interpreter::define_macro(const Stmt& s, const ScopePtr& scope) {
  // The macro is stored in the scope it closes over, so it holds that scope
  // weakly: a strong reference would be a cycle that leaks every render.
  std::weak_ptr<Scope> weak = scope;
  return make_callable(s.name, [this, &s, weak](CallArgs& args) -> Result<Value> {
    ScopePtr defining = weak.lock();
    if (!defining) {
      return Status(ErrorCode::kInvalidArgument, fmt::format("macro '{}' called after its scope ended", s.name));
    }
    return call_macro(s, defining, args);
  });
}

Result<Value> Interpreter::call_macro(const Stmt& s, const ScopePtr& defining, CallArgs& args) {
  auto frame = std::make_shared<Scope>(defining);
  size_t n = s.params.size();
  std::vector<Value> extra_positional;
  for (size_t i = n; i < args.positional.size(); ++i) extra_positional.push_back(args.positional[i]);
  Value extra_keywords = Value::dict();
  for (const auto& [k, v] : args.keyword) {
    if (std::find(s.params.begin(), s.params.end(), k) == s.params.end()) extra_keywords.as_dict().set(k, v);
  }
  for (size_t i = 0; i < n; ++i) {
    if (const Value* v = args.get(i, s.params[i])) {
      frame->set(s.params[i], *v);
    } else if (s.exprs[i]) {
      FT_ASSIGN_OR_RETURN(Value def, eval(*s.exprs[i], frame));
      frame->set(s.params[i], std::move(def));
    } else {
      frame->set(s.params[i], Value::undefined(fmt::format("'{}' is undefined", s.params[i])));
    }
  }
  frame->set("varargs", Value::tuple(std::move(extra_positional)));
  frame->set("kwargs", std::move(extra_keywords));
  std::string out;
  FT_ASSIGN_OR_RETURN(Flow flow, exec_body(s.bodies[0], frame, out));
  (void)flow;
  return Value(std::move(out));
}

Result<Value> Interpreter::call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) return undefined_error(callee, "called an undefined value");
  if (!callee.is_callable()) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("'{}' object is not callable", callee.type_name()));
  }
  if (depth_ >= kMaxCallDepth) {
    return Status(ErrorCode::kInvalidArgument, "maximum call depth exceeded (recursive macro?)");
  }
  ++depth_;
  auto result = callee.as_callable().fn(args);
  --depth_;
  return result;
}

Result<CallArgs> Interpreter::eval_args(const Expr& e, size_t first, const ScopePtr& scope) {
  CallArgs args;
  for (size_t i = first; i < e.args.size(); ++i) {
    FT_ASSIGN_OR_RETURN(Value v, eval(*e.args[i], scope));
    args.positional.push_back(std::move(v));
  }
  for (const auto& [k, expr] : e.kwargs) {
    FT_ASSIGN_OR_RETURN(Value v, eval(*expr, scope));
    args.keyword.emplace_back(k, std::move(v));
  }
  return args;
}

Result<Value> Interpreter::eval_call(const Expr& e, const ScopePtr& scope) {
  FT_ASSIGN_OR_RETURN(Value callee, eval(*e.args[0], scope));
  FT_ASSIGN_OR_RETURN(CallArgs args, eval_args(e, 1, scope));
  auto result = call(callee, args);
  if (!result.ok()) return locate(e.args[0]->pos, result.status());
  return result;
}

Result<Value> Interpreter::eval_filter(const Expr& e, const Value& operand, const ScopePtr& scope) {
  FT_ASSIGN_OR_RETURN(CallArgs args, eval_args(e, 1, scope));
  auto result = apply_filter(*this, e.name, operand, args);
  if (!result.ok()) return locate(e.pos, result.status());
  return result;
}

Result<Value> Interpreter::eval_test(const Expr& e, const ScopePtr& scope) {
  FT_ASSIGN_OR_RETURN(Value operand, eval(*e.args[0], scope));
  FT_ASSIGN_OR_RETURN(CallArgs args, eval_args(e, 1, scope));
  auto result = apply_test(e.name, operand, args);
  if (!result.ok()) return locate(e.pos, result.status());
  return Value(e.negated ? !*result : *result);
}

Result<Value> Interpreter::eval_slice(const Expr& e, const ScopePtr& scope) {
  FT_ASSIGN_OR_RETURN(Value object, eval(*e.args[0], scope));
  std::optional<int64_t> bounds[3];
  for (int i = 0; i < 3; ++i) {
    if (!e.args[i + 1]) continue;
    FT_ASSIGN_OR_RETURN(Value v, eval(*e.args[i + 1], scope));
    if (v.is_none()) continue;
    if (!v.is_int()) {
      return locate(e.pos, Status(ErrorCode::kInvalidArgument, "slice indices must be integers or None"));
    }
    bounds[i] = v.as_int();
  }
  int64_t step = bounds[2].value_or(1);
  if (step == 0) return locate(e.pos, Status(ErrorCode::kInvalidArgument, "slice step cannot be zero"));
  std::vector<std::string_view> cps;
  int64_t n = 0;
  if (object.is_list()) {
    n = static_cast<int64_t>(object.as_list().items.size());
  } else if (object.is_string()) {
    cps = split_code_points(object.as_string());
    n = static_cast<int64_t>(cps.size());
  } else if (!object.is_undefined()) {
    return locate(e.pos, Status(ErrorCode::kInvalidArgument,
                                fmt::format("'{}' object is not subscriptable", object.type_name())));
  }
  // Python's slice.indices(): clamp each bound according to the step's sign.
  auto clamp = [&](std::optional<int64_t> b, int64_t if_absent) {
    if (!b) return if_absent;
    int64_t v = *b < 0 ? *b + n : *b;
    if (step > 0) return std::clamp<int64_t>(v, 0, n);
    return std::clamp<int64_t>(v, -1, n - 1);
  };
  int64_t start = clamp(bounds[0], step > 0 ? 0 : n - 1);
  int64_t stop = clamp(bounds[1], step > 0 ? n : -1);
  std::vector<Value> items;
  std::string text;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (object.is_list()) {
      items.push_back(object.as_list().items[static_cast<size_t>(i)]);
    } else if (object.is_string()) {
      text.append(cps[static_cast<size_t>(i)]);
    }
  }
  if (object.is_string()) return Value(std::move(text));
  if (object.is_tuple()) return Value::tuple(std::move(items));
  return Value::list(std::move(items));
}

Result<Value> Interpreter::eval(const Expr& e, const ScopePtr& scope) {
  switch (e.kind) {
    case ExprKind::kLiteral: return e.literal;
    case ExprKind::kName: {
      if (const Value* v = scope->lookup(e.name)) return *v;
      return Value::undefined(fmt::format("'{}' is undefined", e.name));
    }
    case ExprKind::kList:
    case ExprKind::kTuple: {
      std::vector<Value> items;
      for (const ExprPtr& a : e.args) {
        FT_ASSIGN_OR_RETURN(Value v, eval(*a, scope));
        items.push_back(std::move(v));
      }
      return e.kind == ExprKind::kList ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    case ExprKind::kDict: {
      Value d = Value::dict();
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        FT_ASSIGN_OR_RETURN(Value k, eval(*e.args[i], scope));
        if (!k.is_string()) {
          return locate(e.args[i]->pos, Status(ErrorCode::kInvalidArgument, "dict keys must be strings"));
        }
        FT_ASSIGN_OR_RETURN(Value v, eval(*e.args[i + 1], scope));
        d.as_dict().set(k.as_string(), std::move(v));
      }
      return d;
    }
    case ExprKind::kAttr: {
      FT_ASSIGN_OR_RETURN(Value object, eval(*e.args[0], scope));
      return get_attribute(object, e.name);
    }
    case ExprKind::kItem: {
      FT_ASSIGN_OR_RETURN(Value object, eval(*e.args[0], scope));
      FT_ASSIGN_OR_RETURN(Value key, eval(*e.args[1], scope));
      return get_item(object, key);
    }
    case ExprKind::kSlice: return eval_slice(e, scope);
    case ExprKind::kCall: return eval_call(e, scope);
    case ExprKind::kFilter: {
      FT_ASSIGN_OR_RETURN(Value operand, eval(*e.args[0], scope));
      return eval_filter(e, operand, scope);
    }
    case ExprKind::kTest: return eval_test(e, scope);
    case ExprKind::kUnary: {
      FT_ASSIGN_OR_RETURN(Value v, eval(*e.args[0], scope));
      if (e.name == "not") return Value(!v.truthy());
      if (v.is_bool()) v = Value(int64_t{v.as_bool()});
      if (v.is_int()) return Value(e.name == "-" ? -v.as_int() : v.as_int());
      if (v.is_float()) return Value(e.name == "-" ? -v.as_float() : v.as_float());
      return locate(e.pos, Status(ErrorCode::kInvalidArgument,
                                  fmt::format("bad operand type for unary {}: '{}'", e.name, v.type_name())));
    }
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      FT_ASSIGN_OR_RETURN(Value left, eval(*e.args[0], scope));
      if (left.truthy() == (e.kind == ExprKind::kOr)) return left;
      return eval(*e.args[1], scope);
    }
    case ExprKind::kBinary: {
      FT_ASSIGN_OR_RETURN(Value a, eval(*e.args[0], scope));
      FT_ASSIGN_OR_RETURN(Value b, eval(*e.args[1], scope));
      auto result = binary_op(e.name, a, b);
      if (!result.ok()) return locate(e.pos, result.status());
      return result;
    }
    case ExprKind::kTernary: {
      FT_ASSIGN_OR_RETURN(Value cond, eval(*e.args[1], scope));
      if (cond.truthy()) return eval(*e.args[0], scope);
      if (e.args[2]) return eval(*e.args[2], scope);
      return Value::undefined("the ternary had no else branch");
    }
  }
  return Status(ErrorCode::kInternal, "unknown expression kind");
}

}  // namespace ft::jinja
