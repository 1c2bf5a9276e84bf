// Client addresses as the server keys them, and address prefixes over them. One 16-byte form
// for both families (IPv4 as ::ffff:a.b.c.d, RFC 4291 §2.5.5.2), so a limit, a trusted-proxy
// list or a rate-limit exemption treats an IPv4 client the same whether it came on an IPv4 or a
// dual-stack socket. Used by the per-client limits, the PROXY protocol and Whois.
#ifndef ONEPASS_COMMON_ADDRESS_PREFIX_H_
#define ONEPASS_COMMON_ADDRESS_PREFIX_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onepass {

using MappedAddress = std::array<uint8_t, 16>;

// `v4`: 4 bytes in network order.
inline MappedAddress MapIpv4(const uint8_t* v4) {
  MappedAddress mapped{};
  mapped[10] = mapped[11] = 0xff;
  std::memcpy(mapped.data() + 12, v4, 4);
  return mapped;
}

// The address of `address`, v4-mapped when IPv4; all zero for any other family. Inline: every
// accepted connection goes through it.
inline MappedAddress MapAddress(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET6) {
    MappedAddress mapped{};
    std::memcpy(mapped.data(), &reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr, 16);
    return mapped;
  }
  if (address.ss_family == AF_INET) {
    return MapIpv4(reinterpret_cast<const uint8_t*>(
        &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr));
  }
  return MappedAddress{};
}

// An address prefix over MappedAddress: an IPv4 /n is a /(96+n).
struct AddressPrefix {
  MappedAddress address{};
  int length = 0;  // bits, 0..128

  bool Contains(const MappedAddress& peer) const;
};

// Parses "a.b.c.d/n" (n 0..32) or "x:y::z/n" (n 0..128); without "/n" a single address.
// Surrounding whitespace is ignored. Errors say what is wrong.
absl::StatusOr<AddressPrefix> ParseAddressPrefix(absl::string_view text);
// A comma-separated list of them; empty text gives an empty list.
absl::StatusOr<std::vector<AddressPrefix>> ParseAddressPrefixList(absl::string_view text);

}  // namespace onepass

#endif  // ONEPASS_COMMON_ADDRESS_PREFIX_H_
