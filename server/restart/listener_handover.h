// Restart without losing a connection: a new onepassd takes over the listening sockets of the
// running one, passed over a UNIX socket with SCM_RIGHTS (--handover-socket PATH).
//
// Why SCM_RIGHTS and not net.ipv4.tcp_migrate_req: the sockets themselves move, so the
// SO_REUSEPORT group, its CPU steering program and each socket's index in it (worker i = index
// i) stay exactly as they were, and no socket ever closes, so nothing queued in an accept queue
// is reset. tcp_migrate_req (Linux 5.14+) needs a sysctl per network namespace (root), and the
// new process's sockets would join the group at the end: when the old ones close, the kernel
// moves the last socket into each freed index, which scrambles the worker-per-CPU steering.
//
// The exchange, over a SOCK_SEQPACKET connection (messages keep their boundaries):
//   old → new   {magic, workers, addresses}, then per worker one message carrying its
//               `addresses` listening sockets (SCM_RIGHTS), in --listen order
//   new → old   "R" once its workers run and accept from them
//   old → new   "B" after it closed and unlinked PATH; the old process then stops accepting,
//               finishes what it has in flight (the drain of SIGTERM) and exits
//   new         binds PATH itself, ready for the next restart
// If the new process fails before "R" (it exits, or 10 s pass), the old one keeps serving.
#ifndef ONEPASS_SERVER_RESTART_LISTENER_HANDOVER_H_
#define ONEPASS_SERVER_RESTART_LISTENER_HANDOVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "common/scoped_fd.h"

namespace onepass {

// The listening sockets as a running server holds them: by_worker[w][a] for --listen address a.
using ListenerFds = std::vector<std::vector<ScopedFd>>;

// New side. Connects to `path` and receives the running server's sockets. NotFoundError when no
// server listens there (nothing to take over: open fresh sockets); other errors say what failed.
// On success `connection` is kept for ConfirmHandover.
struct TakenListeners {
  ListenerFds by_worker;
  ScopedFd connection;
};
absl::StatusOr<TakenListeners> TakeListeners(const std::string& path);

// New side, once its workers run: tells the old server to stop accepting and waits (10 s at
// most) until it has released `path`.
absl::Status ConfirmHandover(ScopedFd& connection);

// Old side: serves hand-over requests on a thread of its own.
class HandoverServer {
 public:
  // Binds `path` (replacing a stale socket file) and offers dups of `listeners` to whoever
  // connects. `handed_over` runs on the hand-over thread once a new process confirmed (it asks
  // the main thread to drain: onepassd raises SIGTERM).
  static absl::StatusOr<std::unique_ptr<HandoverServer>> Start(const std::string& path,
                                                               ListenerFds listeners,
                                                               std::function<void()> handed_over);
  // Stops the thread and closes the dups (so that a plain stop takes this process's sockets out
  // of the group), and unlinks `path` unless it was handed over.
  ~HandoverServer();
  HandoverServer(const HandoverServer&) = delete;
  HandoverServer& operator=(const HandoverServer&) = delete;

 private:
  HandoverServer() = default;
  void Run();
  // One request: true when the new process confirmed.
  bool Serve(int connection);

  std::string path_;
  ListenerFds listeners_;
  std::function<void()> handed_over_;
  ScopedFd listen_fd_;
  std::atomic<bool> stopping_{false};
  // path_ unlinked for the new process (set by the hand-over thread, read after joining it).
  bool released_ = false;
  std::thread thread_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_RESTART_LISTENER_HANDOVER_H_
