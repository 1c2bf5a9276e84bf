// Numeric socket addresses as written on command lines: onepassd's --listen ("127.0.0.1:53",
// "[::1]:53", "0.0.0.0:0") and the load tester's --target and --source. One parser for both,
// so the two programs accept the same spellings.
#ifndef ONEPASS_COMMON_SOCKET_ADDRESS_H_
#define ONEPASS_COMMON_SOCKET_ADDRESS_H_

#include <sys/socket.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onepass {

// A numeric IPv4 or IPv6 address with a port. No name lookups: a server binds what it is told,
// and a load tester must not measure the resolver.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  int port() const;
  void set_port(int port);
  // "127.0.0.1:53" or "[::1]:53"; the bare address ("127.0.0.1", "::1") when !with_port.
  std::string ToString(bool with_port = true) const;
};

// How ParseSocketAddress words its errors and which ports it takes.
struct SocketAddressSpec {
  // What the address is for, in "bad <what> 'TEXT': ...": "listen address", "target".
  absl::string_view what = "address";
  // 0 where a port of 0 means "pick a free one" (a listener); 1 where it must be reachable.
  int min_port = 0;
};

// Parses "A.B.C.D:PORT" or "[IPV6]:PORT" (the brackets are required for IPv6). An error says
// what is wrong and how to write it ("write ADDR:PORT, e.g. ...").
absl::StatusOr<SocketAddress> ParseSocketAddress(absl::string_view text,
                                                 const SocketAddressSpec& spec = {});

// Parses a bare IPv4 or IPv6 address (no brackets, no port); the port is 0.
absl::StatusOr<SocketAddress> ParseIpAddress(absl::string_view text);

// The address a socket is bound to (getsockname).
absl::StatusOr<SocketAddress> LocalAddress(int fd);

// The same address, byte for byte (family, address, port); two empty ones (length 0) too.
bool SameAddress(const SocketAddress& a, const SocketAddress& b);

}  // namespace onepass

#endif  // ONEPASS_COMMON_SOCKET_ADDRESS_H_
