// The text subcommands of ft-model (tokenize, detokenize, template), kept
// apart from the model-file subcommands so each file stays about one thing.
#pragma once

#include <string>

namespace ft::tools {

// True when `command` is one of the text subcommands.
bool is_text_command(const std::string& command);
// Runs one text subcommand; argv[0] is the subcommand name. Returns the exit code.
int run_text_command(int argc, char** argv);
// One line per text subcommand, for ft-model --help.
std::string text_commands_help();

}  // namespace ft::tools
