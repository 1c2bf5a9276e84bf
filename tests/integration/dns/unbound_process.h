// Runs Unbound on loopback as a frontend backend that answers only from local data: a
// generated unbound.conf in a temporary directory (no chroot, no privilege drop, no daemon,
// no remote control, no validator), checked with unbound-checkconf, `unbound -d` run by
// LoopbackDaemon. Names outside the local zones are REFUSED (local-zone "." refuse), so no
// query ever leaves for the root servers and every answer is the same each time.
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_UNBOUND_PROCESS_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_UNBOUND_PROCESS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tests/integration/dns/loopback_daemon.h"

namespace onepass::dns::testing {

class UnboundProcess {
 public:
  // Serves the local-zone/local-data lines of `local_data_path` (an unbound.conf fragment,
  // included in the server: clause) on 127.0.0.1, UDP and TCP, at a free port, or at `port`
  // when it is not 0 (a restart). The fragment may also forward a zone to loopback
  // (dot_resolver_process.h's UnboundTlsForwardConf: a transparent local-zone, then a
  // forward-zone: clause, which ends where the next clause begins).
  static absl::StatusOr<std::unique_ptr<UnboundProcess>> Start(const std::string& local_data_path,
                                                               int port = 0);
  ~UnboundProcess();  // SIGTERM, then SIGKILL after 5 s; removes the directory

  int port() const { return port_; }
  std::string Log() const;

 private:
  UnboundProcess() = default;
  static absl::StatusOr<std::unique_ptr<UnboundProcess>> StartOn(const std::string& local_data_path,
                                                                 int port);
  std::unique_ptr<LoopbackDaemon> daemon_;  // stopped before dir_ is removed
  int port_ = 0;
  std::string dir_;
};

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_UNBOUND_PROCESS_H_
