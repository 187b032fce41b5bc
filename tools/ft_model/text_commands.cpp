// ft-model tokenize / detokenize (and the dispatch of template, which has its
// own file and owner).
#include "tools/ft_model/text_commands.h"

#include <charconv>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "runtime/engine/model_text.h"
#include "runtime/text/tokenizer.h"
#include "tools/common/cli_args.h"

#if __has_include("tools/ft_model/template_command.h")
#include "tools/ft_model/template_command.h"
#define FT_TEXT_HAVE_TEMPLATE 1
#endif

namespace ft::tools {
namespace {

constexpr const char* kTokenizeHelp =
    "usage: ft-model tokenize --model FILE|DIR [--json] [--no-special] [--no-add-special] TEXT\n"
    "  Prints the token ids of TEXT (\"-\" reads standard input), separated by spaces.\n"
    "  --model       a .gguf file, a folder holding tokenizer.json (+ tokenizer_config.json),\n"
    "                or the path of a tokenizer.json\n"
    "  --json        print {\"ids\": [...], \"tokens\": [...]} (tokens as the vocabulary writes them)\n"
    "  --no-special  special tokens written in TEXT are encoded as plain text\n"
    "  --no-add-special  do not add BOS/EOS even where the tokenizer config asks for them\n";

constexpr const char* kDetokenizeHelp =
    "usage: ft-model detokenize --model FILE|DIR [--skip-special] ID...\n"
    "  Prints the text of the token ids, followed by a newline.\n"
    "  --model         as for tokenize\n"
    "  --skip-special  leave special tokens out of the text\n";

struct TextArgs {
  std::string model;
  bool json = false;
  bool parse_special = true;
  bool add_special = true;
  bool skip_special = false;
  bool help = false;
  std::vector<std::string> positional;
};

// tokenize and detokenize share one option set; "--" ends it, for TEXT that
// starts with "--".
Result<TextArgs> parse_args(int argc, char** argv) {
  FT_ASSIGN_OR_RETURN(CliArgs parsed,
                      CliArgs::parse({.value_options = {"--model"},
                                      .flags = {"--json", "--no-special", "--no-add-special", "--skip-special"}},
                                     argc - 1, argv + 1));
  TextArgs args{.model = parsed.get("--model"),
                .json = parsed.has("--json"),
                .parse_special = !parsed.has("--no-special"),
                .add_special = !parsed.has("--no-add-special"),
                .skip_special = parsed.has("--skip-special"),
                .help = parsed.help(),
                .positional = parsed.positional()};
  if (!args.help && args.model.empty()) return FT_ERROR(ErrorCode::kInvalidArgument, "--model is required");
  return args;
}

Result<Tokenizer> load_tokenizer(const std::string& path) { return load_model_tokenizer(path); }

int fail(const char* command, const Status& status) {
  std::fprintf(stderr, "ft-model %s: %s\n", command, status.to_string().c_str());
  return 1;
}

int usage_error(const char* command, const std::string& message, const char* help) {
  std::fprintf(stderr, "ft-model %s: %s\n\n%s", command, message.c_str(), help);
  return 2;
}

int run_tokenize(int argc, char** argv) {
  Result<TextArgs> args = parse_args(argc, argv);
  if (!args.ok()) return usage_error("tokenize", args.status().message(), kTokenizeHelp);
  if (args->help) return std::fputs(kTokenizeHelp, stdout), 0;
  if (args->positional.size() != 1) {
    return usage_error("tokenize", "give exactly one TEXT (quote it; \"-\" reads standard input)", kTokenizeHelp);
  }
  std::string text = args->positional[0];
  if (text == "-") text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());

  Result<Tokenizer> tokenizer = load_tokenizer(args->model);
  if (!tokenizer.ok()) return fail("tokenize", tokenizer.status());
  EncodeOptions options{.parse_special = args->parse_special, .add_special = args->add_special};
  Result<std::vector<int32_t>> ids = tokenizer->encode(text, options);
  if (!ids.ok()) return fail("tokenize", ids.status());

  if (args->json) {
    nlohmann::json tokens = nlohmann::json::array();
    for (int32_t id : *ids) tokens.push_back(tokenizer->token_string(id));
    nlohmann::json out = {{"ids", *ids}, {"tokens", tokens}};
    // Token strings of byte-level pieces are valid UTF-8; "replace" only
    // guards against a hand-made vocabulary that is not.
    std::puts(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::string line;
  for (size_t i = 0; i < ids->size(); ++i) line += (i ? " " : "") + std::to_string((*ids)[i]);
  std::puts(line.c_str());
  return 0;
}

int run_detokenize(int argc, char** argv) {
  Result<TextArgs> args = parse_args(argc, argv);
  if (!args.ok()) return usage_error("detokenize", args.status().message(), kDetokenizeHelp);
  if (args->help) return std::fputs(kDetokenizeHelp, stdout), 0;
  std::vector<int32_t> ids;
  for (const std::string& arg : args->positional) {
    int32_t id = 0;
    auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), id);
    if (ec != std::errc() || end != arg.data() + arg.size()) {
      return usage_error("detokenize", fmt::format("\"{}\" is not a token id", arg), kDetokenizeHelp);
    }
    ids.push_back(id);
  }
  Result<Tokenizer> tokenizer = load_tokenizer(args->model);
  if (!tokenizer.ok()) return fail("detokenize", tokenizer.status());
  Result<std::string> text = tokenizer->decode(ids, DecodeOptions{.skip_special = args->skip_special});
  if (!text.ok()) return fail("detokenize", text.status());
  std::fwrite(text->data(), 1, text->size(), stdout);
  std::fputc('\n', stdout);
  return 0;
}

int run_template(int argc, char** argv) {
#ifdef FT_TEXT_HAVE_TEMPLATE
  return run_template_command(argc, argv);
#else
  std::fputs("ft-model template: not built (this ft-model has no chat-template module)\n", stderr);
  return 2;
#endif
}

}  // namespace

bool is_text_command(const std::string& command) {
  return command == "tokenize" || command == "detokenize" || command == "template";
}

int run_text_command(int argc, char** argv) {
  const std::string command = argc > 0 ? argv[0] : "";
  if (command == "tokenize") return run_tokenize(argc, argv);
  if (command == "detokenize") return run_detokenize(argc, argv);
  if (command == "template") return run_template(argc, argv);
  std::fprintf(stderr, "ft-model: '%s' is not a text command\n", command.c_str());
  return 2;
}

std::string text_commands_help() {
  return "  tokenize --model M TEXT [--json]  token ids of TEXT (M: .gguf, tokenizer folder or tokenizer.json)\n"
         "  detokenize --model M ID...        text of token ids\n"
         "  template --model M --messages J   the rendered chat prompt (--tools J)\n";
}

}  // namespace ft::tools
