// Minimal argument handling shared by the ft-jit subcommands.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ft::tools {

// Parses "--name value", "--name=value" and "--flag". `flags` lists the options
// that take no value. Unknown options are errors, reported through error().
class Args {
 public:
  Args(int argc, char** argv, const std::set<std::string>& with_value, const std::set<std::string>& flags);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  // The value as an integer; an error message in `error` when it is not one.
  std::optional<long long> get_int(const std::string& name, long long fallback, std::string* error) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
  std::string error_;
};

}  // namespace ft::tools
