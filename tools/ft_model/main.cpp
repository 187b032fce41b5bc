// ft-model: inspect, convert and synthesize model files; tokenize and render
// chat templates.
#include <cstdio>
#include <string>

#include "runtime/base/log.h"
#include "tools/ft_model/model_commands.h"
#ifdef FT_MODEL_HAVE_TEXT
#include "tools/ft_model/text_commands.h"
#endif

namespace {

bool is_text_name(const std::string& command) {
  return command == "tokenize" || command == "detokenize" || command == "template";
}

std::string usage() {
  std::string text =
      "usage: ft-model <command> [options]\n\n"
      "commands:\n" +
      ft::tools::model_commands_help();
#ifdef FT_MODEL_HAVE_TEXT
  text += ft::tools::text_commands_help();
#else
  text += "  tokenize, detokenize, template   (not built: this ft-model has no text module)\n";
#endif
  return text + "\nRun 'ft-model <command> --help' for the options of one command.\n";
}

}  // namespace

int main(int argc, char** argv) {
  ft::log::init_from_env();
  if (argc < 2) {
    std::fputs(usage().c_str(), stderr);
    return 2;
  }
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  if (ft::tools::is_model_command(command)) return ft::tools::run_model_command(argc - 1, argv + 1);
#ifdef FT_MODEL_HAVE_TEXT
  if (ft::tools::is_text_command(command)) return ft::tools::run_text_command(argc - 1, argv + 1);
#endif
  if (is_text_name(command)) {
    std::fprintf(stderr, "ft-model: '%s' is not built into this ft-model (it was built without the text module)\n",
                 command.c_str());
    return 2;
  }
  std::fprintf(stderr, "ft-model: unknown command '%s'\n\n%s", command.c_str(), usage().c_str());
  return 2;
}
