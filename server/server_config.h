// ServerConfig: every limit and knob of the transport, with its default and the reason for it.
//
// Filled from flags by server/server_main.cc, or directly by in-process tests. Plain data: the
// validation that needs the machine (CPU lists, addresses) happens in Server::Create.
#ifndef ONEPASS_SERVER_SERVER_CONFIG_H_
#define ONEPASS_SERVER_SERVER_CONFIG_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/config.h"
#include "absl/time/time.h"
#include "server/tls/tls_server_context.h"

namespace onepass {

// How the kernel picks the worker (listening socket of the SO_REUSEPORT group) for a new
// connection.
enum class Steering {
  // kCpu when every worker is pinned to its own CPU, kHash otherwise.
  kAuto,
  // A CBPF program returns the worker pinned to the CPU that processed the SYN, so a
  // connection stays on the core whose RSS queue received it (docs/design.md "CPU steering").
  kCpu,
  // The kernel's own 4-tuple hash over the group.
  kHash,
};

// The loop a worker runs (--io). Both run the same Connection::Advance; docs/design.md "The
// io_uring worker" says what the second one does and what it refuses.
enum class IoLoop {
  // libevent (epoll) readiness; accept4, recv, send and close as plain syscalls.
  kEpoll,
  // liburing: accept, the first recv, the last send and close submitted to a ring in batches;
  // only in a build with -DONEPASS_IO_URING=ON (server/drivers/uring_driver.h).
  kUring,
};

// Defaults. docs/design.md "Limits, and why" gives the sources.
inline constexpr int kDefaultBacklog = 4096;                // libevent's -1 would mean 128
inline constexpr int kDefaultAcceptBurst = 64;              // accepts per listener wakeup
inline constexpr int kDefaultMaxConnections = 5000;         // parked connections, whole server
inline constexpr int kDefaultMaxConnectionsPerClient = 25;  // parked, per client, server-wide
// A client is its address cut to this many bits: one IPv4 address; an IPv6 /64, which one host
// or one customer usually owns whole (RFC 6177, RFC 7421).
inline constexpr int kDefaultClientPrefixV4 = 32;
inline constexpr int kDefaultClientPrefixV6 = 64;
// TLS handshakes (--tls-listen). In progress at once, whole server: each parks its connection
// between the server's flight and the client's Finished (one round trip). New ones per client
// prefix per second: a full handshake costs a signature and a key exchange (~270 us of CPU), a
// resumed one a fraction; one resolver behind a /32 making a few hundred DoT connections a
// second stays well inside, a flood from one prefix does not.
inline constexpr int kDefaultTlsMaxHandshakes = 1000;
// TLS listeners' per-client limits. A recursive resolver is one address carrying many users:
// NSD (tcp-count), BIND (tcp-clients) and dnsdist (maxTCPConnectionsPerClient 0) have no
// per-address limit by default, only a total. Connections: 256 of --max-connections per
// prefix; handshakes in progress: 64, below that, so a prefix's stalled handshakes leave it
// connections, and far above a busy resolver's dozens in flight.
inline constexpr int kDefaultTlsMaxConnectionsPerClient = 256;
inline constexpr int kDefaultTlsHandshakesPerClient = 64;
inline constexpr int kDefaultTlsFullPerClient = 100;
inline constexpr int kDefaultTlsResumedPerClient = 1000;
inline constexpr absl::Duration kDefaultReadTimeout = absl::Milliseconds(2000);
// DoT connections kept idle (RFC 7766 §6.2.3, RFC 7858 §3.4): a few seconds, as the peers keep
// them (dnsdist 2 s of receive timeout, BIND and Unbound 30 s of idle time, NSD 120 s).
inline constexpr absl::Duration kDefaultTlsIdleTimeout = absl::Seconds(10);
// --keepalive-ms for --handler dns: "of the order of seconds" (RFC 7766 §6.2.3).
inline constexpr absl::Duration kDefaultDnsKeepalive = absl::Seconds(2);
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

// onepassd's --private-fd-tables default. ThreadSanitizer keys descriptors by number for the
// whole process: with private tables the same number names a different socket in each worker,
// and TSan reports races between workers that share no descriptor (accept4 in one, epoll_ctl
// in another), so a TSan build shares one table.
#ifdef ABSL_HAVE_THREAD_SANITIZER
inline constexpr bool kPrivateFdTablesByDefault = false;
#else
inline constexpr bool kPrivateFdTablesByDefault = true;
#endif

struct ServerConfig {
  // "ADDR:PORT" or "[V6ADDR]:PORT"; port 0 asks the kernel for one (the same for all workers).
  std::vector<std::string> listen;
  // The same for TLS listeners (--tls-listen: DNS over TLS on 853, RFC 7858): each worker
  // listens on these too, after `listen`'s, and serves them through `tls`.
  std::vector<std::string> tls_listen;
  // The certificate, key and ticket keys for tls_listen's connections at start (required
  // with tls_listen); a reload's new one goes through Server::ReloadTls.
  std::shared_ptr<const tls::TlsServerContext> tls;
  // Handshakes in progress at once (parked for their clients), whole server (split over
  // workers like max_connections); when all are taken a new one makes room by closing the one
  // that has waited longest (counted: TlsFailure::k_evicted), so that stalled clients cannot
  // hold them (server/core/waiting_room.h).
  int tls_max_handshakes = kDefaultTlsMaxHandshakes;
  // Of those, how many one client prefix may hold, whole server (split over workers); beyond
  // it its new handshake is refused at its ClientHello, before any key exchange or signature
  // (TlsFailure::k_limit). 0: no per-client share.
  int tls_handshakes_per_client = kDefaultTlsHandshakesPerClient;
  // max_connections_per_client for connections of the TLS listeners, counted apart and at
  // accept (before any TLS work). Higher: a DoT client is a resolver or a stub keeping its
  // connections, many users behind one address.
  int tls_max_connections_per_client = kDefaultTlsMaxConnectionsPerClient;
  // `keepalive` for TLS connections (--tls-idle-timeout-ms): how long one waits for its next
  // query after an answer (RFC 7858 §3.4: servers SHOULD NOT close after each response; each
  // new connection costs the client and us a handshake). A client prefix whose connections
  // all end after one query gets the answer with close_notify and the close, as with 0, when
  // keepalive_learn is on (server/core/reuse_learner.h).
  absl::Duration tls_idle_timeout = kDefaultTlsIdleTimeout;
  // New handshakes per client prefix (client_prefix_v4/v6) per second, whole server (split
  // over workers), full and resumed; 0: unlimited. Beyond it the handshake fails before its
  // costly half (TlsFailure::k_limit).
  int tls_full_per_client = kDefaultTlsFullPerClient;
  int tls_resumed_per_client = kDefaultTlsResumedPerClient;
  // Workers (threads). 0: one per CPU in `cpus`, or in the affinity mask when `cpus` is empty.
  int workers = 0;
  // CPUs to pin worker i to cpus[i]. Empty: the process's affinity mask, when it has at least
  // as many CPUs as workers (otherwise the workers are not pinned).
  std::vector<int> cpus;
  Steering steering = Steering::kAuto;
  // listen(2) backlog per worker socket; the kernel caps it at net.core.somaxconn.
  int backlog = kDefaultBacklog;
  // Connections accepted per listener readiness before other events get a turn.
  int accept_burst = kDefaultAcceptBurst;
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
  // --proxy-protocol-from: CIDRs of load balancers that prefix a PROXY v2 header
  // (server/core/proxy_protocol.h). Empty: no header is looked for.
  std::vector<std::string> proxy_protocol_from;
  // --allow-from: the client prefixes served (checked at accept, or on the PROXY header's
  // address); empty: everyone (server/core/allow_list.h).
  std::vector<std::string> allow_from;
  IoLoop io = IoLoop::kEpoll;
  // --private-fd-tables: each worker thread gets its own file-descriptor table
  // (unshare(CLONE_FILES)), so that accept4 and close on one core do not contend for the
  // process's one table lock with the others (docs/design.md "Private descriptor tables").
  bool private_fd_tables = kPrivateFdTablesByDefault;  // as onepassd's flag
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_SERVER_CONFIG_H_
