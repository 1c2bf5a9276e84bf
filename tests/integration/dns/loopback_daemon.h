// A DNS server that a test runs on loopback (NSD, Unbound): a free port, the program in the
// foreground with its output in a log file, ready once it answers a query over TCP, stopped
// by its PID. nsd_process.* and unbound_process.* write the configuration; this runs it.
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_LOOPBACK_DAEMON_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_LOOPBACK_DAEMON_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace onepass::dns::testing {

// A port the kernel just handed out on loopback (closed again; the daemon binds it next, UDP
// and TCP): tests/support's FreeLoopbackPort, with its failure as an error.
absl::StatusOr<int> FreeLoopbackPort();

class LoopbackDaemon {
 public:
  // Runs `argv` (argv[0] searched in PATH) with stdout and stderr appended to `log_path`, and
  // returns once `probe` (a DNS message) sent over TCP to 127.0.0.1:`port` gets any answer:
  // 15 s at most. Fails with the log when the program exits or stays silent.
  static absl::StatusOr<std::unique_ptr<LoopbackDaemon>> Start(const std::vector<std::string>& argv,
                                                               const std::string& log_path,
                                                               int port,
                                                               const std::vector<uint8_t>& probe);
  ~LoopbackDaemon();  // SIGTERM, then SIGKILL after 5 s; waits for it

  pid_t pid() const { return pid_; }
  std::string Log() const;

 private:
  LoopbackDaemon() = default;
  pid_t pid_ = -1;
  std::string log_path_;
};

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_LOOPBACK_DAEMON_H_
