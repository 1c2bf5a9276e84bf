// The kernel's TCP connections on the ports the AF_XDP path serves, listed through sock_diag
// (NETLINK_SOCK_DIAG, inet_diag: what `ss` reads), for the end of the program's grace period.
//
// Why: for XdpProgramConfig::kernel_flows_grace after an attach, the XDP program looks every
// segment other than a SYN up among the kernel's sockets (one bpf_skc_lookup_tcp each, about
// 3% of a connection's CPU on the veth bench), because a connection the kernel took before the
// attach must stay the kernel's. The connections that can need it are those alive at the
// attach; once every one of them has gone, the lookups can stop. The Server lists them once
// the path is up and then every so often, and ends the grace when none of the first list is
// left (KernelConnectionsWatch), instead of after --max-connection-ms + --read-timeout-ms.
#ifndef ONEPASS_SERVER_XDP_SERVE_KERNEL_CONNECTIONS_H_
#define ONEPASS_SERVER_XDP_SERVE_KERNEL_CONNECTIONS_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace onepass::xdp {

// The socket cookies of this network namespace's TCP sockets, IPv4 and IPv6, whose local port
// is one of `ports` and which are live connections as the program's lookup counts them: any
// state but LISTEN, TIME_WAIT and CLOSE (a handshake in progress, SYN_RECV, counts). A
// superset of what the program would pass to the kernel (every address, every interface), so
// that an end of the grace decided on it is never early.
absl::StatusOr<absl::flat_hash_set<uint64_t>> ListKernelConnections(
    absl::Span<const uint16_t> ports);

// The decision, apart from the netlink dump so that it is testable: the connections listed
// once the path is up (`at_attach`) against a later list. Done when none of the first is in the
// later one (a cookie is never reused while the kernel runs).
class KernelConnectionsWatch {
 public:
  explicit KernelConnectionsWatch(absl::flat_hash_set<uint64_t> at_attach)
      : left_(std::move(at_attach)), at_attach_(left_.size()) {}

  // Forgets the connections of the first list that `now` no longer has; true once none is left.
  bool Update(const absl::flat_hash_set<uint64_t>& now);
  bool done() const { return left_.empty(); }
  size_t at_attach() const { return at_attach_; }
  size_t left() const { return left_.size(); }

 private:
  absl::flat_hash_set<uint64_t> left_;
  size_t at_attach_;
};

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_SERVE_KERNEL_CONNECTIONS_H_
