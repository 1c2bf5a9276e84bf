// The server side of TLS for every connection of a listener: certificate, key, ticket keys,
// versions, ALPN, as one OpenSSL SSL_CTX built from a TlsConfig and never changed after.
//
// Threads and lifetime: built on the loading thread (start-up, and each SIGHUP reload builds a
// new one beside the old); shared read-only by all workers through a shared_ptr; a session
// keeps the context it started with alive (TlsSession holds it), so a reload never pulls
// certificates from under a handshake in flight. Nothing in it is written after Create, which
// is what makes OpenSSL's use of it from many threads safe.
//
// What every session built from it does (the why of each is in tls_server_context.cc):
// TLS 1.3 only (1.2 if TlsConfig::allow_tls12), no renegotiation, no compression, ALPN from
// TlsConfig::alpn, stateless session tickets from the ticket keys (no server session cache),
// 0-RTT early data refused.
#ifndef ONEPASS_SERVER_TLS_TLS_SERVER_CONTEXT_H_
#define ONEPASS_SERVER_TLS_TLS_SERVER_CONTEXT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/tls/ticket_keys.h"
#include "server/tls/tls_config.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct evp_cipher_st EVP_CIPHER;

namespace onepass::tls {

class TlsServerContext {
 public:
  // Reads and checks the files `config` names: the chain parses and its first certificate is
  // the leaf the key belongs to, the ticket key file parses. `now` is for the expiry check
  // only. Errors name the flag and the file and say what to do; an expired or soon expiring
  // certificate is not an error but a warning (warnings()).
  static absl::StatusOr<std::shared_ptr<const TlsServerContext>> Create(const TlsConfig& config,
                                                                        absl::Time now);
  ~TlsServerContext();
  TlsServerContext(const TlsServerContext&) = delete;
  TlsServerContext& operator=(const TlsServerContext&) = delete;

  const TlsConfig& config() const { return config_; }
  // Things the operator should act on but that do not stop serving ("certificate expires in
  // 12 days ..."), one sentence each; empty when all is well. Log them at start and reload.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // What was loaded, one line per item (subject, validity, key, ticket keys, versions, ALPN),
  // for `onepassd --check` and the start-up report.
  std::string Summary() const;
  absl::Time not_after() const { return not_after_; }
  // The keys in use, newest (the encrypting one) first.
  const std::vector<TicketKey>& ticket_keys() const { return ticket_keys_; }
  bool ticket_keys_from_file() const { return !config_.ticket_keys_file.empty(); }

  // For TlsSession only. An SSL made from it must have a TlsStats* (or nullptr) as its app
  // data (SSL_set_app_data): the ticket callback counts tickets of retired keys there.
  SSL_CTX* ssl_ctx() const { return ctx_; }
  // For the ticket callback: AES-256-CBC, fetched once.
  const EVP_CIPHER* ticket_cipher() const { return ticket_cipher_; }

 private:
  explicit TlsServerContext(const TlsConfig& config) : config_(config) {}
  absl::Status LoadCertificateAndKey(absl::Time now);
  absl::Status Configure();
  absl::Status SetCipherSuites();  // TlsConfig::ciphersuites, every name checked

  TlsConfig config_;
  SSL_CTX* ctx_ = nullptr;
  EVP_CIPHER* ticket_cipher_ = nullptr;
  std::vector<TicketKey> ticket_keys_;
  // TlsConfig::alpn in the wire format SSL_select_next_proto takes (length-prefixed names).
  std::string alpn_wire_;
  std::vector<std::string> warnings_;
  std::string subject_;
  std::string issuer_;
  std::string key_description_;
  int chain_length_ = 0;
  absl::Time not_before_;
  absl::Time not_after_;
};

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_TLS_SERVER_CONTEXT_H_
