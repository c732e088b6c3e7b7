// Leveled logging to stderr. The level comes from ZOOBENCH_LOG (debug|info|warn|error),
// default info; tests and children inherit it through the environment.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace zoobench::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

Level current_level();
void set_level(Level level);
void write(Level level, std::string_view message);

template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  if (current_level() <= Level::kDebug) write(Level::kDebug, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  if (current_level() <= Level::kInfo) write(Level::kInfo, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  if (current_level() <= Level::kWarn) write(Level::kWarn, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  write(Level::kError, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace zoobench::log
