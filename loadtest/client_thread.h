// One client thread of the epoll core (--engine epoll): its own epoll loop driving many short
// connections, each a state machine connect -> write the request in one send -> read until the
// protocol says the response is whole (or the server closes) -> check -> close. Nothing is shared
// with other threads but the read-only config and protocol; statistics are published under a
// per-thread mutex once a second and at the end, never on the per-connection path.
#ifndef ONEPASS_LOADTEST_CLIENT_THREAD_H_
#define ONEPASS_LOADTEST_CLIENT_THREAD_H_

#include <sys/epoll.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "loadtest/exchange.h"
#include "loadtest/load_config.h"
#include "loadtest/load_thread.h"
#include "loadtest/thread_stats.h"

namespace onepass::load {

// Waits for events up to `timeout_ns` with nanosecond resolution (epoll_pwait2, Linux 5.11),
// falling back to epoll_wait's milliseconds, rounded up, on older kernels.
int WaitForEpollEvents(int epoll_fd, epoll_event* events, int max_events, int64_t timeout_ns);

class ClientThread : public LoadThread {
 public:
  // `start_ns`: the common start of all threads (CLOCK_MONOTONIC). `stop`: set on SIGINT.
  ClientThread(const LoadConfig& config, int index, int64_t start_ns,
               const std::atomic<bool>* stop);
  ~ClientThread() override;
  ClientThread(const ClientThread&) = delete;
  ClientThread& operator=(const ClientThread&) = delete;

  // Runs the loop until this thread's share is done; call on its own std::thread.
  void Run() override;

  // A copy of the statistics published so far (once a second, and complete after Run()).
  // Thread-safe.
  ThreadStats Snapshot() override;

 private:
  enum class State { kFree, kConnecting, kWriting, kReading };
  struct Connection {
    int fd = -1;
    uint32_t generation = 0;
    State state = State::kFree;
    int64_t origin_ns = 0;    // latency origin: intended start (open loop) or connect time
    int64_t deadline_ns = 0;  // --timeout-ms after the actual start
    size_t sent = 0;
    std::string request;
    std::string response;
  };
  struct Deadline {
    int64_t when_ns;
    uint32_t slot;
    uint32_t generation;
  };

  bool StartConnection(int64_t intended_ns, int64_t now_ns);
  void HandleEvent(uint32_t slot, uint32_t generation, uint32_t events, int64_t now_ns);
  void TryWrite(Connection& connection, int64_t now_ns);
  void TryRead(Connection& connection, int64_t now_ns);
  void Finish(Connection& connection, bool ok, ErrorKind kind, int64_t now_ns);
  void FinishChecked(Connection& connection, const CheckResult& result, int64_t now_ns);
  void FailErrno(Connection& connection, int error, bool connecting, int64_t now_ns);
  void ExpireDeadlines(int64_t now_ns);
  void Publish(int64_t now_ns);

  const LoadConfig& config_;
  const int index_;
  const int64_t start_ns_;
  const std::atomic<bool>* stop_;

  int epoll_fd_ = -1;
  std::vector<Connection> connections_;
  std::vector<uint32_t> free_slots_;
  std::deque<Deadline> deadlines_;  // in start order: all share one timeout, so sorted
  int inflight_ = 0;
  size_t next_source_ = 0;
  RequestSource requests_;
  std::vector<char> read_buffer_;

  ThreadStats stats_;  // owned by the running thread

  std::mutex published_mutex_;
  ThreadStats published_;  // guarded by published_mutex_
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_CLIENT_THREAD_H_
