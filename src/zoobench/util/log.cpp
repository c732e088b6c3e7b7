// The process-wide log level and the one place that writes log lines.
#include "zoobench/util/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace zoobench::log {
namespace {

Level level_from_environment() {
  const char* value = std::getenv("ZOOBENCH_LOG");
  if (value == nullptr) return Level::kInfo;
  if (std::strcmp(value, "debug") == 0) return Level::kDebug;
  if (std::strcmp(value, "warn") == 0) return Level::kWarn;
  if (std::strcmp(value, "error") == 0) return Level::kError;
  return Level::kInfo;
}

std::atomic<Level>& level_storage() {
  static std::atomic<Level> level{level_from_environment()};
  return level;
}

}  // namespace

Level current_level() { return level_storage().load(std::memory_order_relaxed); }
void set_level(Level level) { level_storage().store(level); }

void write(Level level, std::string_view message) {
  static std::mutex mutex;
  static const char* const kTags[] = {"debug", "info", "warning", "error"};
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "zoobench %s: %.*s\n", kTags[static_cast<int>(level)],
               static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
}

}  // namespace zoobench::log
