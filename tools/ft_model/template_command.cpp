#include "tools/ft_model/template_command.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "runtime/base/files.h"
#include "runtime/engine/model_text.h"
#include "runtime/text/chat_template.h"
#include "tools/common/cli_args.h"

namespace ft::tools {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kUsage =
    "usage: ft-model template --model DIR|tokenizer_config.json|FILE.gguf|FILE.jinja --messages JSON\n"
    "                         [--tools JSON] [--no-generation-prompt] [--enable-thinking true|false]\n"
    "                         [--var NAME=JSON]... [--bos TEXT] [--eos TEXT]\n"
    "\n"
    "Renders the model's chat template and prints the prompt (nothing added around it).\n"
    "  --model PATH            a model folder (chat_template.jinja or tokenizer_config.json),\n"
    "                          a tokenizer_config.json, a GGUF file (tokenizer.chat_template)\n"
    "                          or a template file\n"
    "  --messages JSON         OpenAI-style messages: [{\"role\": \"user\", \"content\": \"hi\"}]\n"
    "  --tools JSON            OpenAI-style tool definitions: [{\"type\": \"function\", ...}]\n"
    "  --no-generation-prompt  leave out the assistant header that starts the reply\n"
    "  --enable-thinking B     pass enable_thinking=B to the template (Qwen3)\n"
    "  --var NAME=JSON         another template variable (e.g. date_string='\"01 Jan 2025\"')\n"
    "  --bos TEXT, --eos TEXT  override the special tokens read from the model\n"
    "A JSON value starting with @ is read from that file (@messages.json).\n";

struct Options {
  std::string model;
  ChatRenderOptions render;
};

Result<json> parse_json_arg(const std::string& flag, const std::string& text) {
  std::string body = text;
  if (!text.empty() && text[0] == '@') {
    FT_ASSIGN_OR_RETURN(body, read_file(text.substr(1)));
  }
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status(ErrorCode::kInvalidArgument, flag + ": not valid JSON");
  return parsed;
}

// The options from the command line; a usage error comes back as kInvalidArgument.
Result<Options> options_from(const CliArgs& args) {
  if (!args.positional().empty())
    return Status(ErrorCode::kInvalidArgument, "unexpected argument " + args.positional()[0]);
  Options o;
  o.model = args.get("--model");
  if (o.model.empty()) return Status(ErrorCode::kInvalidArgument, "--model is required");
  if (!args.has("--messages")) return Status(ErrorCode::kInvalidArgument, "--messages is required");
  FT_ASSIGN_OR_RETURN(o.render.messages, parse_json_arg("--messages", args.get("--messages")));
  if (!o.render.messages.is_array()) return Status(ErrorCode::kInvalidArgument, "--messages must be a JSON array");
  if (args.has("--tools")) {
    FT_ASSIGN_OR_RETURN(o.render.tools, parse_json_arg("--tools", args.get("--tools")));
    if (!o.render.tools.is_array()) return Status(ErrorCode::kInvalidArgument, "--tools must be a JSON array");
  }
  o.render.add_generation_prompt = !args.has("--no-generation-prompt");
  if (args.has("--enable-thinking")) {
    const std::string v = args.get("--enable-thinking");
    if (v != "true" && v != "false") return Status(ErrorCode::kInvalidArgument, "--enable-thinking takes true or false");
    o.render.enable_thinking = v == "true";
  }
  for (const std::string& v : args.get_all("--var")) {
    size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0) return Status(ErrorCode::kInvalidArgument, "--var takes NAME=JSON");
    FT_ASSIGN_OR_RETURN(json parsed, parse_json_arg("--var " + v.substr(0, eq), v.substr(eq + 1)));
    o.render.extra[v.substr(0, eq)] = std::move(parsed);
  }
  if (args.has("--bos")) o.render.bos_token = args.get("--bos");
  if (args.has("--eos")) o.render.eos_token = args.get("--eos");
  return o;
}

Result<ChatTemplate> load_template(const std::string& path) {
  FT_ASSIGN_OR_RETURN(std::optional<ChatTemplate> t, load_model_chat_template(path));
  if (!t) return FT_ERROR(ErrorCode::kNotFound, "{} has no chat template (tokenizer.chat_template)", path);
  return std::move(*t);
}

Result<std::string> render(const Options& o) {
  Result<ChatTemplate> t = load_template(o.model);
  if (!t.ok()) return t.status();
  return t->render(o.render);
}

}  // namespace

int run_template_command(int argc, char** argv) {
  auto args = CliArgs::parse({.value_options = {"--model", "--messages", "--tools", "--enable-thinking", "--var", "--bos",
                                                "--eos"},
                              .flags = {"--no-generation-prompt"}},
                             argc - 1, argv + 1);
  if (args.ok() && args->help()) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  auto options = args.ok() ? options_from(*args) : Result<Options>(args.status());
  if (!options.ok()) {
    std::fprintf(stderr, "ft-model template: %s\n\n%s", options.status().message().c_str(), kUsage);
    return 2;
  }
  auto prompt = render(*options);
  if (!prompt.ok()) {
    std::fprintf(stderr, "ft-model template: %s\n", prompt.status().to_string().c_str());
    return 1;
  }
  std::fwrite(prompt->data(), 1, prompt->size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace ft::tools
