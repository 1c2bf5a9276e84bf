// Per-worker counters, summed on read.
//
// Totals (timeouts, rejected, errors) are not counted: they are computed from their causes
// when read, so a cause can never be counted without its total.
//
// Each WorkerStats is written by one worker thread only and read by others (SIGUSR1, the exit
// line, tests), so its fields are relaxed atomics updated with load+store (a plain mov on
// x86, no locked instruction) and the struct is cache-line aligned: workers share no line.
#ifndef ONEPASS_SERVER_CORE_STATS_H_
#define ONEPASS_SERVER_CORE_STATS_H_

#include <atomic>
#include <cstdint>
#include <string>

namespace onepass {

// The counters, by name, in the order they are printed. COUNTER(name, help) is counted by the
// worker; TOTAL(name, help, sum) is computed from other counters on read (StatsSnapshot).
#define ONEPASS_WORKER_COUNTERS(COUNTER, TOTAL)                                                   \
  COUNTER(accepted, "connections accepted")                                                       \
  COUNTER(served, "connections that got at least one whole response")                             \
  COUNTER(closed_incomplete, "peer closed before sending a whole request")                        \
  TOTAL(timeouts, "read_timeouts + write_timeouts + lifetime_cuts + unread_aborts",               \
        read_timeouts + write_timeouts + lifetime_cuts + unread_aborts)                           \
  TOTAL(rejected, "rejected_oversize + _pool_full + _per_client + _proxy + _tls_*",               \
        rejected_oversize + rejected_pool_full + rejected_per_client + rejected_proxy +           \
            rejected_tls_handshakes + rejected_tls_on_plain)                                      \
  TOTAL(errors, "reset_errors + accept_errors: recv/send and accept failures",                    \
        reset_errors + accept_errors)                                                             \
  COUNTER(single_pass, "connections finished without entering the event loop")                    \
  COUNTER(parked, "connections handed to the event loop (incomplete request, partial write)")     \
  COUNTER(responses, "whole responses sent (one send each unless the socket was full)")           \
  COUNTER(sends, "send syscalls")                                                                 \
  COUNTER(recvs, "recv syscalls")                                                                 \
  COUNTER(sendfile_bytes, "response body bytes sent by sendfile from the data (no copy)")         \
  COUNTER(closed_by_handler, "handler answered kClose")                                           \
  COUNTER(read_timeouts, "no whole request within --read-timeout-ms (or keepalive idle)")         \
  COUNTER(write_timeouts, "response not written within --write-timeout-ms; aborted (RST)")        \
  COUNTER(unread_aborts, "answers sent but left unread past --write-timeout-ms; aborted (RST)")   \
  COUNTER(unsent_aborts,                                                                          \
          "closed (idle, limit, drain) with answers the client left unread in the kernel: RST")   \
  COUNTER(lifetime_cuts, "open longer than --max-connection-ms; closed")                          \
  COUNTER(rejected_oversize, "buffered request exceeded the handler's MaxRequestBytes")           \
  COUNTER(rejected_pool_full, "closed because --max-connections were parked")                     \
  COUNTER(rejected_per_client, "its address had --max-connections-per-client parked")             \
  COUNTER(rejected_proxy, "no/broken PROXY v2 header from a balancer, or one from elsewhere")     \
  COUNTER(                                                                                        \
      evicted_waiting,                                                                            \
      "waiting longest for its request when --max-connections were parked: closed for a new one") \
  COUNTER(rejected_acl, "its address is not in --allow-from: closed before any TLS or handler")   \
  COUNTER(rejected_tls_handshakes, "TLS handshakes refused: --tls-max-handshakes were waiting")   \
  COUNTER(rejected_tls_on_plain, "a TLS ClientHello on a plain listener (use --tls-listen's)")    \
  COUNTER(proxy_headers, "PROXY v2 headers taken (client address from --proxy-protocol-from)")    \
  COUNTER(reset_errors, "recv/send failed (connection reset, broken pipe)")                       \
  COUNTER(accept_errors, "accept failed with an unexpected error")                                \
  COUNTER(accept_pauses, "accepting paused for lack of descriptors or memory (EMFILE...)")        \
  COUNTER(closed_drain, "still open at the end of the drain timeout")                             \
  COUNTER(closed_unused, "closed by the peer or the read timeout before the client sent a byte")  \
  COUNTER(idle_closes,                                                                            \
          "kept-alive connections closed without a next request: after --keepalive-ms, or at "    \
          "once when the pool or the client's share was full (its answers all sent)")             \
  COUNTER(keepalive_skipped,                                                                      \
          "connections served in the single pass, without --keepalive-ms: their client closed "   \
          "its last kept-open ones after one request (--keepalive-learn)")                        \
  COUNTER(handler_loops, "handler made no progress; connection closed (a handler bug)")           \
  COUNTER(lingering_closes, "closed after discarding input the client sent past the response")    \
  COUNTER(linger_cut, "lingering close ended by --linger-ms or the byte bound, not by EOF")       \
  COUNTER(upstream_sent, "datagrams sent to upstream servers (a forwarding handler)")             \
  COUNTER(upstream_send_errors, "datagrams to upstreams the kernel refused (they time out)")      \
  COUNTER(upstream_received, "datagrams read from upstream servers")                              \
  COUNTER(upstream_unexpected,                                                                    \
          "datagrams from upstreams answering no request sent from that port (forged?); dropped") \
  COUNTER(upstream_ports_opened, "UDP source ports opened to upstreams (kernel-chosen, random)")  \
  COUNTER(upstream_port_open_errors, "UDP source ports to upstreams the kernel refused to open")  \
  COUNTER(upstream_ports_shared,                                                                  \
          "datagrams to upstreams sent from an already used port (port cap or open error)")       \
  COUNTER(upstream_ports_expired, "UDP source ports closed with replies still missing (linger)")  \
  COUNTER(upstream_orphans, "upstream answers for connections already closed; dropped")           \
  COUNTER(upstream_stuck, "closed while still waiting for upstream answers (backstop)")           \
  COUNTER(upstream_stream_sent, "framed requests sent on TCP connections to upstreams")           \
  COUNTER(upstream_stream_send_errors, "TCP requests to upstreams dropped (they time out)")       \
  COUNTER(upstream_stream_received, "frames read from TCP connections to upstreams")              \
  COUNTER(upstream_stream_connects, "TCP connections to upstreams opened")                        \
  COUNTER(upstream_stream_connect_errors, "TCP connections to upstreams that failed to open")     \
  COUNTER(upstream_stream_lost, "TCP connections to upstreams closed with requests in flight")    \
  COUNTER(upstream_stream_idle_closes, "idle TCP connections to upstreams closed")                \
  COUNTER(upstream_stream_resent, "TCP requests sent again after their connection broke")         \
  COUNTER(upstream_stream_resend_lost, "TCP requests whose second connection broke too")          \
  COUNTER(reloads, "SIGHUP data reloads handed to the workers (server-wide, not per worker)")     \
  COUNTER(reload_failures, "SIGHUP reloads refused; the previous data stayed (server-wide)")

// Counters and totals, as read at one moment. Plain values.
struct StatsSnapshot {
#define ONEPASS_SNAPSHOT_COUNTER(name, help) uint64_t name = 0;
#define ONEPASS_SNAPSHOT_TOTAL(name, help, sum) uint64_t name = 0;
  ONEPASS_WORKER_COUNTERS(ONEPASS_SNAPSHOT_COUNTER, ONEPASS_SNAPSHOT_TOTAL)
#undef ONEPASS_SNAPSHOT_COUNTER
#undef ONEPASS_SNAPSHOT_TOTAL

  // Adds the counters and computes the totals again.
  StatsSnapshot& operator+=(const StatsSnapshot& other);
  // Sets every total from its counters (Read and += do).
  void ComputeTotals();
  // "accepted=1 served=1 ..." in the order above.
  std::string Format() const;
};

// The counters only: a total has no field here, so it cannot be incremented by hand.
struct alignas(64) WorkerStats {
#define ONEPASS_WORKER_COUNTER(name, help) std::atomic<uint64_t> name{0};
#define ONEPASS_WORKER_TOTAL(name, help, sum)
  ONEPASS_WORKER_COUNTERS(ONEPASS_WORKER_COUNTER, ONEPASS_WORKER_TOTAL)
#undef ONEPASS_WORKER_COUNTER
#undef ONEPASS_WORKER_TOTAL

  // Only the owning worker thread calls Add.
  static void Add(std::atomic<uint64_t>& counter, uint64_t n = 1) {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  // Any thread. The totals are computed from the counters read.
  StatsSnapshot Read() const;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_STATS_H_
