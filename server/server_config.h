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
#include "server/core/core_config.h"
#include "server/drivers/driver_factory.h"
#include "server/xdp/af_xdp/xdp_program.h"

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
// DoT connections kept idle (RFC 7766 §6.2.3, RFC 7858 §3.4): a few seconds, as the peers keep
// them (dnsdist 2 s of receive timeout, BIND and Unbound 30 s of idle time, NSD 120 s).
inline constexpr absl::Duration kDefaultTlsIdleTimeout = absl::Seconds(10);
// onepassd's --private-fd-tables default. ThreadSanitizer keys descriptors by number for the
// whole process: with private tables the same number names a different socket in each worker,
// and TSan reports races between workers that share no descriptor (accept4 in one, epoll_ctl
// in another), so a TSan build shares one table.
#ifdef ABSL_HAVE_THREAD_SANITIZER
inline constexpr bool kPrivateFdTablesByDefault = false;
#else
inline constexpr bool kPrivateFdTablesByDefault = true;
#endif

// --xdp-mode: how the AF_XDP path's program runs (server/xdp/af_xdp/xdp_program.h).
enum class XdpModeFlag { kAuto, kNative, kGeneric };  // auto: native, else generic

// The one mapping of --xdp-mode to the attach's preference, for Server::AttachXdp and --check
// (server/xdp_flags.h CheckXdp). Here, beside the flag's enum, rather than in xdp_flags.h:
// the server may not depend on server_main, where the flags live.
inline xdp::XdpModePreference XdpPreferenceOf(XdpModeFlag mode) {
  switch (mode) {
    case XdpModeFlag::kNative:
      return xdp::XdpModePreference::kNativeOnly;
    case XdpModeFlag::kGeneric:
      return xdp::XdpModePreference::kGenericOnly;
    case XdpModeFlag::kAuto:
      break;
  }
  return xdp::XdpModePreference::kNativeThenGeneric;
}

// Everything a server is started with: the core's limits (CoreConfig) and what start-up does
// with them (addresses, workers, CPUs, the loop).
struct ServerConfig : CoreConfig {
  // "ADDR:PORT" or "[V6ADDR]:PORT"; port 0 asks the kernel for one (the same for all workers).
  std::vector<std::string> listen;
  // The same for TLS listeners (--tls-listen: DNS over TLS on 853, RFC 7858): each worker
  // listens on these too, after `listen`'s, and serves them through the TLS context given to
  // Server::Create.
  std::vector<std::string> tls_listen;
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
  // new connection costs the client and us a handshake). A client address whose last 16
  // kept-open connections each ended after one query gets the answer with close_notify and the
  // close, as with 0, when keepalive_learn is on (server/core/reuse_learner.h).
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
  // --proxy-protocol-from: CIDRs of load balancers that prefix a PROXY v2 header
  // (server/core/proxy_protocol.h). Empty: no header is looked for.
  std::vector<std::string> proxy_protocol_from;
  IoLoop io = IoLoop::kEpoll;
  // --private-fd-tables: each worker thread gets its own file-descriptor table
  // (unshare(CLONE_FILES)), so that accept4 and close on one core do not contend for the
  // process's one table lock with the others (docs/design.md "Private descriptor tables").
  bool private_fd_tables = kPrivateFdTablesByDefault;  // as onepassd's flag
  // --xdp: interfaces whose rx queue k worker k also serves over AF_XDP (server/xdp/serve/),
  // TCP to the ports of `listen`; the kernel's listeners stay beside it. Empty: off.
  std::vector<std::string> xdp;
  XdpModeFlag xdp_mode = XdpModeFlag::kAuto;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_SERVER_CONFIG_H_
