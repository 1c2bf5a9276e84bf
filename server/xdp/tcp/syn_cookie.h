// SYN cookies (RFC 4987 §3.6): the SYN-ACK's ISN carries the state, so a SYN costs no memory.
// ISN = SipHash-2-4(key, 4-tuple, peer ISN, time slot, MSS index) with its low 3 bits replaced
// by the MSS index. The MAC is OpenSSL's (EVP_MAC "SIPHASH"), no maths of our own. Two keys:
// Rotate() makes the current one the previous; a cookie is valid in its slot and the next,
// under either key. Thread-confined (one per endpoint).
#ifndef ONEPASS_SERVER_XDP_TCP_SYN_COOKIE_H_
#define ONEPASS_SERVER_XDP_TCP_SYN_COOKIE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>

#include "server/xdp/tcp/packet.h"

typedef struct evp_mac_ctx_st EVP_MAC_CTX;

namespace onepass::xdp {

using CookieKey = std::array<uint8_t, 16>;

inline constexpr uint64_t kCookieSlotMs = 64'000;  // [ms] one time slot

class SynCookies {
 public:
  explicit SynCookies(const CookieKey& key);
  ~SynCookies();
  SynCookies(const SynCookies&) = delete;
  SynCookies& operator=(const SynCookies&) = delete;

  void Rotate(const CookieKey& new_key);

  // The ISN for a SYN from `key` with sequence number `peer_isn`, encoding the largest MSS of
  // the table not above `mss`.
  uint32_t Make(const FlowKey& key, uint32_t peer_isn, uint16_t mss, uint64_t now_ms) const;
  // For the handshake's ACK: `cookie` = its ack - 1, `peer_isn` = its seq - 1. The MSS the
  // cookie encodes, or nothing when the cookie is not ours or expired.
  std::optional<uint16_t> Check(const FlowKey& key, uint32_t peer_isn, uint32_t cookie,
                                uint64_t now_ms) const;

 private:
  uint32_t Hash(const CookieKey& k, const FlowKey& key, uint32_t peer_isn, uint64_t slot,
                uint32_t mss_index) const;

  CookieKey current_;
  CookieKey previous_;
  struct CtxFree {
    void operator()(EVP_MAC_CTX* c) const;
  };
  std::unique_ptr<EVP_MAC_CTX, CtxFree> ctx_;
};

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_TCP_SYN_COOKIE_H_
