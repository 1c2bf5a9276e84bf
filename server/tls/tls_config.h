// The operator's TLS settings (--tls-cert, --tls-key, --tls-ticket-keys, ...), as a plain
// value. TlsServerContext::Create turns one into a context; the flags that fill it belong to
// the server (server_main), not to this layer.
#ifndef ONEPASS_SERVER_TLS_TLS_CONFIG_H_
#define ONEPASS_SERVER_TLS_TLS_CONFIG_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace onepass::tls {

// The engine a context gets when nothing names one (TlsConfig::engine, and onepassd's when
// neither --tls-engine nor ONEPASS_TLS_ENGINE does): our own TLS 1.3 handshake, OpenSSL's
// engine behind it for every ClientHello it does not serve (onepass/onepass_engine.h).
inline constexpr absl::string_view kDefaultTlsEngine = "onepass";

inline constexpr char kDefaultTlsCipherSuites[] =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

struct TlsConfig {
  // PEM: the leaf certificate first, then its intermediates (RFC 8446 §4.4.2 order).
  std::string cert_file;
  // PEM private key of the leaf (EC P-256 is the fast choice: server/tls/README.md).
  std::string key_file;
  // Session ticket keys (server/tls/ticket_keys.h for the format); empty: one random key per
  // process, so resumption survives neither a restart nor a move to another host.
  std::string ticket_keys_file;
  // The engine behind the context (tls_engine.h): "onepass" (onepass/: our own TLS 1.3
  // handshake, OpenSSL for the ClientHellos it does not serve), or "openssl" (OpenSSL's libssl
  // for every connection).
  std::string engine = std::string(kDefaultTlsEngine);
  // TLS 1.3 only unless set (RFC 8996 retired 1.0/1.1; 1.2 only for old clients).
  bool allow_tls12 = false;
  // TLS 1.3 cipher suites in our order of preference (OpenSSL's SSL_CTX_set_ciphersuites
  // syntax); a client that lists ChaCha20 first (no AES hardware) gets ChaCha20. AES-128-GCM
  // first: its SHA-256 key schedule costs ~7% less CPU per handshake than AES-256-GCM's
  // SHA-384 (server/tls/README.md), and the handshake's X25519 and P-256 give 128-bit security
  // whichever suite follows.
  std::string ciphersuites = std::string(kDefaultTlsCipherSuites);
  // ALPN protocols we select, in our order of preference. RFC 7858 §3.1 and the IANA registry
  // name DoT "dot"; HTTPS (RDAP, OCSP, CRLs) is "http/1.1". A client that offers ALPN
  // without any of these is refused with no_application_protocol (RFC 7301 §3.2); one that
  // offers none is served. Empty: the client's offer is ignored (a protocol with no ALPN name).
  std::vector<std::string> alpn = {"dot"};
  // Ciphertext a client may send before its handshake completes [bytes]. A ClientHello is
  // usually under 2 KiB; this bounds what a slow or hostile client can make us buffer and
  // parse. Beyond it the session fails (TlsFailure::k_handshake_too_large).
  size_t max_handshake_bytes = 32 * 1024;
  // Ciphertext a session may hold unsent [bytes]: the server's first flight (certificate
  // chain) and one answer. Beyond it the session fails (k_output_full).
  size_t max_output_bytes = 96 * 1024;
  // Session tickets sent per full handshake. One suffices for clients that make one query per
  // connection; OpenSSL's default of two costs a second ticket encryption every time.
  int tickets_per_handshake = 1;
  // Warn (TlsServerContext::warnings, --check) when the certificate expires within this.
  absl::Duration expiry_warning = absl::Hours(24 * 30);
};

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_TLS_CONFIG_H_
