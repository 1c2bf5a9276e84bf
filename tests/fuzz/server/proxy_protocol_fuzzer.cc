// Fuzz target: the PROXY protocol v2 parser (server/core/proxy_protocol.h) on any bytes. Checks its
// contract: a complete header never claims more bytes than it was given nor more than
// kMaxProxyHeaderBytes, and every prefix of the input is either incomplete or gets the same
// verdict (split invariance), whatever the bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "server/core/proxy_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using onepass::ProxyHeader;
  const absl::Span<const uint8_t> input(data, size);
  const ProxyHeader whole = onepass::ParseProxyHeader(input);
  if (whole.status == ProxyHeader::Status::kComplete &&
      (whole.length > size || whole.length > onepass::kMaxProxyHeaderBytes)) {
    std::abort();
  }
  for (size_t split = 0; split < size && split <= onepass::kMaxProxyHeaderBytes + 1; ++split) {
    const ProxyHeader part = onepass::ParseProxyHeader(input.subspan(0, split));
    if (part.status == ProxyHeader::Status::kIncomplete) continue;
    if (part.status != whole.status) std::abort();
    if (part.status == ProxyHeader::Status::kComplete &&
        (part.length != whole.length || part.client != whole.client)) {
      std::abort();
    }
  }
  onepass::ProxyPolicy policy;
  if (policy.Add("127.0.0.0/8").ok()) {
    onepass::ClientAddress peer{};
    peer[10] = peer[11] = 0xff;
    peer[12] = 127;
    const onepass::ProxyStep step = onepass::TakeProxyHeader(input, peer, policy, size % 2 == 0);
    if (step.consumed > size) std::abort();
  }
  return 0;
}
