// Why the TLS 1.3 engine handed a ClientHello to the OpenSSL engine: one counter each
// (TlsStats::fallback), for operators to see what their clients send that it does not serve.
// Header-only: the neutral TLS layer's counters name these without depending on the engine.
#ifndef ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_FALLBACK_H_
#define ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_FALLBACK_H_

#include <cstdint>

namespace onepass::tls::tls13 {

// REASON(name, help), in counter order.
#define ONEPASS_TLS13_FALLBACKS(REASON)                                                          \
  REASON(not_understood, "a ClientHello this engine's parser refuses (OpenSSL sends the alert)") \
  REASON(not_tls13, "no TLS 1.3 in supported_versions (TLS 1.2, or protocol_version)")           \
  REASON(suite, "the suite chosen in the server's order is not one this engine implements")      \
  REASON(group, "no key share or supported group on X25519 or secp256r1")                        \
  REASON(signature, "the client does not accept ecdsa_secp256r1_sha256")                         \
  REASON(alpn, "ALPN offered without one of ours (OpenSSL sends no_application_protocol)")       \
  REASON(early_data, "the client offers 0-RTT early data")                                       \
  REASON(cookie, "a cookie in a first ClientHello")                                              \
  REASON(certificate, "the certificate's key is not ECDSA P-256")

enum class Fallback : uint8_t {
  kNone = 0,
#define ONEPASS_TLS13_FALLBACK_ENUM(name, help) k_##name,
  ONEPASS_TLS13_FALLBACKS(ONEPASS_TLS13_FALLBACK_ENUM)
#undef ONEPASS_TLS13_FALLBACK_ENUM
};

#define ONEPASS_TLS13_FALLBACK_COUNT(name, help) +1
inline constexpr int kFallbackCount = 0 ONEPASS_TLS13_FALLBACKS(ONEPASS_TLS13_FALLBACK_COUNT);
#undef ONEPASS_TLS13_FALLBACK_COUNT

// "not_understood", ... ("none" for kNone).
inline const char* FallbackName(Fallback fallback) {
  switch (fallback) {
#define ONEPASS_TLS13_FALLBACK_NAME(name, help) \
  case Fallback::k_##name:                      \
    return #name;
    ONEPASS_TLS13_FALLBACKS(ONEPASS_TLS13_FALLBACK_NAME)
#undef ONEPASS_TLS13_FALLBACK_NAME
    case Fallback::kNone:
      break;
  }
  return "none";
}

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_FALLBACK_H_
