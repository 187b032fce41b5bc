// `ft-model template`: render a model's chat template for OpenAI-style messages
// and print the prompt, exactly as the server would build it.
#pragma once

namespace ft::tools {

// argv[0] is "template". Prints the prompt to stdout; returns 0, 1 for a
// failure (message on stderr) or 2 for a usage error.
int run_template_command(int argc, char** argv);

}  // namespace ft::tools
