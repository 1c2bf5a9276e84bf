// The PROXY protocol, version 2 (binary; HAProxy's proxy-protocol.txt §2.2): a TCP load
// balancer prepends a header carrying the client's address, so that per-client limits and
// metrics see the client, not the balancer.
//
// --proxy-protocol-from CIDR names the balancers. A connection from one of them must begin
// with a v2 header; one from elsewhere must not. The header arrives with the request (the
// balancer sends it before any client byte, usually in the same segment), so it is taken in
// the single pass, before the handler sees the input (server/core/connection.cc).
#ifndef ONEPASS_SERVER_CORE_PROXY_PROTOCOL_H_
#define ONEPASS_SERVER_CORE_PROXY_PROTOCOL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/address_prefix.h"

namespace onepass {

// §2.2: the 12-byte signature that starts every v2 header.
inline constexpr std::array<uint8_t, 12> kProxyV2Signature = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                                              0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
// The longest header accepted: 16 fixed bytes, a UNIX address block (216) and room for TLVs.
// A balancer configured to send more (large TLVs) is refused.
inline constexpr size_t kMaxProxyHeaderBytes = 1024;

// An address as the per-client limit keys it: IPv6, or IPv4 as ::ffff:a.b.c.d.
using ClientAddress = std::array<uint8_t, 16>;

struct ProxyHeader {
  enum class Status {
    kIncomplete,  // a prefix of a header: read more
    kNotProxy,    // the input does not start with the signature
    kInvalid,     // a broken header (version, command, family, length)
    kComplete,
  };
  Status status = Status::kIncomplete;
  size_t length = 0;        // kComplete: bytes the header takes (to drop before the request)
  bool local = false;       // §2.2 LOCAL command (the balancer's own health check): no address
  bool has_client = false;  // PROXY over TCP/IPv4 or IPv6: `client` is the source
  ClientAddress client{};
  uint16_t client_port = 0;
};

// Parses a v2 header at the front of `input`. Pure: the same answer for the same bytes.
ProxyHeader ParseProxyHeader(absl::Span<const uint8_t> input);

// The balancers' addresses (--proxy-protocol-from).
class ProxyPolicy {
 public:
  // --proxy-protocol-from: every entry, or the first one's error.
  static absl::StatusOr<ProxyPolicy> FromList(const std::vector<std::string>& cidrs);
  // "10.0.0.0/8", "2001:db8::/32", "127.0.0.1" (a host). Errors say what to write.
  absl::Status Add(absl::string_view cidr);
  bool empty() const { return networks_.empty(); }
  bool Trusts(const ClientAddress& peer) const;

 private:
  std::vector<AddressPrefix> networks_;
};

// What the connection does with the front of its input (server/core/connection.cc).
struct ProxyStep {
  enum class Action {
    kReadMore,  // a trusted peer's header is not complete yet
    kReject,    // header missing, broken, or from a peer not trusted: close
    kDone,      // drop `consumed` bytes (0 without a header) and hand the rest to the handler
  };
  Action action = Action::kDone;
  size_t consumed = 0;
  bool has_client = false;
  ClientAddress client{};
};

// `peer`: the socket's peer (the balancer, when trusted). `peer_closed`: nothing more will come.
ProxyStep TakeProxyHeader(absl::Span<const uint8_t> input, const ClientAddress& peer,
                          const ProxyPolicy& policy, bool peer_closed);

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_PROXY_PROTOCOL_H_
