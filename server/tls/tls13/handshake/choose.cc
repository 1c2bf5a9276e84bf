#include "server/tls/tls13/handshake/choose.h"

#include <algorithm>
#include <string>

#include "server/tls/tls13/crypto/cipher_suite.h"

namespace onepass::tls::tls13 {
namespace {

constexpr uint16_t kTls13 = 0x0304;
constexpr uint16_t kChaCha20 = 0x1303;
// The groups this engine computes, in the server's order for a HelloRetryRequest: X25519 costs
// less than P-256 (RFC 8446 §4.2.7 leaves the order to the server).
constexpr uint16_t kGroups[] = {kGroupX25519, kGroupSecp256r1};

bool IsOurGroup(uint16_t group) { return group == kGroupX25519 || group == kGroupSecp256r1; }

bool PolicyHasSuite(const ServerPolicy& policy, uint16_t suite) {
  for (uint16_t s : policy.suites) {
    if (s == suite) return true;
  }
  return false;
}

// The server's order, as the OpenSSL engine sets it (SSL_OP_CIPHER_SERVER_PREFERENCE with
// SSL_OP_PRIORITIZE_CHACHA): a client whose first choice is ChaCha20 (no AES instructions)
// gets ChaCha20; every other client the first of our suites it offers. 0: none in common.
uint16_t ChooseSuite(const ClientHello& hello, const ServerPolicy& policy) {
  if (hello.cipher_suites.size() > 0 && hello.cipher_suites.at(0) == kChaCha20 &&
      PolicyHasSuite(policy, kChaCha20)) {
    return kChaCha20;
  }
  for (uint16_t suite : policy.suites) {
    if (hello.cipher_suites.Contains(suite)) return suite;
  }
  return 0;
}

// RFC 7301 §3.2: our first protocol the client offers. `*found` false when it offers none of
// ours; an empty view with `*found` true when ALPN does not apply (not offered, or we have no
// protocols).
absl::Span<const uint8_t> ChooseAlpn(const ClientHello& hello, const ServerPolicy& policy,
                                     bool* found) {
  *found = true;
  if (!hello.has_alpn || policy.alpn.empty()) return {};
  for (const std::string& ours : policy.alpn) {
    absl::Span<const uint8_t> list = hello.alpn_list;
    while (!list.empty()) {  // the parser checked every name's length
      const size_t n = list[0];
      const absl::Span<const uint8_t> name = list.subspan(1, n);
      if (name.size() == ours.size() &&
          std::equal(name.begin(), name.end(), ours.begin(),
                     [](uint8_t a, char b) { return a == static_cast<uint8_t>(b); })) {
        return name;
      }
      list.remove_prefix(1 + n);
    }
  }
  *found = false;
  return {};
}

Choice FallBack(Fallback why) {
  Choice choice;
  choice.action = Choice::Action::kFallback;
  choice.fallback = why;
  return choice;
}

Choice Refuse(AlertDescription alert, const char* reason) {
  Choice choice;
  choice.action = Choice::Action::kRefuse;
  choice.alert = alert;
  choice.reason = reason;
  return choice;
}

}  // namespace

Choice ChooseForFirstHello(const ClientHello& hello, const ServerPolicy& policy) {
  // §4.1.2: a TLS 1.3 client's legacy_version is 0x0303; OpenSSL refuses an older one
  // (protocol_version), so it answers such a hello itself.
  if (!hello.supported_versions.Contains(kTls13) || hello.legacy_version != 0x0303) {
    return FallBack(Fallback::k_not_tls13);
  }
  // §4.2.10: we never offer early data (no ticket of ours allows it); OpenSSL knows how to
  // skip the records a client sends anyway.
  if (hello.early_data) return FallBack(Fallback::k_early_data);
  // §4.2.2: a cookie belongs in a ClientHello that answers a HelloRetryRequest.
  if (hello.has_cookie) return FallBack(Fallback::k_cookie);
  const uint16_t suite = ChooseSuite(hello, policy);
  if (suite == 0 || !IsKnownSuite(suite)) return FallBack(Fallback::k_suite);
  if (!hello.signature_algorithms.Contains(kEcdsaSecp256r1Sha256)) {
    return FallBack(Fallback::k_signature);
  }
  bool alpn_found = false;
  const absl::Span<const uint8_t> alpn = ChooseAlpn(hello, policy, &alpn_found);
  if (!alpn_found) return FallBack(Fallback::k_alpn);
  if (!hello.has_key_share) return FallBack(Fallback::k_group);

  Choice choice;
  choice.suite = suite;
  choice.alpn = alpn;
  choice.offers_resumption = hello.has_pre_shared_key && hello.psk_dhe_ke;
  // The client's first share on a group of ours (its order: it sent the share it prefers).
  for (size_t i = 0; i < hello.key_share_count; ++i) {
    if (IsOurGroup(hello.key_shares[i].group)) {
      choice.action = Choice::Action::kServe;
      choice.group = hello.key_shares[i].group;
      choice.key_share_index = i;
      return choice;
    }
  }
  // §4.1.4: no usable share, but a group of ours supported: ask for its share.
  for (uint16_t group : kGroups) {
    if (hello.supported_groups.Contains(group)) {
      choice.action = Choice::Action::kRetry;
      choice.group = group;
      return choice;
    }
  }
  return FallBack(Fallback::k_group);
}

Choice ChooseForSecondHello(const ClientHello& hello, const ServerPolicy& policy, uint16_t suite,
                            uint16_t group) {
  if (!hello.supported_versions.Contains(kTls13) || hello.legacy_version != 0x0303) {
    return Refuse(AlertDescription::kProtocolVersion, "second ClientHello without TLS 1.3");
  }
  if (hello.early_data) {  // §4.2.10: never after a HelloRetryRequest
    return Refuse(AlertDescription::kIllegalParameter, "early_data after HelloRetryRequest");
  }
  if (hello.has_cookie) {  // we sent none (§4.2.2: the client echoes the server's)
    return Refuse(AlertDescription::kIllegalParameter, "a cookie we did not send");
  }
  if (ChooseSuite(hello, policy) != suite) {
    return Refuse(AlertDescription::kIllegalParameter, "cipher suite changed after retry");
  }
  if (!hello.signature_algorithms.Contains(kEcdsaSecp256r1Sha256)) {
    return Refuse(AlertDescription::kHandshakeFailure, "ecdsa_secp256r1_sha256 withdrawn");
  }
  bool alpn_found = false;
  const absl::Span<const uint8_t> alpn = ChooseAlpn(hello, policy, &alpn_found);
  if (!alpn_found) {
    return Refuse(AlertDescription::kNoApplicationProtocol, "no ALPN protocol of ours");
  }
  if (hello.key_share_count != 1 || hello.key_shares[0].group != group) {
    return Refuse(AlertDescription::kIllegalParameter, "key share not the one we asked for");
  }
  Choice choice;
  choice.action = Choice::Action::kServe;
  choice.suite = suite;
  choice.group = group;
  choice.key_share_index = 0;
  choice.alpn = alpn;
  choice.offers_resumption = hello.has_pre_shared_key && hello.psk_dhe_ke;
  return choice;
}

}  // namespace onepass::tls::tls13
