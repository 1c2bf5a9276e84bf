// Listen addresses as given to --listen: "127.0.0.1:53", "[::1]:53", "0.0.0.0:0".
#ifndef ONEPASS_SERVER_SOCKET_ADDRESS_H_
#define ONEPASS_SERVER_SOCKET_ADDRESS_H_

#include <sys/socket.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onepass {

// A numeric IPv4 or IPv6 address with a port. No name lookups: a server binds what it is told.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  int port() const;
  void set_port(int port);
  // "127.0.0.1:53" or "[::1]:53".
  std::string ToString() const;
};

// Parses "A.B.C.D:PORT" or "[IPV6]:PORT" (the brackets are required for IPv6).
absl::StatusOr<SocketAddress> ParseSocketAddress(absl::string_view text);

// The address a socket is bound to (getsockname).
absl::StatusOr<SocketAddress> LocalAddress(int fd);

}  // namespace onepass

#endif  // ONEPASS_SERVER_SOCKET_ADDRESS_H_
