#include "tools/common/cli_args.h"

#include <algorithm>
#include <charconv>

namespace ft::tools {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool is_help(const std::string& arg) { return arg == "-h" || arg == "--help"; }

bool is_option(const std::string& arg) { return arg.size() > 1 && arg[0] == '-'; }

// Usage errors speak to the user about their command line; a source location
// (what FT_ERROR adds) would only be noise there.
Status usage_error(std::string message) { return Status(ErrorCode::kInvalidArgument, std::move(message)); }

std::string canonical_name(const CliSpec& spec, const std::string& name) {
  for (const auto& [alias, target] : spec.aliases)
    if (alias == name) return target;
  return name;
}

// Whether "-h" or "--help" stands among the options, for a line that failed to parse.
bool asks_for_help(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") return false;
    if (is_help(arg)) return true;
  }
  return false;
}

template <typename T>
bool parse_whole(const std::string& text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

Result<CliArgs> CliArgs::parse(const CliSpec& spec, int argc, char** argv) {
  CliArgs args;
  bool options_done = false;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (options_done || !is_option(arg)) {
      args.positional_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (is_help(arg)) {
      args.help_ = true;
      continue;
    }
    std::string typed = arg, value;
    const size_t eq = arg.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      typed = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    const std::string name = canonical_name(spec, typed);
    Status error;
    if (contains(spec.flags, name)) {
      if (inline_value) error = usage_error(typed + " takes no value");
    } else if (contains(spec.value_options, name)) {
      if (!inline_value && i + 1 >= argc) error = usage_error(typed + " needs a value");
      else if (!inline_value) value = argv[++i];
    } else {
      error = usage_error("unknown option " + typed);
    }
    if (!error.ok()) {
      if (!asks_for_help(argc, argv)) return error;
      CliArgs help_only;
      help_only.help_ = true;
      return help_only;
    }
    args.values_[name].push_back(value);
  }
  return args;
}

std::string CliArgs::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> CliArgs::get_all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

Result<int64_t> CliArgs::get_int(const std::string& name, int64_t fallback) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  int64_t v = 0;
  if (!parse_whole(text, v)) return usage_error(name + " expects a number, got '" + text + "'");
  return v;
}

Result<uint32_t> CliArgs::get_positive_u32(const std::string& name, uint32_t fallback) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  uint32_t v = 0;
  if (!parse_whole(text, v) || v == 0) return usage_error(name + " must be a positive integer, got \"" + text + "\"");
  return v;
}

Result<uint64_t> CliArgs::get_u64(const std::string& name, uint64_t fallback) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  uint64_t v = 0;
  if (!parse_whole(text, v)) return usage_error(name + " must be an unsigned integer, got \"" + text + "\"");
  return v;
}

}  // namespace ft::tools
