#include "loadtest/source_addresses.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace onepass::load {
namespace {

// Parses a bare IPv4 or IPv6 address (no brackets, no port).
absl::StatusOr<SocketAddress> ParseAddress(absl::string_view text) {
  std::string host(text);
  SocketAddress address;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address.storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    address.length = sizeof(sockaddr_in);
    return address;
  }
  std::memset(&address.storage, 0, sizeof(address.storage));
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    address.length = sizeof(sockaddr_in6);
    return address;
  }
  return absl::InvalidArgumentError(absl::StrCat("not an IP address: \"", text, "\""));
}

}  // namespace

std::string SocketAddress::ToString(bool with_port) const {
  char text[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (family() == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&storage);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    port = ntohs(v4->sin_port);
    return with_port ? absl::StrCat(text, ":", port) : std::string(text);
  }
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&storage);
  inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
  port = ntohs(v6->sin6_port);
  return with_port ? absl::StrCat("[", text, "]:", port) : std::string(text);
}

absl::StatusOr<SocketAddress> ParseHostPort(absl::string_view text) {
  absl::string_view host;
  absl::string_view port_text;
  if (absl::ConsumePrefix(&text, "[")) {
    size_t close = text.find("]:");
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError("IPv6 target must look like [::1]:53");
    }
    host = text.substr(0, close);
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == absl::string_view::npos || text.find(':') != colon) {
      return absl::InvalidArgumentError(
          absl::StrCat("target must be ADDR:PORT (IPv6 as [ADDR]:PORT): \"", text, "\""));
    }
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  int port = 0;
  if (!absl::SimpleAtoi(port_text, &port) || port < 1 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bad port: \"", port_text, "\""));
  }
  absl::StatusOr<SocketAddress> address = ParseAddress(host);
  if (!address.ok()) return address.status();
  if (address->family() == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&address->storage)->sin_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in6*>(&address->storage)->sin6_port = htons(port);
  }
  return address;
}

absl::StatusOr<std::vector<SocketAddress>> ParseSourceList(absl::string_view text, size_t limit) {
  std::vector<SocketAddress> result;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    std::vector<absl::string_view> ends = absl::StrSplit(item, absl::MaxSplits('-', 1));
    absl::StatusOr<SocketAddress> first = ParseAddress(ends[0]);
    if (!first.ok()) return first.status();
    if (ends.size() == 1) {
      result.push_back(*first);
    } else {
      absl::StatusOr<SocketAddress> last = ParseAddress(ends[1]);
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
