// What the operator's TLS settings allow this engine to serve, read once per context: the
// cipher suites in the server's order (--tls-ciphersuites), the ALPN protocols we select, the
// tickets' lifetime. ChooseForFirstHello and ChooseForSecondHello (choose.h) decide each
// ClientHello against it.
#ifndef ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_SERVER_POLICY_H_
#define ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_SERVER_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onepass::tls::tls13 {

struct ServerPolicy {
  // TLS 1.3 suites in the server's order of preference, as their code points (RFC 8446 §B.4);
  // a suite this engine does not implement (TLS_AES_128_CCM_SHA256) stays in the list, so that
  // a client it would be chosen for goes to the OpenSSL engine, which does.
  std::vector<uint16_t> suites;
  // ALPN protocol names we select, in our order (TlsConfig::alpn); empty: ALPN is ignored.
  std::vector<std::string> alpn;
  // §4.6.1: at most 7 days. A DoT client resumes within minutes; 2 hours is OpenSSL's default.
  uint32_t ticket_lifetime_seconds = 7200;
  int tickets_per_handshake = 1;
  // TLS 1.2 allowed (--tls12): a ClientHello without TLS 1.3 goes to OpenSSL either way, which
  // serves it or sends protocol_version.
  bool allow_tls12 = false;
};

// The policy for `ciphersuites` (OpenSSL's SSL_CTX_set_ciphersuites syntax: names separated by
// ':'), `alpn` and the ticket settings. An unknown suite name is an error naming it.
absl::StatusOr<ServerPolicy> MakeServerPolicy(absl::string_view ciphersuites,
                                              std::vector<std::string> alpn,
                                              int tickets_per_handshake, bool allow_tls12);

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_SERVER_POLICY_H_
