// The I/O driver below a worker's core (server/core/worker_core.h): the only code that knows
// which event mechanism runs the worker (server/drivers/: libevent's epoll, or io_uring). The
// core decides everything about a connection's life; a driver only
//   - reports readiness of the sockets the core and the upstreams watch (FdWatch),
//   - accepts on the listeners while the core lets it, handing each socket to the core
//     (ConnectionSink), and closes the listeners when the core drains,
//   - closes sockets, and may take a connection's last send together with its close
//     (FinalSendQueue),
//   - runs the loop: waits for events until the earliest timer of the worker's TimerQueue,
//     then fires the expired ones. Timers are the core's (one heap for both drivers).
// The same shape as Seastar's reactor backends or Envoy's IoHandle below one ConnectionImpl.
// Thread-confined to its worker.
#ifndef ONEPASS_SERVER_CORE_IO_DRIVER_H_
#define ONEPASS_SERVER_CORE_IO_DRIVER_H_

#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "server/core/timer_queue.h"

namespace onepass {

class IoDriver;

// A driver that can take the last send of a connection together with its close (the io_uring
// driver, server/drivers/uring/uring_driver.h: one send and a close linked after it, submitted
// with the ring's next batch instead of two syscalls now). IoDriver::final_send.
class FinalSendQueue {
 public:
  virtual ~FinalSendQueue() = default;
  // `bytes` (at most kUnsentCheckBytes) are the whole rest of the last response of the
  // connection on `fd`, which closes right after. True: the queue copied them and will send
  // them and close `fd`; the connection counts them as sent and its core must not close `fd`
  // (Connection::close_queued). False: the connection sends them itself.
  virtual bool QueueFinalSend(int fd, absl::Span<const uint8_t> bytes) = 0;
};

enum class Interest : uint8_t { kReadable, kWritable };

// One socket's readiness, as its user (a parked connection, an upstream socket, a wake-up
// eventfd) wants to hear of it. Owned by its user; armed at most once at a time.
class FdWatch {
 public:
  FdWatch(IoDriver* driver, std::function<void()> on_ready)
      : driver_(driver), on_ready_(std::move(on_ready)) {}
  ~FdWatch();
  FdWatch(const FdWatch&) = delete;
  FdWatch& operator=(const FdWatch&) = delete;

  // Calls on_ready once `fd` is ready for `interest` (readable also at EOF and on errors):
  // once, or (persistent) each time until Disarm, level-triggered. Re-arming an armed watch
  // replaces its interest.
  void Arm(int fd, Interest interest, bool persistent = false);
  void Disarm();
  // A promise of the user: it calls Disarm() before it closes the fd (the core's connection
  // slots do, in WorkerCore::Close and EndOnThread). A driver may then keep the fd registered after
  // a one-shot fire, so that arming the watch again for the same fd and interest costs nothing: on
  // the libevent driver no epoll_ctl DEL at the fire and ADD at the re-arm, two of the four system
  // calls of each query on a kept-open connection. Without the promise a closed fd's number
  // reused by another socket could be left unregistered.
  void set_disarms_before_close() { disarms_before_close_ = true; }
  bool disarms_before_close() const { return disarms_before_close_; }
  bool armed() const { return armed_; }
  int fd() const { return fd_; }
  Interest interest() const { return interest_; }
  bool persistent() const { return persistent_; }

  // The driver's: whatever it keeps for this watch (a libevent event, a ring entry).
  void* driver_data = nullptr;
  // The driver calls this when the socket is ready (a one-shot watch is disarmed first).
  void Fire() {
    if (!persistent_) armed_ = false;
    on_ready_();
  }

 private:
  IoDriver* const driver_;
  std::function<void()> on_ready_;
  int fd_ = -1;
  Interest interest_ = Interest::kReadable;
  bool persistent_ = false;
  bool armed_ = false;
  bool disarms_before_close_ = false;
};

// What an accept does next (WorkerCore::OnAcceptError).
enum class AcceptNext {
  kAcceptMore,  // the error was the new connection's own (accept(2)): accept again
  kDone,        // the queue is empty (EAGAIN)
  kPaused,      // the core paused accepting (EMFILE & co.): do not accept until resumed
};

// The core's handle of a connection whose first recv the driver makes (ConnectionSink::
// BeginReceive): opaque to the driver, which hands it back with the recv's result.
class ReceiveHandle {
 protected:
  ~ReceiveHandle() = default;
};

// The core, as a driver sees it.
class ConnectionSink {
 public:
  virtual ~ConnectionSink() = default;
  // A socket fresh from accept4 on listener number `listener` (IoDriver::listener_fds order):
  // the single pass runs now (recv, handler, send, close), and the connection parks only if it
  // must wait.
  virtual void ServeAccepted(int fd, const sockaddr_storage& peer, int listener) = 0;
  // For a driver that receives a connection's first bytes itself (the ring): the connection
  // and where its first recv writes, or null (the core refused it and closed `fd`). Then
  // Received with what that recv returned (bytes, 0 at EOF, -errno).
  struct Receive {
    ReceiveHandle* handle = nullptr;
    absl::Span<uint8_t> into;
  };
  virtual Receive BeginReceive(int fd, const sockaddr_storage& peer, int listener) = 0;
  virtual void Received(ReceiveHandle* handle, ssize_t result) = 0;
  // A last send taken by the driver's FinalSendQueue failed (the client reset).
  virtual void OnFinalSendFailed(int error) = 0;
  // accept(2) failed with `error`.
  virtual AcceptNext OnAcceptError(int error) = 0;
  // CloseListeners is done: every queued connection was taken and the listeners are closed.
  virtual void OnListenersClosed() = 0;
};

// What every driver is made with (server/drivers/driver_factory.h).
struct DriverOptions {
  // Connections accepted per listener readiness before other events get a turn (libevent), or
  // accepts armed at once per listener (the ring): --accept-burst; 0: the driver's default.
  int accept_burst = 0;
  // listen(2) backlog: what a drain takes from the accept queues at most.
  int backlog = 4096;
};

class IoDriver {
 public:
  explicit IoDriver(TimerQueue* timers) : timers_(timers) {}
  virtual ~IoDriver() = default;
  IoDriver(const IoDriver&) = delete;
  IoDriver& operator=(const IoDriver&) = delete;

  // Once, before Run.
  void set_sink(ConnectionSink* sink) { sink_ = sink; }
  TimerQueue& timers() { return *timers_; }

  // FdWatch's side. Arm on an armed watch: only where ArmReplaces() (the watch's new fd and
  // interest replace what the driver holds for it); elsewhere FdWatch disarms it first.
  virtual void Arm(FdWatch& watch) = 0;
  virtual void Disarm(FdWatch& watch) = 0;
  virtual bool ArmReplaces() const { return false; }
  // The watch is being destroyed (disarmed): frees driver_data.
  virtual void Forget(FdWatch& watch) = 0;

  // Closes a connection's socket, whose watch is disarmed; `abort` first sets SO_LINGER 0 so
  // that the kernel frees unsent bytes instead of keeping them for an orphan.
  virtual void CloseSocket(int fd, bool abort) = 0;
  // Accept on every listener (each accepted socket goes to the sink) while on.
  virtual void SetAccepting(bool on) = 0;
  // Closes the listeners, first taking what their accept queues hold (closing a reuseport
  // listener resets those) unless `take_queued` is false; then ConnectionSink::OnListenersClosed.
  virtual void CloseListeners(bool take_queued) = 0;
  // The listening sockets, in --listen order, until CloseListeners.
  virtual std::vector<int> listener_fds() const = 0;
  // On the worker's thread, once it has a descriptor table of its own
  // (common/descriptor_table.h): the listeners held are the copies in that table from now on.
  virtual void AdoptListenersIntoThisTable() = 0;
  // Where a connection's last send may go together with its close; null: the connection sends.
  virtual FinalSendQueue* final_send() = 0;
  // How many connections the driver may have between accept and the end of its own first recv
  // (BeginReceive), beyond the parked ones. 0: it never calls BeginReceive.
  virtual int receives_in_flight() const = 0;

  // Runs the loop on the worker's thread until Stop, then until what the driver itself has in
  // flight (the ring's last sends) is done, at most a second more.
  virtual absl::Status Run() = 0;
  virtual void Stop() = 0;
  // On the worker's thread, after Run: closes what the driver opened on that thread (the
  // ring), so that nothing of the thread's descriptor table is closed from another (the driver
  // is destroyed on the main thread, whose table may hold another file under the number).
  virtual void EndOnThread() {}

 protected:
  // Accepts up to `limit` connections queued on `listener_fd` (listener number `index`) and
  // hands each to `take(fd, peer, index)`; stops at an empty queue or at an error after which
  // the core says not to go on (ConnectionSink::OnAcceptError). The one accept loop of both
  // drivers: a burst, and a drain's "take what is queued, then close".
  template <typename Take>
  void AcceptQueued(int listener_fd, int index, int limit, Take&& take) {
    for (int i = 0; i < limit; ++i) {
      // The peer's address comes with the accept: no getpeername per connection.
      sockaddr_storage address{};
      socklen_t address_length = sizeof(address);
      const int fd = accept4(listener_fd, reinterpret_cast<sockaddr*>(&address), &address_length,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (sink_->OnAcceptError(errno) == AcceptNext::kAcceptMore) continue;
        return;
      }
      take(fd, address, index);
    }
  }

  ConnectionSink* sink_ = nullptr;

 private:
  TimerQueue* const timers_;
};

inline FdWatch::~FdWatch() {
  Disarm();
  driver_->Forget(*this);
}

inline void FdWatch::Arm(int fd, Interest interest, bool persistent) {
  if (armed_ && !driver_->ArmReplaces()) driver_->Disarm(*this);
  fd_ = fd;
  interest_ = interest;
  persistent_ = persistent;
  armed_ = true;
  driver_->Arm(*this);
}

inline void FdWatch::Disarm() {
  // A fired one-shot watch may still be registered with its driver (disarms_before_close).
  if (!armed_ && !disarms_before_close_) return;
  armed_ = false;
  driver_->Disarm(*this);
}

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_IO_DRIVER_H_
