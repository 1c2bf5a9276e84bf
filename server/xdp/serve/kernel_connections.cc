#include "server/xdp/serve/kernel_connections.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/scoped_fd.h"

namespace onepass::xdp {
namespace {

// Every state but those the program's lookup does not count (xdp_steer.bpf.c's kernel_owns:
// LISTEN and TIME_WAIT) and CLOSE, a socket with no connection. SYN_RECV also asks for the
// request sockets of handshakes in progress (the kernel adds NEW_SYN_RECV for it).
constexpr uint32_t kLiveStates = ((1u << (TCP_CLOSING + 1)) - 1) & ~(1u << TCP_LISTEN) &
                                 ~(1u << TCP_TIME_WAIT) & ~(1u << TCP_CLOSE) & ~1u;

// The kernel's filter (inet_diag bytecode, as `ss` compiles `sport = :P or sport = :Q`), so
// that a host with many other sockets sends us only these: "local port is P1, else jump to
// the next test; ...", each test but the last followed by a jump to the end (accept) for a
// match. The last test's miss runs past the end (reject). Its layout is the one the kernel's
// audit accepts: every "no" target on the chain of "yes" steps.
std::vector<uint8_t> PortFilter(absl::Span<const uint16_t> ports) {
  std::vector<uint8_t> code;
  const auto op = [&](uint8_t kind, uint8_t yes, uint16_t no) {
    inet_diag_bc_op bc{kind, yes, no};
    const auto* bytes = reinterpret_cast<const uint8_t*>(&bc);
    code.insert(code.end(), bytes, bytes + sizeof(bc));
  };
  for (size_t i = 0; i < ports.size(); ++i) {
    constexpr uint8_t kTest = 2 * sizeof(inet_diag_bc_op);  // the test and its port
    constexpr uint8_t kJump = sizeof(inet_diag_bc_op);
    op(INET_DIAG_BC_S_EQ, kTest, kTest + kJump);
    op(0, 0, ports[i]);
    if (i + 1 < ports.size()) {
      const size_t after = (ports.size() - i - 2) * (kTest + kJump) + kTest;
      op(INET_DIAG_BC_JMP, kJump, static_cast<uint16_t>(after + kJump));
    }
  }
  return code;
}

absl::Status Dump(int fd, uint8_t family, absl::Span<const uint16_t> ports,
                  absl::flat_hash_set<uint64_t>& out) {
  const std::vector<uint8_t> filter = PortFilter(ports);
  struct Request {
    nlmsghdr header;
    inet_diag_req_v2 request;
    rtattr attribute;
  };
  std::vector<uint8_t> message(sizeof(Request) + filter.size());
  Request request{};
  request.header.nlmsg_len = static_cast<uint32_t>(message.size());
  request.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.header.nlmsg_seq = family;
  request.request.sdiag_family = family;
  request.request.sdiag_protocol = IPPROTO_TCP;
  request.request.idiag_states = kLiveStates;
  request.attribute.rta_type = INET_DIAG_REQ_BYTECODE;
  request.attribute.rta_len = static_cast<uint16_t>(RTA_LENGTH(filter.size()));
  static_assert(sizeof(Request) == NLMSG_LENGTH(sizeof(inet_diag_req_v2)) + RTA_LENGTH(0));
  std::memcpy(message.data(), &request, sizeof(request));
  std::memcpy(message.data() + sizeof(request), filter.data(), filter.size());
  if (send(fd, message.data(), message.size(), 0) != static_cast<ssize_t>(message.size())) {
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
        return absl::UnavailableError(absl::StrCat("sock_diag: ", std::strerror(-error->error),
                                                   " (a kernel without inet_diag and tcp_diag?)"));
      }
      if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
          header->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) {
        continue;
      }
      const auto* socket = static_cast<const inet_diag_msg*>(NLMSG_DATA(header));
      // The kernel filtered by port already; checked again all the same (cheap).
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
  if (ports.empty()) return absl::flat_hash_set<uint64_t>();
  ScopedFd fd(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (!fd.valid())
    return absl::InternalError(absl::StrCat("sock_diag socket: ", std::strerror(errno)));
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
