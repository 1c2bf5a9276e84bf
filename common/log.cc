#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"

namespace onepass {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kInfo};
// Written once at startup before any thread starts; read-only afterwards.
std::string& ProgramName() {
  static std::string* name = new std::string("onepass");
  return *name;
}

absl::string_view LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(level, std::memory_order_relaxed); }
LogLevel GetLogLevel() { return g_level.load(std::memory_order_relaxed); }
void SetLogProgramName(absl::string_view name) { ProgramName() = std::string(name); }

void LogMessage(LogLevel level, absl::string_view message) {
  std::string line = absl::StrCat(ProgramName(), ": ", LevelName(level), ": ", message, "\n");
  // One write per line keeps lines whole across threads; a short write to stderr is not retried.
  ssize_t ignored = write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace onepass
