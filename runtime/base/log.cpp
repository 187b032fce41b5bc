#include "runtime/base/log.h"

#include <cstdlib>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace ft::log {
namespace {

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto l = spdlog::stderr_color_mt("ft");
    l->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
    return l;
  }();
  return *instance;
}

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::kDebug: return spdlog::level::debug;
    case Level::kInfo: return spdlog::level::info;
    case Level::kWarn: return spdlog::level::warn;
    case Level::kError: return spdlog::level::err;
    case Level::kOff: return spdlog::level::off;
  }
  return spdlog::level::info;
}

}  // namespace

void set_level(Level level) { logger().set_level(to_spdlog(level)); }

void init_from_env() {
  const char* env = std::getenv("FT_LOG_LEVEL");
  if (!env) return;
  std::string v = env;
  if (v == "debug") set_level(Level::kDebug);
  else if (v == "info") set_level(Level::kInfo);
  else if (v == "warn" || v == "warning") set_level(Level::kWarn);
  else if (v == "error") set_level(Level::kError);
  else if (v == "off") set_level(Level::kOff);
}

void write(Level level, std::string_view message) { logger().log(to_spdlog(level), "{}", message); }

}  // namespace ft::log
