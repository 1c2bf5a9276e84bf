// Runs NSD on loopback for the differential and frontend tests: a generated nsd.conf in a
// temporary directory, checked with nsd-checkconf, `nsd -d` run by LoopbackDaemon.
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_NSD_PROCESS_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_NSD_PROCESS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/integration/dns/loopback_daemon.h"

namespace onepass::dns::testing {

class NsdProcess {
 public:
  struct ZoneFile {
    std::string origin;  // e.g. "example.com"
    std::string path;
  };
  // Serves the zones on 127.0.0.1 at a free port, or at `port` when it is not 0 (a restart).
  static absl::StatusOr<std::unique_ptr<NsdProcess>> Start(const std::vector<ZoneFile>& zones,
                                                           int port = 0);
  ~NsdProcess();  // SIGTERM, then SIGKILL after 5 s; removes the directory

  int port() const { return port_; }
  std::string Log() const;

 private:
  NsdProcess() = default;
  static absl::StatusOr<std::unique_ptr<NsdProcess>> StartOn(const std::vector<ZoneFile>& zones,
                                                             int port);
  std::unique_ptr<LoopbackDaemon> daemon_;  // stopped before dir_ is removed
  int port_ = 0;
  std::string dir_;
};

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_NSD_PROCESS_H_
