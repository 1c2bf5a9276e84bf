// DNS-over-TLS clients that a test runs in front of onepassd's --tls-listen, as stub resolvers
// and resolvers use it: stubby (getdns's stub) and Knot Resolver (kresd), each with a
// configuration written into a temporary directory and a listener on a free loopback port
// (neither binds port 0 and reports it), and the unbound.conf lines that make UnboundProcess
// forward over TLS. Nothing these programs do leaves loopback: only the upstream is asked, and
// every name outside the forwarded zone is refused.
//
// A process is a child of the test: ready once its port listens over TCP (/proc/net/tcp: no
// probe query, which would open the TLS connection before the test's own queries), bounded in
// time (alarm(2) is kept across exec and SIGALRM ends it), SIGKILLed by its PID with the
// object, and by the kernel if the test dies first (PR_SET_PDEATHSIG).
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_DOT_RESOLVER_PROCESS_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_DOT_RESOLVER_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace onepass::dns::testing {

// onepassd's DoT listener as a client is told to authenticate it. At least one of
// `spki_pin` and `ca_file` is given; a client checks each one it is given.
struct DotUpstream {
  int port = 0;                // on 127.0.0.1
  std::string auth_name;       // the name in its certificate (RFC 8310 §8.1), "" for none
  std::string ca_file;         // PEM file of the CA that signed it, "" for none
  std::string spki_pin;        // base64 SHA-256 of its SubjectPublicKeyInfo, "" for none
  int client_idle_ms = 10000;  // stubby's idle_timeout [ms], the example config's value
};

// RFC 7469 §2.4's pin of the first certificate in the PEM file at `path`: base64 of the
// SHA-256 of its DER SubjectPublicKeyInfo, what getdns's tls_pubkey_pinset holds. Computed
// with OpenSSL, as `openssl x509 -pubkey | openssl pkey -pubin -outform der | openssl dgst
// -sha256 -binary | base64` would.
absl::StatusOr<std::string> SpkiPin(const std::string& path);

// The unbound.conf lines that, included in UnboundProcess's server: clause, make Unbound
// forward `zone` (e.g. "example.com.") over TLS only (forward-tls-upstream) to `upstream`,
// authenticated by auth_name and ca_file (forward-addr 127.0.0.1@PORT#NAME, tls-cert-bundle).
// They open a forward-zone: clause, which ends where UnboundProcess's next clause begins.
std::string UnboundTlsForwardConf(const std::string& zone, const DotUpstream& upstream);

class DotResolverProcess {
 public:
  // stubby -C <its config>: strict profile (GETDNS_AUTHENTICATION_REQUIRED, TLS the only
  // transport), `upstream` its only upstream, listening on 127.0.0.1 at a free port, UDP and
  // TCP.
  static absl::StatusOr<std::unique_ptr<DotResolverProcess>> StartStubby(
      const DotUpstream& upstream);
  // kresd -n: `zone` (e.g. "example.com.") forwarded with policy.TLS_FORWARD (hostname =
  // auth_name, ca_file), everything else refused; no trust anchor (onepassd's zones are not
  // signed, and a DS proof would need the root), no priming or time-skew queries to the root;
  // its cache in its directory; listening on 127.0.0.1 at a free port, UDP and TCP.
  static absl::StatusOr<std::unique_ptr<DotResolverProcess>> StartKresd(
      const std::string& zone, const DotUpstream& upstream);
  ~DotResolverProcess();  // SIGKILL by PID, reaped; the directory removed

  DotResolverProcess(const DotResolverProcess&) = delete;
  DotResolverProcess& operator=(const DotResolverProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // What the program wrote to stdout and stderr so far.
  std::string Log() const;

  // How long a process may live: every test of the binary ends well before.
  static constexpr absl::Duration kLifetime = absl::Seconds(120);

 private:
  DotResolverProcess() = default;
  // Makes dir_ and port_, then `write_config(dir_, port_)` returns the argv to run.
  static absl::StatusOr<std::unique_ptr<DotResolverProcess>> Start(
      const std::string& name,
      const std::function<absl::StatusOr<std::vector<std::string>>(const std::string& dir,
                                                                   int port)>& write_config);

  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
  std::string log_path_;
};

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_DOT_RESOLVER_PROCESS_H_
