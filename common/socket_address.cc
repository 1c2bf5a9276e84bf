#include "common/socket_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace onepass {
namespace {

// inet_pton into a zeroed address of `family`; false if `host` is not one.
bool ParseNumeric(int family, const std::string& host, SocketAddress* address) {
  *address = SocketAddress();
  if (family == AF_INET6) {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&address->storage);
    if (inet_pton(AF_INET6, host.c_str(), &sin6->sin6_addr) != 1) return false;
    sin6->sin6_family = AF_INET6;
    address->length = sizeof(sockaddr_in6);
    return true;
  }
  auto* sin = reinterpret_cast<sockaddr_in*>(&address->storage);
  if (inet_pton(AF_INET, host.c_str(), &sin->sin_addr) != 1) return false;
  sin->sin_family = AF_INET;
  address->length = sizeof(sockaddr_in);
  return true;
}

}  // namespace

int SocketAddress::port() const {
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
}

void SocketAddress::set_port(int port) {
  if (family() == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  }
}

std::string SocketAddress::ToString(bool with_port) const {
  char text[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, text,
              sizeof(text));
    return with_port ? absl::StrCat("[", text, "]:", port()) : std::string(text);
  }
  inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, text, sizeof(text));
  return with_port ? absl::StrCat(text, ":", port()) : std::string(text);
}

absl::StatusOr<SocketAddress> ParseSocketAddress(absl::string_view text,
                                                 const SocketAddressSpec& spec) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad ", spec.what, " '", text, "': ", why,
                     "; write ADDR:PORT, e.g. 127.0.0.1:53 or [::1]:53",
                     spec.min_port == 0 ? " (port 0 picks a free port)" : ""));
  };
  size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos) return invalid("no ':PORT'");
  absl::string_view host = text.substr(0, colon);
  int port = -1;
  if (!absl::SimpleAtoi(text.substr(colon + 1), &port) || port < spec.min_port || port > 65535) {
    return invalid(absl::StrCat("the port is not a number from ", spec.min_port, " to 65535"));
  }
  SocketAddress address;
  if (!host.empty() && host.front() == '[') {
    if (host.size() < 2 || host.back() != ']') return invalid("unbalanced '['");
    if (!ParseNumeric(AF_INET6, std::string(host.substr(1, host.size() - 2)), &address)) {
      return invalid("not a numeric IPv6 address");
    }
  } else if (!ParseNumeric(AF_INET, std::string(host), &address)) {
    return invalid("not a numeric IPv4 address (IPv6 goes in brackets)");
  }
  address.set_port(port);
  return address;
}

absl::StatusOr<SocketAddress> ParseIpAddress(absl::string_view text) {
  const std::string host(text);
  SocketAddress address;
  if (ParseNumeric(AF_INET, host, &address) || ParseNumeric(AF_INET6, host, &address)) {
    return address;
  }
  return absl::InvalidArgumentError(absl::StrCat("not an IP address: \"", text, "\""));
}

absl::StatusOr<SocketAddress> LocalAddress(int fd) {
  SocketAddress address;
  address.length = sizeof(address.storage);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address.storage), &address.length) != 0) {
    return absl::InternalError(absl::StrCat("getsockname: ", std::strerror(errno)));
  }
  return address;
}

bool SameAddress(const SocketAddress& a, const SocketAddress& b) {
  return a.length == b.length && std::memcmp(&a.storage, &b.storage, a.length) == 0;
}

}  // namespace onepass
