#include "runtime/text/jinja.h"

#include "runtime/text/jinja_interpreter.h"
#include "runtime/text/jinja_lexer.h"
#include "runtime/text/jinja_parser.h"

namespace ft {

Result<JinjaTemplate> JinjaTemplate::parse(const std::string& source) {
  auto tokens = jinja::tokenize(source);
  if (!tokens.ok()) return Status(tokens.status()).with_context("template syntax error");
  auto body = jinja::parse_template(*tokens);
  if (!body.ok()) return Status(body.status()).with_context("template syntax error");
  return JinjaTemplate(std::make_shared<const Body>(std::move(body).value()));
}

Result<std::string> JinjaTemplate::render(const nlohmann::ordered_json& variables) const {
  if (!variables.is_object()) {
    return Status(ErrorCode::kInvalidArgument, "template variables must be a JSON object");
  }
  auto globals = std::make_shared<jinja::Scope>();
  jinja::add_globals(*globals);
  auto context = std::make_shared<jinja::Scope>(globals);
  for (const auto& [name, value] : variables.items()) context->set(name, jinja::Value::from_json(value));
  jinja::Interpreter interpreter;
  auto out = interpreter.render(*body_, context);
  if (!out.ok()) return Status(out.status()).with_context("template error");
  return out;
}

}  // namespace ft
