#include "tools/ft_jit/cli.h"

#include <cstdlib>

namespace ft::tools {

Args::Args(int argc, char** argv, const std::set<std::string>& with_value, const std::set<std::string>& flags) {
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool inline_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    if (flags.count(name)) {
      if (inline_value) { error_ = "--" + name + " takes no value"; return; }
      values_[name] = "1";
    } else if (with_value.count(name)) {
      if (!inline_value) {
        if (i + 1 >= argc) { error_ = "--" + name + " needs a value"; return; }
        value = argv[++i];
      }
      values_[name] = value;
    } else {
      error_ = "unknown option --" + name;
      return;
    }
  }
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::optional<long long> Args::get_int(const std::string& name, long long fallback, std::string* error) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0') {
    *error = "--" + name + " expects a number, got '" + it->second + "'";
    return std::nullopt;
  }
  return v;
}

}  // namespace ft::tools
