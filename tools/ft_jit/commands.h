// The ft-jit subcommands. Each takes the arguments after its name and returns
// the process exit code: 0 success, 1 the work failed, 2 bad usage.
#pragma once

namespace ft::tools {

int cmd_targets(int argc, char** argv);
int cmd_warm(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_cache(int argc, char** argv);

}  // namespace ft::tools
