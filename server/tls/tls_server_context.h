// The server side of TLS for every connection of a listener: certificate, key, ticket keys,
// versions, ALPN, built from a TlsConfig and never changed after. Library-neutral: the
// configuration's checks, the ticket keys, the summary and the expiry warnings are here; the
// library's half (OpenSSL's SSL_CTX) is its TlsEngine (tls_engine.h, openssl/).
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
#include "server/tls/tls_engine.h"

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

  // TlsConfig::alpn as a protocol_name_list (RFC 7301 §3.1: length-prefixed names).
  const std::string& alpn_wire() const { return alpn_wire_; }
  // The library's half, which TlsSession makes its sessions from.
  const TlsEngine& engine() const { return *engine_; }

 private:
  explicit TlsServerContext(const TlsConfig& config) : config_(config) {}
  void WarnOfValidity(absl::Time now);

  TlsConfig config_;
  std::vector<TicketKey> ticket_keys_;
  std::string alpn_wire_;
  std::vector<std::string> warnings_;
  CertificateFacts certificate_;
  absl::Time not_after_;
  // Last: built from the members above, which it reads (ticket keys, ALPN) while it lives.
  std::unique_ptr<TlsEngine> engine_;
};

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_TLS_SERVER_CONTEXT_H_
