// Per-worker counters, summed on read.
//
// Each WorkerStats is written by one worker thread only and read by others (SIGUSR1, the exit
// line, tests), so its fields are relaxed atomics updated with load+store (a plain mov on
// x86, no locked instruction) and the struct is cache-line aligned: workers share no line.
#ifndef ONEPASS_SERVER_STATS_H_
#define ONEPASS_SERVER_STATS_H_

#include <atomic>
#include <cstdint>
#include <string>

namespace onepass {

// The counters, by name, in the order they are printed. X(name, help).
#define ONEPASS_WORKER_COUNTERS(X)                                                       \
  X(accepted, "connections accepted")                                                    \
  X(served, "connections that got at least one whole response")                          \
  X(closed_incomplete, "peer closed before sending a whole request")                     \
  X(timeouts, "read_timeouts + write_timeouts")                                          \
  X(rejected, "rejected_oversize + rejected_pool_full + rejected_per_client")            \
  X(errors, "recv/send failures (reset, broken pipe) and accept errors")                 \
  X(single_pass, "connections finished without entering the event loop")                 \
  X(parked, "connections handed to the event loop (incomplete request, partial write)")  \
  X(responses, "whole responses sent (one send each unless the socket was full)")        \
  X(sends, "send syscalls")                                                              \
  X(recvs, "recv syscalls")                                                              \
  X(closed_by_handler, "handler answered kClose")                                        \
  X(read_timeouts, "no whole request within --read-timeout-ms (or keepalive idle)")      \
  X(write_timeouts, "response not written within --write-timeout-ms")                    \
  X(rejected_oversize, "buffered request exceeded the handler's MaxRequestBytes")        \
  X(rejected_pool_full, "closed because --max-connections were parked")                  \
  X(rejected_per_client, "its address had --max-connections-per-client parked")          \
  X(reset_errors, "recv/send failed (connection reset, broken pipe)")                    \
  X(accept_errors, "accept failed with an unexpected error")                             \
  X(accept_pauses, "accepting paused for lack of descriptors or memory (EMFILE...)")     \
  X(closed_drain, "still open at the end of the drain timeout")                          \
  X(idle_closes, "kept-alive connections closed after --keepalive-ms without a request") \
  X(handler_loops, "handler made no progress; connection closed (a handler bug)")        \
  X(lingering_closes, "closed after discarding input the client sent past the response") \
  X(linger_cut, "lingering close ended by --linger-ms or the byte bound, not by EOF")    \
  X(reloads, "SIGHUP data reloads handed to the workers (server-wide, not per worker)")  \
  X(reload_failures, "SIGHUP reloads refused; the previous data stayed (server-wide)")

struct StatsSnapshot {
#define ONEPASS_SNAPSHOT_FIELD(name, help) uint64_t name = 0;
  ONEPASS_WORKER_COUNTERS(ONEPASS_SNAPSHOT_FIELD)
#undef ONEPASS_SNAPSHOT_FIELD

  StatsSnapshot& operator+=(const StatsSnapshot& other);
  // "accepted=1 served=1 ..." in the order above.
  std::string Format() const;
};

struct alignas(64) WorkerStats {
#define ONEPASS_WORKER_FIELD(name, help) std::atomic<uint64_t> name{0};
  ONEPASS_WORKER_COUNTERS(ONEPASS_WORKER_FIELD)
#undef ONEPASS_WORKER_FIELD

  // Only the owning worker thread calls Add.
  static void Add(std::atomic<uint64_t>& counter, uint64_t n = 1) {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  // Any thread.
  StatsSnapshot Read() const;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_STATS_H_
