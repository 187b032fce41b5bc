// The model-file subcommands of ft-model: info, convert, synth.
#pragma once

#include <string>

namespace ft::tools {

bool is_model_command(const std::string& command);
// Runs one subcommand; argv[0] is the subcommand name. Returns the exit code
// (0 ok, 1 failure, 2 bad usage).
int run_model_command(int argc, char** argv);
// One line per subcommand, for ft-model --help.
std::string model_commands_help();

}  // namespace ft::tools
