// A small thread-safe logger: Debian 12's Abseil has no absl/log.
//
// Each message is one line written with a single write(2) to stderr, so lines from several
// workers never interleave. Messages say what happened and what to do about it.
//
// Formats (--log-format): text "<program>: <level>: <message>" (the journal adds the time),
// or json, one object per line: {"time":"RFC 3339","level":..,"program":..,"msg":..}.
//
// Messages an attacker can provoke repeatedly go through a LogRateLimit: N lines per window,
// then one line "suppressed K similar messages in the last T s" when the next window starts.
#ifndef ONEPASS_COMMON_LOG_H_
#define ONEPASS_COMMON_LOG_H_

#include <cstdint>
#include <mutex>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace onepass {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Messages below this level are dropped: kInfo (LogDebug lines are not written).
LogLevel GetLogLevel();

enum class LogFormat { kText, kJson };
// Set once at startup, before threads. Default kText.
void SetLogFormat(LogFormat format);
// "text" or "json"; false for anything else.
bool ParseLogFormat(absl::string_view text, LogFormat& format);

// The line for `message` in the current format, with its newline (LogMessage writes it).
std::string FormatLogLine(LogLevel level, absl::string_view message, absl::Time now);

// Writes the line for `message` to stderr.
void LogMessage(LogLevel level, absl::string_view message);

// Sets the "<program>" prefix. Default "onepass".
void SetLogProgramName(absl::string_view name);

// Default burst and window of every LogRateLimit (--log-burst, --log-window-ms). Set once at
// startup, before threads.
void SetLogRateDefaults(int burst, absl::Duration window);

// One kind of message that may repeat fast (an accept error, a refused peer): at most `burst`
// lines per window, the rest counted and reported as one line when the next window opens.
// Thread-safe (a mutex taken only when such a message is about to be logged).
class LogRateLimit {
 public:
  // `kind` names the message in the summary line ("accept paused").
  explicit LogRateLimit(absl::string_view kind) : kind_(kind) {}
  // True when the message may be logged now; logs the summary of a past window first.
  bool Allow() { return Allow(absl::Now()); }
  bool Allow(absl::Time now);

 private:
  const std::string kind_;
  std::mutex mutex_;
  absl::Time window_start_ = absl::InfinitePast();  // guarded by mutex_
  int64_t logged_ = 0;                              // guarded by mutex_
  int64_t suppressed_ = 0;                          // guarded by mutex_
};

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
// LogWarning through `limit`.
template <typename... Args>
void LogWarningLimited(LogRateLimit& limit, const absl::FormatSpec<Args...>& format,
                       const Args&... args) {
  if (GetLogLevel() <= LogLevel::kWarning && limit.Allow()) {
    LogMessage(LogLevel::kWarning, absl::StrFormat(format, args...));
  }
}

template <typename... Args>
void LogDebug(const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (GetLogLevel() <= LogLevel::kDebug) {
    LogMessage(LogLevel::kDebug, absl::StrFormat(format, args...));
  }
}

}  // namespace onepass

#endif  // ONEPASS_COMMON_LOG_H_
