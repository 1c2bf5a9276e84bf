#include "server/core/deadline.h"

#include <algorithm>

namespace onepass {

SteadyTime After(SteadyTime now, absl::Duration duration) {
  return now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   absl::ToChronoNanoseconds(duration));
}

namespace {

// Per message: restarts only when a whole request was consumed, never on a partial read.
SteadyTime ReadDeadline(const ParkedConnection& connection, SteadyTime now,
                        const CoreConfig& config, WorkerLoad load, Deadlines& deadlines) {
  const absl::Duration keepalive = connection.keepalive.value_or(config.keepalive);
  const bool idle = connection.idle && keepalive > absl::ZeroDuration();
  if (!deadlines.read.has_value() || connection.message_consumed) {
    absl::Duration wait = config.read_timeout;
    if (idle) {
      // RFC 7766 §6.2.3: a busy server may close idle connections sooner (NSD, Unbound).
      const bool busy = load.parked * 2 > static_cast<size_t>(load.max_connections);
      wait = busy ? std::min(keepalive, kBusyKeepalive) : keepalive;
    }
    deadlines.read = After(now, wait);
    deadlines.read_is_idle = idle;
  } else if (deadlines.read_is_idle && connection.input_pending) {
    // The next request has begun during keepalive: it gets the read timeout to complete.
    deadlines.read = std::min(*deadlines.read, After(now, config.read_timeout));
    deadlines.read_is_idle = false;
  }
  return *deadlines.read;
}

}  // namespace

ParkDeadline ComputeParkDeadline(const ParkedConnection& connection, SteadyTime now,
                                 const CoreConfig& config, WorkerLoad load) {
  ParkDeadline result{connection.deadlines, now};
  Deadlines& deadlines = result.deadlines;
  switch (connection.state) {
    case ConnectionState::kProxyHeader:  // a request's first bytes: the same read deadline
    case ConnectionState::kReading:
      result.at = ReadDeadline(connection, now, config, load, deadlines);
      break;
    case ConnectionState::kWriting:
    case ConnectionState::kClosingUnsent:
      // From the first time the socket was full until the response is sent whole.
      if (!deadlines.write.has_value()) deadlines.write = After(now, config.write_timeout);
      result.at = *deadlines.write;
      break;
    case ConnectionState::kLingering:
      // One deadline for the whole linger, not restarted by the bytes discarded.
      if (!deadlines.linger.has_value()) deadlines.linger = After(now, config.linger);
      result.at = *deadlines.linger;
      break;
    case ConnectionState::kProcessing:
    case ConnectionState::kWaitingUpstream:
    case ConnectionState::kClosed:
      return result;  // never here (kWaitingUpstream: WorkerCore::Park gives it its backstop)
  }
  if (!deadlines.lifetime.has_value()) {
    deadlines.lifetime = After(now, config.max_connection_time);
  }
  result.at = std::min(result.at, *deadlines.lifetime);
  return result;
}

}  // namespace onepass
