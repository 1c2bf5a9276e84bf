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

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"

namespace onepass::dns::testing {

// A port free on loopback for UDP and TCP, below the ephemeral range (closed again; the daemon
// binds it next): tests/support's FreeLoopbackPort, with its failure as an error.
absl::StatusOr<int> FreeLoopbackPort();

// `start(port)` on a free port, then on another while the daemon's start failed because the
// port was taken in between ("address already in use" in its error; a test beside this one
// bound it): three ports at most.
template <typename Started>
absl::StatusOr<Started> StartOnFreePort(
    absl::FunctionRef<absl::StatusOr<Started>(int port)> start) {
  absl::StatusOr<Started> started = absl::InternalError("not started");
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::StatusOr<int> port = FreeLoopbackPort();
    if (!port.ok()) return port.status();
    started = start(*port);
    if (started.ok() || !absl::StrContains(started.status().message(), "already in use")) break;
  }
  return started;
}

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
