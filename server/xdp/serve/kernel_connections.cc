#include "server/xdp/serve/kernel_connections.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/scoped_fd.h"

namespace onepass::xdp {
namespace {

// Every state but those the program's lookup does not count (xdp_steer.bpf.c's kernel_owns:
// LISTEN and TIME_WAIT) and CLOSE, a socket with no connection. SYN_RECV also asks for the
// request sockets of handshakes in progress (the kernel adds NEW_SYN_RECV for it).
constexpr uint32_t kLiveStates = ((1u << (TCP_CLOSING + 1)) - 1) & ~(1u << TCP_LISTEN) &
                                 ~(1u << TCP_TIME_WAIT) & ~(1u << TCP_CLOSE) & ~1u;

absl::Status Dump(int fd, uint8_t family, absl::Span<const uint16_t> ports,
                  absl::flat_hash_set<uint64_t>& out) {
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } message{};
  message.header.nlmsg_len = sizeof(message);
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  message.header.nlmsg_seq = family;
  message.request.sdiag_family = family;
  message.request.sdiag_protocol = IPPROTO_TCP;
  message.request.idiag_states = kLiveStates;
  if (send(fd, &message, sizeof(message), 0) != static_cast<ssize_t>(sizeof(message))) {
    return absl::InternalError(absl::StrCat("sock_diag request: ", std::strerror(errno)));
  }
  alignas(nlmsghdr) char buffer[32 * 1024];
  while (true) {
    const ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
    if (got < 0) {
      return absl::InternalError(absl::StrCat("sock_diag answer: ", std::strerror(errno)));
    }
    if (got == 0) return absl::InternalError("sock_diag answer: the socket closed");
    int length = static_cast<int>(got);
    for (auto* header = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(header, length);
         header = NLMSG_NEXT(header, length)) {
      if (header->nlmsg_seq != family) continue;
      if (header->nlmsg_type == NLMSG_DONE) return absl::OkStatus();
      if (header->nlmsg_type == NLMSG_ERROR) {
        const auto* error = static_cast<const nlmsgerr*>(NLMSG_DATA(header));
        return absl::UnavailableError(
            absl::StrCat("sock_diag: ", std::strerror(-error->error),
                         " (a kernel without inet_diag and tcp_diag?)"));
      }
      if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
          header->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) {
        continue;
      }
      const auto* socket = static_cast<const inet_diag_msg*>(NLMSG_DATA(header));
      const uint16_t port = ntohs(socket->id.idiag_sport);
      if (std::find(ports.begin(), ports.end(), port) == ports.end()) continue;
      out.insert(static_cast<uint64_t>(socket->id.idiag_cookie[0]) |
                 static_cast<uint64_t>(socket->id.idiag_cookie[1]) << 32);
    }
  }
}

}  // namespace

absl::StatusOr<absl::flat_hash_set<uint64_t>> ListKernelConnections(
    absl::Span<const uint16_t> ports) {
  ScopedFd fd(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (!fd.valid()) return absl::InternalError(absl::StrCat("sock_diag socket: ", std::strerror(errno)));
  // Bounded: the kernel answers a dump at once; a second is far beyond any answer.
  timeval timeout{.tv_sec = 1, .tv_usec = 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  absl::flat_hash_set<uint64_t> cookies;
  for (uint8_t family : {AF_INET, AF_INET6}) {
    if (absl::Status dumped = Dump(fd.get(), family, ports, cookies); !dumped.ok()) {
      return dumped;
    }
  }
  return cookies;
}

bool KernelConnectionsWatch::Update(const absl::flat_hash_set<uint64_t>& now) {
  absl::erase_if(left_, [&](uint64_t cookie) { return !now.contains(cookie); });
  return left_.empty();
}

}  // namespace onepass::xdp
