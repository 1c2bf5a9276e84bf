#include "server/tls_flags.h"

#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "server/tls/tls_config.h"

ABSL_FLAG(std::vector<std::string>, tls_listen, {},
          "ADDR:PORT to serve DNS over TLS (RFC 7858) on, port 853 by convention; repeatable, "
          "IPv4 or [IPv6]. Same workers and CPU steering as --listen; needs --tls-cert and "
          "--tls-key. The TLS handshake and the first request must arrive within "
          "--read-timeout-ms of accept.");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain for --tls-listen: the server's certificate first, then its "
          "intermediates. ECDSA P-256 is the fast choice. Re-read on SIGHUP.");
ABSL_FLAG(std::string, tls_key, "",
          "PEM private key of --tls-cert's certificate (unencrypted; checked to match it). "
          "Re-read on SIGHUP.");
ABSL_FLAG(std::string, tls_ticket_keys, "",
          "Session ticket keys for resumption without server state: 80-byte keys back to back, "
          "newest first (make one with `openssl rand 80`; the same file on every host behind "
          "one address). The newest encrypts, all decrypt; re-read on SIGHUP, so rotate by "
          "putting a new key in front. Empty: one random key per process (tickets survive a "
          "reload, not a restart).");
ABSL_FLAG(std::string, tls_alpn, "",
          "ALPN protocols to select on --tls-listen, comma-separated, or \"none\" to ignore the "
          "client's offer. Default by --handler: dns \"dot\" (RFC 7858), ocsp and rdap "
          "\"http/1.1\" (HTTPS), whois none.");
ABSL_FLAG(bool, tls12, false, "Also accept TLS 1.2 on --tls-listen (TLS 1.3 only by default).");
ABSL_FLAG(std::string, tls_ciphersuites, onepass::tls::kDefaultTlsCipherSuites,
          "TLS 1.3 cipher suites, colon-separated, in the server's order of preference (a "
          "client that lists ChaCha20 first still gets it). AES-128-GCM first: ~7% less CPU "
          "per handshake than AES-256-GCM (server/tls/README.md).");
// Empty by default, so that "not given" is a value of its own (like --tls-alpn's): the default
// engine is kDefaultTlsEngine, after ONEPASS_TLS_ENGINE (ChooseTlsEngine).
ABSL_FLAG(
    std::string, tls_engine, "",
    absl::StrCat("TLS engine for --tls-listen: \"openssl\", or \"onepass\", this server's own TLS "
                 "1.3 handshake (ECDSA P-256 certificate, X25519 or P-256 key exchange, the three "
                 "TLS 1.3 suites, resumption from its own tickets) with OpenSSL serving every "
                 "ClientHello it does not (TLS 1.2, other keys and groups; counted: "
                 "onepass_tls_fallback_total). Not given (or empty): the engine that "
                 "ONEPASS_TLS_ENGINE in the environment names (a whole test run, a service unit), "
                 "else \"",
                 onepass::kDefaultTlsEngine, "\". Given, the flag wins over the variable."));
ABSL_FLAG(int, tls_idle_timeout_ms, absl::ToInt64Milliseconds(onepass::kDefaultTlsIdleTimeout),
          "How long a TLS connection may wait idle for its next query, in ms (the TLS "
          "counterpart of --keepalive-ms; RFC 7858 §3.4: stubs keep DoT connections), echoed "
          "in edns-tcp-keepalive (RFC 7828). With --keepalive-learn, a client address whose "
          "last 16 kept-open connections each ended after one query gets the answer with "
          "close_notify and the close. 0: every answer leaves with close_notify and the connection "
          "closes.");
ABSL_FLAG(int, tls_max_handshakes, onepass::kDefaultTlsMaxHandshakes,
          "TLS handshakes waiting for their clients at once, whole server (split over workers). "
          "When all are taken, a new handshake makes room by closing the one that has waited "
          "longest (counted: onepass_tls_failures_total{reason=\"evicted\"}): clients that "
          "stall their handshakes cannot keep others out.");
ABSL_FLAG(int, tls_max_connections_per_client, onepass::kDefaultTlsMaxConnectionsPerClient,
          "--max-connections-per-client for the TLS listeners' connections, counted apart and "
          "at accept, before any TLS work (a resolver is one address carrying many users); "
          "beyond it they are closed and counted (rejected_per_client).");
ABSL_FLAG(int, tls_handshakes_per_client, onepass::kDefaultTlsHandshakesPerClient,
          "Of --tls-max-handshakes, how many one client prefix (--client-prefix-v4/-v6) may "
          "hold at once, whole server (split over workers); beyond it its new handshake is "
          "refused at the ClientHello, before any key exchange or signature (counted: "
          "onepass_tls_failures_total{reason=\"limit\"}). 0: no per-client share.");
ABSL_FLAG(int, tls_full_per_client, onepass::kDefaultTlsFullPerClient,
          "New full TLS handshakes per second per client prefix (--client-prefix-v4/-v6), whole "
          "server; beyond it the handshake is refused before its signature. 0: unlimited.");
ABSL_FLAG(int, tls_resumed_per_client, onepass::kDefaultTlsResumedPerClient,
          "New resumed TLS handshakes (from a session ticket) per second per client prefix, "
          "whole server. 0: unlimited.");

namespace onepass {

absl::StatusOr<std::string> ChooseTlsEngine(absl::string_view flag_value, const char* from_env) {
  const bool use_env = flag_value.empty() && from_env != nullptr && *from_env != '\0';
  absl::string_view engine = use_env ? absl::string_view(from_env) : flag_value;
  if (engine.empty()) engine = kDefaultTlsEngine;
  if (engine == "openssl" || engine == "onepass") return std::string(engine);
  // The names tls::MakeTlsEngine knows, checked here, at start (with or without a certificate),
  // so that the error says where the bad name came from.
  return absl::InvalidArgumentError(
      absl::StrCat(use_env ? absl::StrCat(kTlsEngineVariable, "=\"", engine, "\" (the environment)")
                           : absl::StrCat("--tls-engine \"", engine, "\""),
                   ": no such TLS engine; use openssl or onepass"));
}

absl::StatusOr<std::string> TlsEngineFromFlags() {
  return ChooseTlsEngine(absl::GetFlag(FLAGS_tls_engine), std::getenv(kTlsEngineVariable));
}

void TlsFlagsIntoConfig(ServerConfig& config) {
  config.tls_listen = absl::GetFlag(FLAGS_tls_listen);
  config.tls_max_handshakes = absl::GetFlag(FLAGS_tls_max_handshakes);
  config.tls_handshakes_per_client = absl::GetFlag(FLAGS_tls_handshakes_per_client);
  config.tls_max_connections_per_client = absl::GetFlag(FLAGS_tls_max_connections_per_client);
  config.tls_idle_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_tls_idle_timeout_ms));
  config.tls_full_per_client = absl::GetFlag(FLAGS_tls_full_per_client);
  config.tls_resumed_per_client = absl::GetFlag(FLAGS_tls_resumed_per_client);
}

absl::StatusOr<std::shared_ptr<const tls::TlsServerContext>> LoadTlsFromFlags(
    absl::Time now, const std::vector<std::string>& default_alpn) {
  tls::TlsConfig config;
  const std::string alpn = absl::GetFlag(FLAGS_tls_alpn);
  if (alpn.empty()) {
    config.alpn = default_alpn;
  } else if (alpn == "none") {
    config.alpn.clear();
  } else {
    config.alpn = absl::StrSplit(alpn, ',', absl::SkipEmpty());
  }
  config.cert_file = absl::GetFlag(FLAGS_tls_cert);
  config.key_file = absl::GetFlag(FLAGS_tls_key);
  config.ticket_keys_file = absl::GetFlag(FLAGS_tls_ticket_keys);
  config.allow_tls12 = absl::GetFlag(FLAGS_tls12);
  config.ciphersuites = absl::GetFlag(FLAGS_tls_ciphersuites);
  absl::StatusOr<std::string> engine = TlsEngineFromFlags();
  if (!engine.ok()) return engine.status();
  config.engine = *std::move(engine);
  if (config.cert_file.empty() && config.key_file.empty()) {
    if (!config.ticket_keys_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls-ticket-keys without --tls-cert: give the certificate and key too");
    }
    return std::shared_ptr<const tls::TlsServerContext>();
  }
  if (config.cert_file.empty() || config.key_file.empty()) {
    return absl::InvalidArgumentError("TLS needs both --tls-cert FILE and --tls-key FILE");
  }
  absl::StatusOr<std::shared_ptr<const tls::TlsServerContext>> context =
      tls::TlsServerContext::Create(config, now);
  if (!context.ok()) return context.status();
  for (const std::string& warning : (*context)->warnings()) LogWarning("TLS: %s", warning);
  return context;
}

}  // namespace onepass
