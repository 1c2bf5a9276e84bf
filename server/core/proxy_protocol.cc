#include "server/core/proxy_protocol.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/socket_address.h"

namespace onepass {
namespace {

constexpr size_t kFixedBytes = 16;  // signature, ver_cmd, fam, len

}  // namespace

ProxyHeader ParseProxyHeader(absl::Span<const uint8_t> input) {
  ProxyHeader header;
  const size_t prefix = std::min(input.size(), kProxyV2Signature.size());
  if (!std::equal(input.begin(), input.begin() + prefix, kProxyV2Signature.begin())) {
    header.status = ProxyHeader::Status::kNotProxy;
    return header;
  }
  if (input.size() < kFixedBytes) return header;  // kIncomplete
  const uint8_t version = input[12] >> 4;
  const uint8_t command = input[12] & 0x0F;
  const uint8_t family = input[13] >> 4;
  const uint8_t transport = input[13] & 0x0F;
  const size_t length = kFixedBytes + ((size_t{input[14]} << 8) | input[15]);
  // §2.2: version 2 only; commands LOCAL (0) and PROXY (1); anything else must be dropped.
  if (version != 2 || command > 1 || family > 3 || transport > 2 || length > kMaxProxyHeaderBytes) {
    header.status = ProxyHeader::Status::kInvalid;
    return header;
  }
  if (input.size() < length) return header;  // kIncomplete
  header.length = length;
  header.status = ProxyHeader::Status::kComplete;
  if (command == 0) {  // LOCAL: the balancer speaks for itself; the address block is ignored
    header.local = true;
    return header;
  }
  const uint8_t* block = input.data() + kFixedBytes;
  const size_t block_bytes = length - kFixedBytes;
  // §2.2: the address block sizes; a shorter block is broken, TLVs may follow a longer one.
  if (family == 1) {  // AF_INET
    if (block_bytes < 12) {
      header.status = ProxyHeader::Status::kInvalid;
      return header;
    }
    header.client = MapIpv4(block);
    header.client_port = static_cast<uint16_t>((block[8] << 8) | block[9]);
    header.has_client = transport == 1;
  } else if (family == 2) {  // AF_INET6
    if (block_bytes < 36) {
      header.status = ProxyHeader::Status::kInvalid;
      return header;
    }
    std::memcpy(header.client.data(), block, 16);
    header.client_port = static_cast<uint16_t>((block[32] << 8) | block[33]);
    header.has_client = transport == 1;
  } else if (family == 3 && block_bytes < 216) {  // AF_UNIX: accepted, no address we can key
    header.status = ProxyHeader::Status::kInvalid;
  }
  // UNSPEC: "the receiver should ignore the address information" (§2.2); the peer stays.
  return header;
}

absl::Status ProxyPolicy::Add(absl::string_view cidr) {
  absl::StatusOr<AddressPrefix> prefix = ParseAddressPrefix(cidr);
  if (!prefix.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--proxy-protocol-from: ", prefix.status().message(),
                     "; write ADDR/BITS, e.g. 10.0.0.0/8 or "
                     "2001:db8::/32"));
  }
  networks_.push_back(*prefix);
  return absl::OkStatus();
}

absl::StatusOr<ProxyPolicy> ProxyPolicy::FromList(const std::vector<std::string>& cidrs) {
  ProxyPolicy policy;
  for (const std::string& cidr : cidrs) {
    if (absl::Status added = policy.Add(cidr); !added.ok()) return added;
  }
  return policy;
}

bool ProxyPolicy::Trusts(const ClientAddress& peer) const {
  for (const AddressPrefix& network : networks_) {
    if (network.Contains(peer)) return true;
  }
  return false;
}

ProxyStep TakeProxyHeader(absl::Span<const uint8_t> input, const ClientAddress& peer,
                          const ProxyPolicy& policy, bool peer_closed) {
  ProxyStep step;
  const ProxyHeader header = ParseProxyHeader(input);
  if (!policy.Trusts(peer)) {
    // A client that sends a header itself would choose its own address: refused. (A prefix of
    // the signature shorter than 12 bytes goes to the handler, which cannot parse it either.)
    if (header.status != ProxyHeader::Status::kNotProxy &&
        input.size() >= kProxyV2Signature.size()) {
      step.action = ProxyStep::Action::kReject;
    }
    return step;
  }
  switch (header.status) {
    case ProxyHeader::Status::kIncomplete:
      step.action = peer_closed ? ProxyStep::Action::kReject : ProxyStep::Action::kReadMore;
      return step;
    case ProxyHeader::Status::kNotProxy:
    case ProxyHeader::Status::kInvalid:
      step.action = ProxyStep::Action::kReject;
      return step;
    case ProxyHeader::Status::kComplete:
      step.consumed = header.length;
      step.has_client = header.has_client;
      step.client = header.client;
      return step;
  }
  return step;
}

}  // namespace onepass
