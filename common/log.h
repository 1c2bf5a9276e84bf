// A small thread-safe logger: Debian 12's Abseil has no absl/log.
//
// Each message is one line written with a single write(2) to stderr, so lines from several
// workers never interleave. Messages say what happened and what to do about it.
#ifndef ONEPASS_COMMON_LOG_H_
#define ONEPASS_COMMON_LOG_H_

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace onepass {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Messages below `level` are dropped. Default kInfo. Set once at startup, before threads.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

// Writes "<program>: <level>: <message>\n" to stderr.
void LogMessage(LogLevel level, absl::string_view message);

// Sets the "<program>" prefix. Default "onepass".
void SetLogProgramName(absl::string_view name);

template <typename... Args>
void LogInfo(const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (GetLogLevel() <= LogLevel::kInfo)
    LogMessage(LogLevel::kInfo, absl::StrFormat(format, args...));
}
template <typename... Args>
void LogWarning(const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (GetLogLevel() <= LogLevel::kWarning) {
    LogMessage(LogLevel::kWarning, absl::StrFormat(format, args...));
  }
}
template <typename... Args>
void LogError(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogMessage(LogLevel::kError, absl::StrFormat(format, args...));
}
template <typename... Args>
void LogDebug(const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (GetLogLevel() <= LogLevel::kDebug) {
    LogMessage(LogLevel::kDebug, absl::StrFormat(format, args...));
  }
}

}  // namespace onepass

#endif  // ONEPASS_COMMON_LOG_H_
