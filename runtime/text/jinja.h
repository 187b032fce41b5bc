// A Jinja2 interpreter for chat templates.
//
// Covers what the chat templates of Qwen2.5/Qwen3, Llama-3.x, Mistral and Gemma
// use: if/for/set/macro/filter blocks, namespace(), loop controls, whitespace
// control with trim_blocks and lstrip_blocks on (as HF transformers renders),
// Python-semantics values, Jinja2's common filters and tests, str/dict/list
// methods, and transformers' globals (raise_exception, strftime_now) and tojson.
//
// Where Python's Jinja2 (as transformers runs it) and this interpreter differ:
//  - an attribute or item of an undefined value is undefined (Jinja2 raises);
//    printing it gives "", calling it is an error, as in Jinja2;
//  - list.append/pop/extend work (transformers' immutable sandbox refuses them);
//  - macros accept extra arguments into `varargs`/`kwargs` without referencing them;
//  - upper/lower/title/capitalize map ASCII letters only;
//  - not supported: `{% call %}` blocks, recursive loops, `{% include %}`/`{% extends %}`
//    and other tags that need a loader, str.format specs ("{:>8}"), string % formatting.
// Against @huggingface/jinja the outputs of the real templates are identical;
// where that library departs from Python (str.strip(chars) ignoring chars,
// printing none as "", true as "true") this interpreter follows Python.
//
// A JinjaTemplate is immutable after parse() and may be rendered from several
// threads at once; each render() call has its own state.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.h"

namespace ft::jinja {
struct Stmt;
}

namespace ft {

class JinjaTemplate {
 public:
  // Parse errors name the template line and column.
  static Result<JinjaTemplate> parse(const std::string& source);

  // `variables` is a JSON object (key order is kept, so tojson writes keys in
  // the order given). Runtime errors, raise_exception() included, name the
  // template line and column.
  Result<std::string> render(const nlohmann::ordered_json& variables) const;

 private:
  using Body = std::vector<std::unique_ptr<jinja::Stmt>>;
  explicit JinjaTemplate(std::shared_ptr<const Body> body) : body_(std::move(body)) {}

  std::shared_ptr<const Body> body_;
};

}  // namespace ft
