// Parsing --target and --source: where connections go and which local addresses they leave
// from. Spreading connections over many source addresses multiplies the 4-tuples available,
// so the client neither runs out of ephemeral ports nor trips on its own TIME-WAIT sockets.
#ifndef ONEPASS_LOADTEST_SOURCE_ADDRESSES_H_
#define ONEPASS_LOADTEST_SOURCE_ADDRESSES_H_

#include <sys/socket.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onepass::load {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  // "127.0.0.1:53" or "[::1]:53"; without ":port" when the port is 0 and !with_port.
  std::string ToString(bool with_port = true) const;
};

// "127.0.0.1:53", "[::1]:53" (brackets required for IPv6), "localhost" is not resolved.
absl::StatusOr<SocketAddress> ParseHostPort(absl::string_view text);

// A comma-separated list of addresses and inclusive IPv4 ranges ("127.0.0.2-127.0.0.254"),
// or IPv6 ranges that differ in the last 16 bits ("fd00::1-fd00::ff"). Ports are 0.
// At most `limit` addresses.
absl::StatusOr<std::vector<SocketAddress>> ParseSourceList(absl::string_view text,
                                                           size_t limit = 1 << 20);

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_SOURCE_ADDRESSES_H_
