// CoreConfig: the limits and timeouts a worker core applies to its connections, with their
// defaults and the reasons for them (docs/design.md "Limits, and why"). Plain data, filled from
// flags by server/server_main.cc (as part of ServerConfig, server/server_config.h) or directly by
// tests of the core.
#ifndef ONEPASS_SERVER_CORE_CORE_CONFIG_H_
#define ONEPASS_SERVER_CORE_CORE_CONFIG_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace onepass {

// Defaults. docs/design.md "Limits, and why" gives the sources.
inline constexpr int kDefaultBacklog = 4096;  // libevent's -1 would mean 128
// --accept-burst 0: each driver's own. epoll: accepts per listener wakeup before other events
// get a turn. The ring: accepts armed at once per listener (each with its own address slot),
// 16 measured cheaper than 64 per connection here
// (loadtest/results/2026-12-02-uring-accept-burst.md).
inline constexpr int kDefaultEpollAcceptBurst = 64;
inline constexpr int kDefaultUringAcceptBurst = 16;
inline constexpr int kDefaultMaxConnections = 5000;         // parked connections, whole server
inline constexpr int kDefaultMaxConnectionsPerClient = 25;  // parked, per client, server-wide
// A client is its address cut to this many bits: one IPv4 address; an IPv6 /64, which one host
// or one customer usually owns whole (RFC 6177, RFC 7421).
inline constexpr int kDefaultClientPrefixV4 = 32;
inline constexpr int kDefaultClientPrefixV6 = 64;
inline constexpr absl::Duration kDefaultReadTimeout = absl::Milliseconds(2000);
inline constexpr absl::Duration kDefaultWriteTimeout = absl::Milliseconds(2000);
// The whole life of a parked connection, however it keeps busy (RFC 7766 §6.2.3 lets a server
// close any connection; dnsdist's max-connection-duration). Long enough for a resolver's
// kept-alive connection to carry many queries, short enough that a slow reader or a client
// sending messages that get no answer cannot hold a slot for good.
inline constexpr absl::Duration kDefaultMaxConnectionTime = absl::Seconds(120);
inline constexpr absl::Duration kDefaultDrainTimeout = absl::Milliseconds(5000);
// EMFILE/ENFILE: stop accepting on that worker for this long instead of spinning (nginx, NSD).
inline constexpr absl::Duration kDefaultAcceptPause = absl::Seconds(1);
// When more than half of a worker's --max-connections are parked, a kept-alive connection
// waits at most this long for its next request (NSD, Unbound; RFC 7766 §6.2.3 lets a busy
// server close idle connections sooner).
inline constexpr absl::Duration kBusyKeepalive = absl::Milliseconds(200);
// TCP_DEFER_ACCEPT [s]: the kernel holds a handshaken connection until its first bytes arrive,
// for about this long (rounded up to its SYN-ACK retransmission schedule), then hands it over
// anyway. Kept at the minimum so that a silent client costs at most ~1 s of a request sock
// before the read timeout starts; it must not be longer than the read timeout it precedes.
inline constexpr int kDeferAcceptSeconds = 1;
// Lingering close (ConnectionState::kLingering): how long to wait for the client's EOF after an
// early final response, and how many bytes to discard at most before closing anyway (nginx:
// lingering_time 30 s, lingering_timeout 5 s; ours is shorter, for connections that should
// take milliseconds).
inline constexpr absl::Duration kDefaultLinger = absl::Milliseconds(500);
inline constexpr size_t kLingerMaxBytes = 64 * 1024;
// A connection whose responses add up to more than this many bytes checks, before it closes,
// that the kernel has sent them (ConnectionState::kClosingUnsent); below it the single pass
// closes at once, so an orphaned socket holds at most this much unsent (the bound in bytes).
inline constexpr size_t kUnsentCheckBytes = 4096;
// One Connection::Advance call reads at most this many times before yielding to other
// connections.
inline constexpr int kReadsPerTurn = 16;
// The input buffer never holds less than this, so pipelined requests arrive in few recvs.
inline constexpr size_t kMinInputBufferBytes = 16 * 1024;

struct CoreConfig {
  // --accept-burst: accepts per listener readiness (epoll) or armed per listener (the ring);
  // 0, the default, is the driver's own (kDefaultEpollAcceptBurst, kDefaultUringAcceptBurst).
  int accept_burst = 0;
  // Connections parked in event loops at once (incomplete request, unfinished write,
  // keepalive), for the whole server, split evenly over workers. A connection that would
  // exceed it is closed and counted (rejected_pool_full). RFC 9210 §4.5, NSD/Unbound: 5000.
  // Each parked connection holds an input buffer (handler's MaxRequestBytes: 64 KiB for DNS);
  // only one waiting to write also holds an output buffer (OutputBufferBytes: 128 KiB for DNS).
  // Pools grow on demand up to this bound and are reused: no allocation in steady state.
  int max_connections = kDefaultMaxConnections;
  // Parked connections one client may hold, server-wide (RFC 9210 §4.5 and NSD: 25 per client),
  // in a table the workers share (server/core/client_limits.h). Counted only for parked
  // connections: the single pass holds nothing worth limiting, and touches no shared state.
  int max_connections_per_client = kDefaultMaxConnectionsPerClient;
  // The bits of a client's address that identify it for that limit.
  int client_prefix_v4 = kDefaultClientPrefixV4;
  int client_prefix_v6 = kDefaultClientPrefixV6;
  // Per-message deadline [ms]: a request must arrive whole within this time of the previous
  // one being consumed (or of accept). It does not restart on every byte: slowloris is cut.
  absl::Duration read_timeout = kDefaultReadTimeout;
  // A response must be written within this time once the socket buffer is full.
  absl::Duration write_timeout = kDefaultWriteTimeout;
  // The most a connection may live from its first park (server/core/deadline.h
  // Deadlines::lifetime).
  absl::Duration max_connection_time = kDefaultMaxConnectionTime;
  // 0: close after the response (the single pass). Otherwise keep an idle connection this long
  // for more requests (RFC 7766 §6.2.3); handlers see it as RequestContext::keepalive.
  absl::Duration keepalive = absl::ZeroDuration();
  // With keepalive: a client that closes its kept-open connections after one request gets
  // the single pass instead (server/core/reuse_learner.h, --keepalive-learn).
  bool keepalive_learn = true;
  // On stop: how long connections in flight may take to finish before they are closed.
  absl::Duration drain_timeout = kDefaultDrainTimeout;
  // After a response that ends a connection while the client may still be sending (e.g. an
  // HTTP 431 before the whole header arrived), read and discard for up to this long (at most
  // kLingerMaxBytes) until the client's EOF, so that close() does not reset the connection and
  // destroy the response. 0: close at once.
  absl::Duration linger = kDefaultLinger;
  absl::Duration accept_pause = kDefaultAcceptPause;
  // --allow-from: the client prefixes served (checked at accept, or on the PROXY header's
  // address); empty: everyone (server/core/allow_list.h).
  std::vector<std::string> allow_from;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_CORE_CONFIG_H_
