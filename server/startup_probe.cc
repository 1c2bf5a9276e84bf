#include "server/startup_probe.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"

namespace onepass {
namespace {

// A socket connected to `probe`'s upstream with its request sent; -1 when any step failed
// (no route, a full buffer): that probe is not asked.
int SendProbe(const StartupProbe& probe) {
  const int fd = socket(probe.upstream.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, probe.upstream.get(), probe.upstream.length) != 0 ||
      send(fd, probe.request.data(), probe.request.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(probe.request.size())) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::vector<std::string> RunStartupProbes(absl::Span<const StartupProbe> probes,
                                          absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  // By probe: its socket until it is settled, then -1. Closed by this function whatever way
  // the loop ends (the main thread's descriptors: no other thread sees them).
  std::vector<int> sockets;
  std::vector<std::optional<std::string>> verdicts(probes.size());
  for (const StartupProbe& probe : probes) sockets.push_back(SendProbe(probe));
  std::vector<uint8_t> reply(65536);
  while (true) {
    std::vector<pollfd> waiting;
    std::vector<size_t> index;
    for (size_t i = 0; i < sockets.size(); ++i) {
      if (sockets[i] < 0) continue;
      waiting.push_back({.fd = sockets[i], .events = POLLIN, .revents = 0});
      index.push_back(i);
    }
    const absl::Duration left = deadline - absl::Now();
    if (waiting.empty() || left <= absl::ZeroDuration()) break;
    // Rounded up: a wait of 0 ms would spin through the last fraction of a millisecond.
    const int left_ms = static_cast<int>(absl::ToInt64Milliseconds(left)) + 1;
    if (poll(waiting.data(), waiting.size(), left_ms) < 0 && errno != EINTR) break;
    for (size_t w = 0; w < waiting.size(); ++w) {
      if (waiting[w].revents == 0) continue;
      const size_t i = index[w];
      // The first datagram settles the probe; an error (ICMP port unreachable) too, silently.
      const ssize_t n = recv(sockets[i], reply.data(), reply.size(), 0);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n >= 0) verdicts[i] = probes[i].judge({reply.data(), static_cast<size_t>(n)});
      close(std::exchange(sockets[i], -1));
    }
  }
  for (const int fd : sockets) {
    if (fd >= 0) close(fd);  // unanswered within the timeout
  }
  std::vector<std::string> warnings;
  for (std::optional<std::string>& verdict : verdicts) {
    if (verdict.has_value()) warnings.push_back(*std::move(verdict));
  }
  return warnings;
}

}  // namespace onepass
