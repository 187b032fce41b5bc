// Values of the Jinja interpreter used for chat templates.
//
// Semantics follow Python's Jinja2 as HF transformers runs it (that is what the
// models were trained with): lists and dicts are shared by reference, dicts keep
// insertion order, printing uses Python's str()/repr(), and `tojson` follows
// json.dumps(ensure_ascii=False) as transformers configures it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.h"

namespace ft::jinja {

class Value;
struct List;
struct Dict;
struct Callable;
using ListPtr = std::shared_ptr<List>;
using DictPtr = std::shared_ptr<Dict>;
using CallablePtr = std::shared_ptr<const Callable>;

// An undefined value remembers what was looked up, for "'x' is undefined".
struct Undefined {
  std::string name;
};
struct None {};

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable };

  Value() : data_(Undefined{}) {}
  static Value undefined(std::string name = {}) { return Value(Undefined{std::move(name)}); }
  static Value none() { return Value(None{}); }
  Value(bool b) : data_(b) {}                      // NOLINT: implicit by design
  Value(int v) : data_(int64_t{v}) {}              // NOLINT
  Value(int64_t v) : data_(v) {}                   // NOLINT
  Value(double v) : data_(v) {}                    // NOLINT
  Value(std::string s) : data_(std::move(s)) {}    // NOLINT
  Value(const char* s) : data_(std::string(s)) {}  // NOLINT
  Value(ListPtr l) : data_(std::move(l)) {}        // NOLINT
  Value(DictPtr d) : data_(std::move(d)) {}        // NOLINT
  Value(CallablePtr c) : data_(std::move(c)) {}    // NOLINT

  static Value list(std::vector<Value> items = {});
  static Value tuple(std::vector<Value> items);
  static Value dict();
  static Value namespace_object();
  static Value from_json(const nlohmann::ordered_json& j);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_list() const { return kind() == Kind::kList; }
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_callable() const { return kind() == Kind::kCallable; }
  bool is_namespace() const;
  bool is_tuple() const;

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return std::get<int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  // Ints, floats and bools as a double (Python treats bool as int).
  double as_number() const;
  const std::string& as_string() const { return std::get<std::string>(data_); }
  List& as_list() const { return *std::get<ListPtr>(data_); }
  Dict& as_dict() const { return *std::get<DictPtr>(data_); }
  const Callable& as_callable() const { return *std::get<CallablePtr>(data_); }
  const std::string& undefined_name() const { return std::get<Undefined>(data_).name; }

  bool truthy() const;
  // Python str(): what `{{ v }}` prints (undefined prints nothing).
  std::string str() const;
  // Python repr(): how a value prints inside a list or dict.
  std::string repr() const;
  // Python type names for error messages ("str", "int", "list", ...).
  const char* type_name() const;

 private:
  explicit Value(Undefined u) : data_(std::move(u)) {}
  explicit Value(None n) : data_(n) {}

  std::variant<Undefined, None, bool, int64_t, double, std::string, ListPtr, DictPtr, CallablePtr> data_;
};

struct List {
  std::vector<Value> items;
  bool is_tuple = false;
};

// Insertion-ordered string-keyed map; a namespace() object is a Dict whose
// attributes can be assigned with `{% set ns.x = ... %}`.
struct Dict {
  std::vector<std::pair<std::string, Value>> entries;
  bool is_namespace = false;

  const Value* find(std::string_view key) const;
  void set(const std::string& key, Value value);
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;

  // Positional argument `index`, else keyword `name`, else nullptr.
  const Value* get(size_t index, std::string_view name) const;
};

struct Callable {
  std::string name;
  std::function<Result<Value>(CallArgs&)> fn;
};

Value make_callable(std::string name, std::function<Result<Value>(CallArgs&)> fn);

// Python == between two values (deep for lists and dicts; 1 == 1.0 == True).
bool values_equal(const Value& a, const Value& b);
// Python ordering (<): numbers, strings, lists; anything else is an error.
Result<int> compare_values(const Value& a, const Value& b);

struct JsonOptions {
  int indent = -1;  // < 0: one line
  bool ensure_ascii = false;
  bool sort_keys = false;
  std::string item_separator;  // empty: Python's default for the indent mode
  std::string key_separator = ": ";
};
// json.dumps of a value; callables cannot be converted.
Result<std::string> to_json(const Value& value, const JsonOptions& options);

// Python float repr: shortest round-trip digits, "1.0", "1e+16", "inf", "nan".
std::string format_float(double v);

}  // namespace ft::jinja
