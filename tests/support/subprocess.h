// Running real programs from tests (onepassd, kdig, dig, drill, openssl, whois, curl, nsd)
// with a hard time limit, so no test can hang CI.
#ifndef ONEPASS_TESTS_SUPPORT_SUBPROCESS_H_
#define ONEPASS_TESTS_SUPPORT_SUBPROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace onepass::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal (or by the timeout)
  bool timed_out = false;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs argv[0] (searched in PATH) with `input` on stdin; kills it after `timeout`.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         absl::Duration timeout = absl::Seconds(20),
                                         const std::string& input = "");

// True if `program` is found in PATH (for a clear skip message when a client is missing).
bool ProgramExists(const std::string& program);

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_SUPPORT_SUBPROCESS_H_
