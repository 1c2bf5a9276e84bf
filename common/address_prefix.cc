#include "common/address_prefix.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace onepass {

bool AddressPrefix::Contains(const MappedAddress& peer) const {
  const int whole = length / 8;
  if (std::memcmp(address.data(), peer.data(), static_cast<size_t>(whole)) != 0) return false;
  const int bits = length % 8;
  if (bits == 0) return true;
  const uint8_t mask = static_cast<uint8_t>(0xff << (8 - bits));
  return (address[whole] & mask) == (peer[whole] & mask);
}

absl::StatusOr<AddressPrefix> ParseAddressPrefix(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  const size_t slash = text.find('/');
  const std::string address(text.substr(0, slash));
  AddressPrefix prefix;
  int max_length = 128;
  if (inet_pton(AF_INET6, address.c_str(), prefix.address.data()) != 1) {
    uint8_t v4[4];
    if (inet_pton(AF_INET, address.c_str(), v4) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", text, "\" is not an IPv4 or IPv6 address or prefix"));
    }
    prefix.address = MapIpv4(v4);
    max_length = 32;
  }
  int length = max_length;
  if (slash != absl::string_view::npos &&
      (!absl::SimpleAtoi(text.substr(slash + 1), &length) || length < 0 || length > max_length)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\": prefix length must be 0 to ", max_length));
  }
  prefix.length = length + (128 - max_length);
  return prefix;
}

absl::StatusOr<std::vector<AddressPrefix>> ParseAddressPrefixList(absl::string_view text) {
  std::vector<AddressPrefix> prefixes;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    absl::StatusOr<AddressPrefix> prefix = ParseAddressPrefix(item);
    if (!prefix.ok()) return prefix.status();
    prefixes.push_back(*prefix);
  }
  return prefixes;
}

}  // namespace onepass
