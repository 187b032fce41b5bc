// Logging to stderr, through spdlog (kept out of this header so that only
// log.cpp pays for its templates).
#pragma once

#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace ft::log {

enum class Level { kDebug, kInfo, kWarn, kError, kOff };

void set_level(Level level);
// Reads FT_LOG_LEVEL (debug, info, warn, error, off); info when unset.
void init_from_env();
void write(Level level, std::string_view message);

template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace ft::log
