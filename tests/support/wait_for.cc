#include "tests/support/wait_for.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"

namespace onepass::testing {
namespace {

// The kernel's socket state TCP_LISTEN, as /proc/net/tcp writes it ("0A").
constexpr int kTcpListen = 0x0A;

bool ListensIn(const char* table, int port) {
  std::ifstream file(table);
  std::string line;
  std::getline(file, line);  // the header
  while (std::getline(file, line)) {
    // "  0: 0100007F:14B4 00000000:0000 0A ...": slot, local addr:port, remote, state (hex).
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    if (!(fields >> slot >> local >> remote >> state)) continue;
    const size_t colon = local.rfind(':');
    int local_port = 0;
    int state_value = 0;
    if (colon == std::string::npos || !absl::SimpleHexAtoi(local.substr(colon + 1), &local_port) ||
        !absl::SimpleHexAtoi(state, &state_value)) {
      continue;
    }
    if (local_port == port && state_value == kTcpListen) return true;
  }
  return false;
}

}  // namespace

bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout, absl::Duration poll) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (condition()) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(std::min(poll, deadline - absl::Now()));
  }
}

bool IsListening(int port) {
  return ListensIn("/proc/net/tcp", port) || ListensIn("/proc/net/tcp6", port);
}

}  // namespace onepass::testing
