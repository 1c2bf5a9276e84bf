// One client thread: its own epoll loop driving many short connections, each a state machine
// connect -> write the request in one send -> read until the protocol says the response is
// whole (or the server closes) -> check -> close. Nothing is shared with other threads but the
// read-only config and protocol; statistics are published under a per-thread mutex once a
// second and at the end, never on the per-connection path.
#ifndef ONEPASS_LOADTEST_CLIENT_THREAD_H_
#define ONEPASS_LOADTEST_CLIENT_THREAD_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "loadtest/histogram.h"
#include "loadtest/load_config.h"

namespace onepass::load {

// Every way a transaction can fail, each counted on its own.
enum class ErrorKind {
  kRefused,       // connect: ECONNREFUSED (nothing listening, or the backlog overflowed)
  kReset,         // ECONNRESET / EPIPE after connecting
  kTimeout,       // no whole response within --timeout-ms (or connect timed out)
  kConnectError,  // any other connect failure (EHOSTUNREACH, ENETUNREACH, ...)
  kNoSourcePort,  // EADDRNOTAVAIL: the client ran out of ephemeral ports for the 4-tuple
  kLocalError,    // the client's own limits: EMFILE, ENOBUFS, ...
  kShort,         // the server closed before a whole response
  kWrong,         // a whole response that is not the right answer
};
inline constexpr int kErrorKindCount = 8;
const char* ErrorKindName(ErrorKind kind);  // "refused", "no_source_port", ...

struct ReasonCount {
  const char* reason;  // static string from CheckResult
  uint64_t count;
};

struct ThreadStats {
  uint64_t started = 0;
  uint64_t ok = 0;
  std::array<uint64_t, kErrorKindCount> errors{};
  Histogram latency;         // successful transactions [ns]; open loop: from the intended start
  Histogram start_lag;       // open loop: actual minus intended start [ns]
  uint64_t late_starts = 0;  // started more than kLateStartNs after the intended time
  uint64_t inflight_cap_waits = 0;   // starts delayed by --max-inflight
  uint64_t unstarted = 0;            // open loop: intended starts never made before the end
  std::vector<ReasonCount> reasons;  // short/wrong answers by reason
  std::vector<std::string> samples;  // the first few mismatches, with details
  std::vector<std::string> local_error_samples;  // first few local errno texts
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  int64_t cpu_ns = 0;   // this thread's CPU time (user + system)
  int64_t wall_ns = 0;  // this thread's running time
  int cpu = -1;         // the CPU it was pinned to, or -1

  static constexpr int64_t kLateStartNs = 1'000'000;

  uint64_t errors_total() const;
  uint64_t completed() const { return ok + errors_total(); }
  void AddReason(const char* reason);
  void Merge(const ThreadStats& other, size_t max_samples);
};

class ClientThread {
 public:
  // `start_ns`: the common start of all threads (CLOCK_MONOTONIC). `stop`: set on SIGINT.
  ClientThread(const LoadConfig& config, int index, int64_t start_ns,
               const std::atomic<bool>* stop);
  ~ClientThread();
  ClientThread(const ClientThread&) = delete;
  ClientThread& operator=(const ClientThread&) = delete;

  // Runs the loop until this thread's share is done; call on its own std::thread.
  void Run();

  // A copy of the statistics published so far (once a second, and complete after Run()).
  // Thread-safe.
  ThreadStats Snapshot();

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
  uint32_t NextRandom();

  const LoadConfig& config_;
  const int index_;
  const int64_t start_ns_;
  const std::atomic<bool>* stop_;

  int epoll_fd_ = -1;
  std::vector<Connection> connections_;
  std::vector<uint32_t> free_slots_;
  std::deque<Deadline> deadlines_;  // in start order: all share one timeout, so sorted
  int inflight_ = 0;
  uint64_t share_ = 0;  // connections this thread may start (UINT64_MAX: no bound)
  int concurrency_ = 0;
  size_t next_source_ = 0;
  uint64_t sequence_ = 0;
  uint64_t random_state_;
  std::vector<char> read_buffer_;

  ThreadStats stats_;  // owned by the running thread

  std::mutex published_mutex_;
  ThreadStats published_;  // guarded by published_mutex_
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_CLIENT_THREAD_H_
