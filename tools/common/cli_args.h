// Command-line parsing shared by the ft tools (ft-jit, ft-model), so every
// subcommand reads its options the same way and reports the same errors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/base/status.h"

namespace ft::tools {

// What one command accepts. Names are written as the user types them ("--arch").
struct CliSpec {
  std::vector<std::string> value_options = {};  // "--arch A" or "--arch=A"
  std::vector<std::string> flags = {};          // "--json"; a value is an error
  // Another spelling of an option: {"-o", "--output"}.
  std::vector<std::pair<std::string, std::string>> aliases = {};
};

// A parsed command line.
//
// Options may stand anywhere among the positional arguments. "--" ends the
// options: what follows is positional even when it starts with "-" (text that
// starts with "--"). "-" alone is positional (standard input by convention).
// A value option takes the next argument whatever it looks like. "-h" and
// "--help" set help(); a help request wins over any other error on the line,
// so a user can always ask for help.
//
// Every option may be given more than once: get() returns the last value,
// get_all() all of them in order.
class CliArgs {
 public:
  // argv holds the arguments only, without the program or command name.
  // Errors (kInvalidArgument) read "unknown option --x", "--x needs a value",
  // "--x takes no value".
  static Result<CliArgs> parse(const CliSpec& spec, int argc, char** argv);

  bool help() const { return help_; }
  // Whether the option (a value option or a flag) was given.
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  // The last value of `name`, or `fallback` when it was not given.
  std::string get(const std::string& name, const std::string& fallback = "") const;
  // Every value of `name` in command-line order; empty when not given.
  std::vector<std::string> get_all(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // Numeric getters: `fallback` when the option is absent, an error naming the
  // option and the text when it is not a whole number of the right range.
  // "--jobs expects a number, got 'x'"
  Result<int64_t> get_int(const std::string& name, int64_t fallback) const;
  // "--layers must be a positive integer, got \"x\"" (zero is refused too)
  Result<uint32_t> get_positive_u32(const std::string& name, uint32_t fallback) const;
  // "--seed must be an unsigned integer, got \"x\""
  Result<uint64_t> get_u64(const std::string& name, uint64_t fallback) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
  bool help_ = false;
};

}  // namespace ft::tools
