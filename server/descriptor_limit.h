// The descriptor limit (RLIMIT_NOFILE) against the connection limits: a shell's default soft
// limit (1024) is far below the default --max-connections (5000), and running out means accept
// pauses (EMFILE) that stall every client, good ones included. At start the soft limit is
// raised to the hard one; if the connections still do not fit, --max-connections is lowered to
// what fits and the log says so in one line (refusing to start would turn a deploy mistake into
// an outage; a lowered limit is visible and still serves).
#ifndef ONEPASS_SERVER_DESCRIPTOR_LIMIT_H_
#define ONEPASS_SERVER_DESCRIPTOR_LIMIT_H_

#include <string>

#include "absl/status/statusor.h"

namespace onepass {

// Descriptors the server holds besides its parked connections: stdio, each worker's listening
// sockets (one per address), eventfds and epoll instance and the socket of its single pass, and
// a reserve for reloads (data files), logs and the listener hand-over.
int FixedDescriptors(int workers, int listen_addresses);
inline constexpr int kDescriptorReserve = 64;

struct DescriptorFit {
  int max_connections = 0;  // what fits, <= the one asked
  std::string note;         // one log line when it was lowered; empty otherwise
};

// Pure: how many of `max_connections` parked connections fit in `limit` descriptors. An error
// when not even one per worker fits (then nothing could wait for a request).
absl::StatusOr<DescriptorFit> FitConnections(int limit, int max_connections, int workers,
                                             int listen_addresses);

// Raises the soft RLIMIT_NOFILE to the hard limit (logged when raised) and returns FitConnections
// for the resulting soft limit.
absl::StatusOr<DescriptorFit> RaiseDescriptorLimit(int max_connections, int workers,
                                                   int listen_addresses);

}  // namespace onepass

#endif  // ONEPASS_SERVER_DESCRIPTOR_LIMIT_H_
