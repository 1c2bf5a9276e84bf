// Asks a forwarding handler's start-up probes (handlers/forwarding.h StartupProbe) over UDP:
// the server owns every socket, the handler built the questions and judges the answers, so
// this side knows no protocol. Called by server_main before serving and in --check.
#ifndef ONEPASS_SERVER_STARTUP_PROBE_H_
#define ONEPASS_SERVER_STARTUP_PROBE_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "handlers/forwarding.h"

namespace onepass {

// How long start-up waits for the probes' replies at most, all of them together.
inline constexpr absl::Duration kStartupProbeTimeout = absl::Milliseconds(500);

// Sends every probe at once, each from a socket of its own connected to its upstream, and
// waits in one poll loop until each has its first datagram back or `timeout` has passed in
// all (no retries: a silent or unreachable upstream is the health checks' to report). Each
// reply goes to its probe's judge; returns the warnings, in probe order. Blocks the calling
// thread for `timeout` at most.
std::vector<std::string> RunStartupProbes(absl::Span<const StartupProbe> probes,
                                          absl::Duration timeout = kStartupProbeTimeout);

}  // namespace onepass

#endif  // ONEPASS_SERVER_STARTUP_PROBE_H_
