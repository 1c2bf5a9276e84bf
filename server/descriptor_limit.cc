#include "server/descriptor_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace onepass {

int FixedDescriptors(int workers, int listen_addresses) {
  // Per worker: its listeners, two eventfds (stop, reload offer), its epoll instance and the
  // socket of its single pass.
  return 3 + workers * (listen_addresses + 4) + kDescriptorReserve;
}

absl::StatusOr<DescriptorFit> FitConnections(int limit, int max_connections, int workers,
                                             int listen_addresses) {
  const int fixed = FixedDescriptors(workers, listen_addresses);
  const int room = limit - fixed;
  if (room >= max_connections) return DescriptorFit{max_connections, ""};
  if (room < workers) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the descriptor limit (ulimit -n) is ", limit, ", and ", workers,
                     " workers on ", listen_addresses, " addresses need ", fixed,
                     " before any connection; raise it (LimitNOFILE= in the unit, ulimit -Hn)"));
  }
  return DescriptorFit{
      room, absl::StrCat("--max-connections ", max_connections, " lowered to ", room,
                         ": the descriptor limit is ", limit, " (", fixed,
                         " are the server's own); raise the hard limit (LimitNOFILE= in the "
                         "unit, ulimit -Hn) to allow more")};
}

absl::StatusOr<DescriptorFit> RaiseDescriptorLimit(int max_connections, int workers,
                                                   int listen_addresses) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::InternalError(absl::StrCat("getrlimit(RLIMIT_NOFILE): ", std::strerror(errno)));
  }
  if (limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0) {
      LogInfo("raised the descriptor limit from %d to its hard limit %d", before, limit.rlim_cur);
    } else {
      limit.rlim_cur = before;
    }
  }
  constexpr rlim_t kMaxInt = 1 << 30;  // beyond any connection limit
  const int soft = static_cast<int>(limit.rlim_cur < kMaxInt ? limit.rlim_cur : kMaxInt);
  return FitConnections(soft, max_connections, workers, listen_addresses);
}

}  // namespace onepass
