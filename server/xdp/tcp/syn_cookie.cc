#include "server/xdp/tcp/syn_cookie.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cstdlib>
#include <cstring>

namespace onepass::xdp {
namespace {

// MSS values a cookie can name (3 bits), the common ones of RFC 4987 §3.6's practice.
constexpr uint16_t kMssTable[8] = {536, 1024, 1220, 1360, 1400, 1440, 1452, 1460};

uint32_t MssIndex(uint16_t mss) {
  uint32_t idx = 0;
  for (uint32_t i = 0; i < 8; ++i) {
    if (kMssTable[i] <= mss) idx = i;
  }
  return idx;
}

}  // namespace

void SynCookies::CtxFree::operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }

SynCookies::SynCookies(const CookieKey& key) : current_(key), previous_(key) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "SIPHASH", nullptr);
  if (mac == nullptr) std::abort();  // OpenSSL 3 always has it; no way on without it
  ctx_.reset(EVP_MAC_CTX_new(mac));
  EVP_MAC_free(mac);
  if (!ctx_) std::abort();
}

SynCookies::~SynCookies() = default;

void SynCookies::Rotate(const CookieKey& new_key) {
  previous_ = current_;
  current_ = new_key;
}

uint32_t SynCookies::Hash(const CookieKey& k, const FlowKey& key, uint32_t peer_isn, uint64_t slot,
                          uint32_t mss_index) const {
  uint8_t in[16 + 16 + 2 + 2 + 4 + 8 + 4 + 1];
  size_t n = 0;
  std::memcpy(in + n, key.peer.data(), 16);
  n += 16;
  std::memcpy(in + n, key.local.data(), 16);
  n += 16;
  std::memcpy(in + n, &key.peer_port, 2);
  n += 2;
  std::memcpy(in + n, &key.local_port, 2);
  n += 2;
  std::memcpy(in + n, &peer_isn, 4);
  n += 4;
  std::memcpy(in + n, &slot, 8);
  n += 8;
  std::memcpy(in + n, &mss_index, 4);
  n += 4;
  in[n++] = key.v6 ? 1 : 0;
  size_t out_len = 8;
  OSSL_PARAM params[] = {OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &out_len),
                         OSSL_PARAM_construct_end()};
  uint8_t out[8] = {};
  size_t written = 0;
  if (EVP_MAC_init(ctx_.get(), k.data(), k.size(), params) != 1 ||
      EVP_MAC_update(ctx_.get(), in, n) != 1 ||
      EVP_MAC_final(ctx_.get(), out, &written, sizeof(out)) != 1) {
    std::abort();
  }
  uint32_t h;
  std::memcpy(&h, out, 4);
  return h;
}

uint32_t SynCookies::Make(const FlowKey& key, uint32_t peer_isn, uint16_t mss,
                          uint64_t now_ms) const {
  uint32_t idx = MssIndex(mss);
  uint64_t slot = now_ms / kCookieSlotMs;
  return (Hash(current_, key, peer_isn, slot, idx) & ~7u) | idx;
}

std::optional<uint16_t> SynCookies::Check(const FlowKey& key, uint32_t peer_isn, uint32_t cookie,
                                          uint64_t now_ms) const {
  uint32_t idx = cookie & 7u;
  uint64_t slot = now_ms / kCookieSlotMs;
  for (const CookieKey* k : {&current_, &previous_}) {
    for (uint64_t s : {slot, slot - 1}) {
      if ((Hash(*k, key, peer_isn, s, idx) & ~7u) == (cookie & ~7u)) return kMssTable[idx];
    }
    if (current_ == previous_) break;
  }
  return std::nullopt;
}

}  // namespace onepass::xdp
