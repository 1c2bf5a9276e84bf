// Starts the real onepassd binary on ephemeral loopback ports for end-to-end tests.
//
// Contract with onepassd (server/main.cc): once every listener is bound it prints to stdout one
// line "listening on ADDR:PORT" per --listen (the real port when 0 was asked), then "ready".
#ifndef ONEPASS_TESTS_SUPPORT_SERVER_PROCESS_H_
#define ONEPASS_TESTS_SUPPORT_SERVER_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace onepass::testing {

// The value of `key` in the "stats k=v ..." line onepassd prints at exit, or -1 if absent.
// Handler counters have keys like `whois_replies{result="match"}`.
int StatValue(absl::string_view stdout_text, absl::string_view key);

// For a server whose TLS engine is the onepass one (server/tls/onepass/): OK when its exit line
// in `stdout_text` shows that engine served a handshake itself
// (tls_handshakes_engine{engine="onepass"} > 0), or when none completed. Otherwise an error
// quoting the line (every handshake was OpenSSL's), as when it has no TLS handshake counters.
absl::Status CheckOnepassEngineServed(absl::string_view stdout_text);

// Path of the onepassd binary under test (compiled in by CMake as ONEPASSD_PATH).
std::string OnepassdPath();

// With no --tls-engine among a TLS server's arguments and ONEPASS_TLS_ENGINE unset or onepass
// (scripts/test.sh reruns the TLS end-to-end tests with it set to openssl), its engine is the
// onepass one, the default, and the end-to-end tests alone would pass on OpenSSL's fallback too:
// then Stop() fails the running test (gtest) when the exit line does not pass
// CheckOnepassEngineServed, and the destructor stops such a server with SIGTERM, not SIGKILL, to
// get that line. A test that passes --tls-engine chose its engine and checks it itself.
class ServerProcess {
 public:
  // Starts `binary` with `args` (which should contain --listen 127.0.0.1:0) and waits up to
  // `startup_timeout` for "ready". Fails with the server's stderr if it exits or times out.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(
      const std::vector<std::string>& args, const std::string& binary = OnepassdPath(),
      absl::Duration startup_timeout = absl::Seconds(20));

  ~ServerProcess();  // SIGKILL if still running (Stop() first when the engine check applies).

  // The bound addresses, in --listen order, e.g. "127.0.0.1:40123" or "[::1]:40124".
  const std::vector<std::string>& addresses() const { return addresses_; }
  // The --metrics-listen address as bound ("127.0.0.1:40125"); empty without the flag.
  const std::string& metrics_address() const { return metrics_address_; }
  // Port of the first listener.
  int port() const { return port_; }
  // The --tls-listen addresses ("tls listening on ..."), and the first one's port (0: none).
  const std::vector<std::string>& tls_addresses() const { return tls_addresses_; }
  int tls_port() const { return tls_port_; }
  pid_t pid() const { return pid_; }

  // Sends SIGTERM and waits up to `timeout`; returns the exit code (-1 on signal or timeout).
  // On exit code 0, the onepass engine check above (when it applies).
  int Stop(absl::Duration timeout = absl::Seconds(10));

  // Whatever the server wrote to stderr so far (logs), read without blocking.
  std::string ReadStderr();

  // Whatever the server wrote to stdout after "ready" so far, read without blocking (after
  // Stop(): everything, e.g. the "stats accepted=N served=N ..." line).
  std::string ReadStdout();

 private:
  ServerProcess() = default;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  int port_ = 0;
  int tls_port_ = 0;
  bool check_onepass_engine_ = false;  // the class comment's check is due at Stop()
  std::vector<std::string> addresses_;
  std::vector<std::string> tls_addresses_;
  std::string metrics_address_;
  std::string stderr_text_;
  std::string stdout_text_;
};

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_SUPPORT_SERVER_PROCESS_H_
