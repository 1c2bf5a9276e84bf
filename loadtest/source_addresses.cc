#include "loadtest/source_addresses.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace onepass::load {

absl::StatusOr<std::vector<SocketAddress>> ParseSourceList(absl::string_view text, size_t limit) {
  std::vector<SocketAddress> result;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    std::vector<absl::string_view> ends = absl::StrSplit(item, absl::MaxSplits('-', 1));
    absl::StatusOr<SocketAddress> first = ParseIpAddress(ends[0]);
    if (!first.ok()) return first.status();
    if (ends.size() == 1) {
      result.push_back(*first);
    } else {
      absl::StatusOr<SocketAddress> last = ParseIpAddress(ends[1]);
      if (!last.ok()) return last.status();
      if (first->family() != last->family()) {
        return absl::InvalidArgumentError(absl::StrCat("range mixes IPv4 and IPv6: ", item));
      }
      if (first->family() == AF_INET) {
        uint32_t from = ntohl(reinterpret_cast<sockaddr_in*>(&first->storage)->sin_addr.s_addr);
        uint32_t to = ntohl(reinterpret_cast<sockaddr_in*>(&last->storage)->sin_addr.s_addr);
        if (from > to) return absl::InvalidArgumentError(absl::StrCat("reversed range: ", item));
        if (to - from >= limit) {
          return absl::InvalidArgumentError(absl::StrCat("range too large: ", item));
        }
        for (uint64_t value = from; value <= to; ++value) {
          SocketAddress address = *first;
          reinterpret_cast<sockaddr_in*>(&address.storage)->sin_addr.s_addr =
              htonl(static_cast<uint32_t>(value));
          result.push_back(address);
        }
      } else {
        auto* from6 = &reinterpret_cast<sockaddr_in6*>(&first->storage)->sin6_addr;
        auto* to6 = &reinterpret_cast<sockaddr_in6*>(&last->storage)->sin6_addr;
        if (std::memcmp(from6->s6_addr, to6->s6_addr, 14) != 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("IPv6 range must differ only in the last 16 bits: ", item));
        }
        int from = (from6->s6_addr[14] << 8) | from6->s6_addr[15];
        int to = (to6->s6_addr[14] << 8) | to6->s6_addr[15];
        if (from > to) return absl::InvalidArgumentError(absl::StrCat("reversed range: ", item));
        for (int value = from; value <= to; ++value) {
          SocketAddress address = *first;
          auto* bytes = reinterpret_cast<sockaddr_in6*>(&address.storage)->sin6_addr.s6_addr;
          bytes[14] = static_cast<uint8_t>(value >> 8);
          bytes[15] = static_cast<uint8_t>(value & 0xFF);
          result.push_back(address);
        }
      }
    }
    if (result.size() > limit) return absl::InvalidArgumentError("too many source addresses");
  }
  if (result.empty()) return absl::InvalidArgumentError("empty source address list");
  return result;
}

}  // namespace onepass::load
