#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"

namespace onepass {
namespace {

// Messages below it are dropped (GetLogLevel); no flag sets another.
constexpr LogLevel kLevel = LogLevel::kInfo;
std::atomic<LogFormat> g_format{LogFormat::kText};
std::atomic<int> g_burst{10};
std::atomic<int64_t> g_window_ms{60000};
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

LogLevel GetLogLevel() { return kLevel; }
void SetLogProgramName(absl::string_view name) { ProgramName() = std::string(name); }

namespace {

// RFC 8259 §7: quote, backslash and control characters escaped.
void AppendJsonString(std::string& out, absl::string_view text) {
  out += '"';
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

}  // namespace

void SetLogFormat(LogFormat format) { g_format.store(format, std::memory_order_relaxed); }

bool ParseLogFormat(absl::string_view text, LogFormat& format) {
  if (text == "text") {
    format = LogFormat::kText;
    return true;
  }
  if (text == "json") {
    format = LogFormat::kJson;
    return true;
  }
  return false;
}

std::string FormatLogLine(LogLevel level, absl::string_view message, absl::Time now) {
  if (g_format.load(std::memory_order_relaxed) == LogFormat::kText) {
    return absl::StrCat(ProgramName(), ": ", LevelName(level), ": ", message, "\n");
  }
  std::string line = "{\"time\":";
  AppendJsonString(line, absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", now, absl::UTCTimeZone()));
  line += ",\"level\":";
  AppendJsonString(line, LevelName(level));
  line += ",\"program\":";
  AppendJsonString(line, ProgramName());
  line += ",\"msg\":";
  AppendJsonString(line, message);
  line += "}\n";
  return line;
}

void SetLogRateDefaults(int burst, absl::Duration window) {
  g_burst.store(burst, std::memory_order_relaxed);
  g_window_ms.store(absl::ToInt64Milliseconds(window), std::memory_order_relaxed);
}

bool LogRateLimit::Allow(absl::Time now) {
  const absl::Duration window = absl::Milliseconds(g_window_ms.load(std::memory_order_relaxed));
  int64_t suppressed = 0;
  absl::Duration elapsed;
  bool allow = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (now - window_start_ >= window) {
      suppressed = suppressed_;
      elapsed = now - window_start_;
      window_start_ = now;
      logged_ = 0;
      suppressed_ = 0;
    }
    allow = logged_ < g_burst.load(std::memory_order_relaxed);
    if (allow) {
      ++logged_;
    } else {
      ++suppressed_;
    }
  }
  if (suppressed > 0) {
    LogMessage(LogLevel::kWarning,
               absl::StrFormat("suppressed %d similar messages (%s) in the last %d s", suppressed,
                               kind_, absl::ToInt64Seconds(elapsed)));
  }
  return allow;
}

void LogMessage(LogLevel level, absl::string_view message) {
  std::string line = FormatLogLine(level, message, absl::Now());
  // One write per line keeps lines whole across threads; a short write to stderr is not retried.
  ssize_t ignored = write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace onepass
