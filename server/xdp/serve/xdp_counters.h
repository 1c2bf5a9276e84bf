// The AF_XDP path's counters of one worker queue (XdpQueue), written by its worker thread and
// read by any (the exit line, /metrics) with relaxed loads, as the worker's own counters are.
// TcpEndpoint's and XskSocket's stats are plain fields of the worker thread: XdpQueue copies
// the few an operator needs into these after each batch.
#ifndef ONEPASS_SERVER_XDP_SERVE_XDP_COUNTERS_H_
#define ONEPASS_SERVER_XDP_SERVE_XDP_COUNTERS_H_

#include <atomic>
#include <cstdint>
#include <string>

namespace onepass::xdp {

// name, help (for /metrics: onepass_xdp_<name>_total).
#define ONEPASS_XDP_COUNTERS(X)                                                             \
  X(packets_in, "frames the XDP program steered to the AF_XDP sockets")                     \
  X(packets_out, "frames the AF_XDP path sent (SYN-ACKs, answers, ACKs, RSTs)")             \
  X(connections, "TCP connections established over the AF_XDP path (a valid SYN cookie)")   \
  X(requests, "requests handed to the handler over the AF_XDP path")                        \
  X(retransmissions, "segments the AF_XDP path's TCP sent again (timeout or duplicate)")    \
  X(rsts_sent, "RSTs the AF_XDP path sent (segments of no connection, aborts)")             \
  X(drops,                                                                                  \
    "segments not served, and frames not sent: malformed, a bad checksum, not a TCP "       \
    "segment of ours or an old timestamp (PAWS) (dropped), a bad SYN cookie, the table "    \
    "full or the per-client limit "                                                         \
    "(answered with a RST, also in rsts_sent), no free tx frame or too large for one (not " \
    "sent)")                                                                                \
  X(timeouts, "AF_XDP connections closed by their idle deadline or after their last retry") \
  X(keepalive_closes,                                                                       \
    "kept-alive AF_XDP connections we closed (our FIN) after --keepalive-ms without a "     \
    "request")                                                                              \
  X(data_after_close,                                                                       \
    "AF_XDP connections that sent data after our FIN, answered with a RST (as the kernel "  \
    "answers data to a closed socket; also in rsts_sent)")                                  \
  X(ring_drops,                                                                             \
    "frames the kernel dropped before the AF_XDP socket (rx ring full, invalid "            \
    "descriptors: XDP_STATISTICS), read once a second")                                     \
  X(kick_errors,                                                                            \
    "tx wakeups (sendto on the AF_XDP socket) that failed with an error other than "        \
    "EAGAIN, EBUSY or ENOBUFS: queued frames may not leave (the interface down?)")

struct XdpStatsSnapshot {
#define ONEPASS_XDP_FIELD(name, help) uint64_t name = 0;
  ONEPASS_XDP_COUNTERS(ONEPASS_XDP_FIELD)
#undef ONEPASS_XDP_FIELD
  XdpStatsSnapshot& operator+=(const XdpStatsSnapshot& other);
  // "xdp_packets_in=N xdp_packets_out=N ...", for the exit line.
  std::string Format() const;
};

struct XdpCounters {
#define ONEPASS_XDP_ATOMIC(name, help) std::atomic<uint64_t> name{0};
  ONEPASS_XDP_COUNTERS(ONEPASS_XDP_ATOMIC)
#undef ONEPASS_XDP_ATOMIC
  void Store(const XdpStatsSnapshot& s);  // the owning thread
  XdpStatsSnapshot Read() const;          // any thread
};

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_SERVE_XDP_COUNTERS_H_
