// Parsing --source: which local addresses connections leave from (--target is a plain
// ParseSocketAddress, common/socket_address.h). Spreading connections over many source addresses
// multiplies the 4-tuples available, so the client neither runs out of ephemeral ports nor trips on
// its own TIME-WAIT sockets.
#ifndef ONEPASS_LOADTEST_SOURCE_ADDRESSES_H_
#define ONEPASS_LOADTEST_SOURCE_ADDRESSES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/socket_address.h"

namespace onepass::load {

// A comma-separated list of addresses and inclusive IPv4 ranges ("127.0.0.2-127.0.0.254"),
// or IPv6 ranges that differ in the last 16 bits ("fd00::1-fd00::ff"). Ports are 0.
// At most `limit` addresses.
absl::StatusOr<std::vector<SocketAddress>> ParseSourceList(absl::string_view text,
                                                           size_t limit = 1 << 20);

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_SOURCE_ADDRESSES_H_
