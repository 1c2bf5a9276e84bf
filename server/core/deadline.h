// The deadline arithmetic of a parked connection, as a pure function of its state, the time,
// the configuration and the worker's load: no clock read, no socket, no event loop, so it is
// tested with a fake clock (tests/unit/server/deadline_test.cc). WorkerCore::Park arms the timer
// with the result.
//
// Deadlines are per message, not per byte (RFC 7766 §6.2.3, docs/design.md "Limits, and why"): the
// read deadline restarts only when a whole request was consumed, so a client trickling bytes is
// cut; keepalive idleness has its own, shorter when the worker is busy; a lingering close has
// one deadline for the whole linger; a response has one from the moment the socket was full
// until it is sent whole.
#ifndef ONEPASS_SERVER_CORE_DEADLINE_H_
#define ONEPASS_SERVER_CORE_DEADLINE_H_

#include <chrono>
#include <cstddef>
#include <optional>

#include "server/core/connection_state.h"
#include "server/core/core_config.h"

namespace onepass {

using SteadyTime = std::chrono::steady_clock::time_point;

// The deadlines a connection carries from one park to the next (part of its state: reset with
// it and handed over with it). An empty optional is not armed.
struct Deadlines {
  std::optional<SteadyTime> read;
  // `read` is a keepalive idle deadline (no request begun), not a per-message one.
  bool read_is_idle = false;
  // Disarmed by Connection when a response was sent whole, so the next one gets its own.
  std::optional<SteadyTime> write;
  std::optional<SteadyTime> linger;
  // --max-connection-ms from the first park: the cap on the whole life of a connection, which
  // no answered request, partial read or partial write extends (a slow reader taking a byte at
  // a time, a client sending answerless messages).
  std::optional<SteadyTime> lifetime;
};

// What the deadline of a connection about to be parked depends on.
struct ParkedConnection {
  // kReading, kWriting, kClosingUnsent or kLingering (the states a connection waits in).
  ConnectionState state = ConnectionState::kReading;
  // Between requests of a kept-alive connection (Connection::idle()).
  bool idle = false;
  // A whole request was consumed since the last park (Connection::TakeMessageConsumed()).
  bool message_consumed = false;
  // Bytes of a request are buffered (the next request has begun).
  bool input_pending = false;
  // Its keepalive when not the configuration's (a TLS connection: --tls-idle-timeout-ms).
  std::optional<absl::Duration> keepalive;
  Deadlines deadlines;
};

// The worker's load: a busy worker shortens keepalive idleness.
struct WorkerLoad {
  size_t parked = 0;        // connections parked now, this one included
  int max_connections = 0;  // the most this worker may park
};

struct ParkDeadline {
  Deadlines deadlines;  // the connection's deadlines from now on
  SteadyTime at;        // when the connection's wait in its state ends
};

// The deadline for `connection` parked at `now`: that of its state, never past its lifetime
// cap. For any state other than kReading, kWriting, kClosingUnsent and kLingering (none is
// parked) `at` is `now`.
ParkDeadline ComputeParkDeadline(const ParkedConnection& connection, SteadyTime now,
                                 const CoreConfig& config, WorkerLoad load);

// `now` + `duration` on the steady clock.
SteadyTime After(SteadyTime now, absl::Duration duration);

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_DEADLINE_H_
