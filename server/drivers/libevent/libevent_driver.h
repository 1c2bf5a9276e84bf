// The libevent driver (--io=epoll, the default): epoll readiness through one event_base per
// worker (EVBASE NOLOCK), accept4/recv/send/close as plain syscalls. A served connection costs
// exactly accept4, recvfrom, sendto, close. The core's timers bound each wait (one timer event
// set to the earliest deadline of the TimerQueue before each round), so parked connections
// carry no libevent timeouts of their own.
#ifndef ONEPASS_SERVER_DRIVERS_LIBEVENT_LIBEVENT_DRIVER_H_
#define ONEPASS_SERVER_DRIVERS_LIBEVENT_LIBEVENT_DRIVER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "common/scoped_fd.h"
#include "server/core/io_driver.h"

struct event;
struct event_base;

namespace onepass {

class LibeventDriver final : public IoDriver {
 public:
  // `listeners`: bound, listening, non-blocking sockets; `accept_burst`: accepts per listener
  // wakeup before other events get a turn; `backlog`: accepts at most when draining a queue.
  static absl::StatusOr<std::unique_ptr<LibeventDriver>> Create(TimerQueue* timers,
                                                                std::vector<ScopedFd> listeners,
                                                                int accept_burst, int backlog);
  ~LibeventDriver() override;

  void Arm(FdWatch& watch) override;
  void Disarm(FdWatch& watch) override;
  void Forget(FdWatch& watch) override;
  // Arm() keeps the watch's event when its fd and interest are unchanged, else replaces it.
  bool ArmReplaces() const override { return true; }
  void CloseSocket(int fd, bool abort) override;
  void SetAccepting(bool on) override;
  void CloseListeners(bool take_queued) override;
  std::vector<int> listener_fds() const override;
  void AdoptListenersIntoThisTable() override;
  FinalSendQueue* final_send() override { return nullptr; }
  int receives_in_flight() const override { return 0; }
  absl::Status Run() override;
  void Stop() override { stopping_ = true; }
  // One round without blocking: the events ready now, then the timers due (tests pump the
  // loop with it).
  void RunOnce();

 private:
  LibeventDriver(TimerQueue* timers, std::vector<ScopedFd> listeners, int accept_burst,
                 int backlog);
  // Accepts up to `limit` connections from `listener`, each served at once by the sink.
  // Accepts up to `limit` connections from listeners_[index].
  void AcceptBurst(int index, int limit);
  int ListenerIndex(int fd) const;
  static void OnWatchReady(int fd, short what, void* arg);
  static void OnAcceptable(int fd, short what, void* arg);
  static void OnWake(int fd, short what, void* arg);

  const int accept_burst_;
  const int backlog_;
  std::vector<ScopedFd> listeners_;
  // Declared before every event so that it is freed after them.
  std::unique_ptr<event_base, void (*)(event_base*)> base_;
  std::vector<std::unique_ptr<event, void (*)(event*)>> accept_events_;
  std::unique_ptr<event, void (*)(event*)> wake_timer_;  // the TimerQueue's earliest
  bool accepting_ = false;
  bool stopping_ = false;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_DRIVERS_LIBEVENT_LIBEVENT_DRIVER_H_
