// The TCP state machine for one-query connections (issue 40), one per worker queue,
// thread-confined. Pure: frames in (OnFrame), frames out (TcpFrameSink), time passed in.
// A SYN gets a SYN-ACK whose ISN is a SYN cookie (RFC 4987 §3.6): no state until the ACK.
// Window scaling (RFC 7323 §2) is negotiated when the SYN has both it and timestamps: our
// SYN-ACK offers shift 0 (our window never exceeds 64 KiB) and carries the client's shift in
// the low 4 bits of its TSval, which the handshake's ACK echoes, as the kernel's cookies do;
// without timestamps it is not offered and both sides stay unscaled (§2.2). With timestamps,
// PAWS (§5) drops a segment whose timestamp went back. Out-of-order data is dropped with a
// duplicate ACK (the peer retransmits). Without keep-alive (keepalive_ms 0) we close first: the
// response's last segment carries our FIN. With it, the connection stays open after each
// answer for the client's next request (dnsperf -m tcp, a stub reusing its connection): our
// FIN goes when the client closes (its FIN), when the handler closes, or after keepalive_ms
// idle, as the kernel path's keep-alive does. Either way our FIN's ACK plus the peer's FIN free
// the slot; no TIME_WAIT (a late FIN then gets a RST). New data after our FIN was decided
// gets a RST, as the kernel answers data to a closed socket.
#ifndef ONEPASS_SERVER_XDP_TCP_TCP_ENDPOINT_H_
#define ONEPASS_SERVER_XDP_TCP_TCP_ENDPOINT_H_

#include <cstdint>
#include <span>
#include <vector>

#include "server/xdp/tcp/packet.h"
#include "server/xdp/tcp/syn_cookie.h"
#include "server/xdp/tcp/tcp_table.h"

namespace onepass::xdp {

// Interface: where output frames go. The span is valid during the call only.
class TcpFrameSink {
 public:
  virtual ~TcpFrameSink() = default;
  virtual void Send(std::span<const uint8_t> frame) = 0;
};

// What the endpoint hands the protocol: the bytes a connection received and not yet answered, in
// order; whether the peer's FIN came after them; the connection's 4-tuple (its peer's address,
// for per-client policy: Whois and RDAP rate limits, as on the kernel path).
struct TcpRequest {
  std::span<const uint8_t> bytes;
  bool peer_closed = false;
  const FlowKey* flow = nullptr;
};

// Interface: the protocol, generic (the server knows no DNS).
//   kNeedMore: no whole request yet; nothing written.
//   kRespond: `response` answers the first `*consumed` bytes of the request (the rest is the
//     start of the next request); the connection stays open with keep-alive.
//   kRespondThenClose: the same, then our FIN.   kClose: our FIN, no answer.
// `response` arrives empty and is copied before the call returns.
class TcpRequestHandler {
 public:
  enum class Verdict { kNeedMore, kRespond, kRespondThenClose, kClose };
  virtual ~TcpRequestHandler() = default;
  virtual Verdict OnRequest(const TcpRequest& request, std::vector<uint8_t>* response,
                            size_t* consumed) = 0;
};

struct TcpEndpointConfig {
  std::vector<uint16_t> ports;  // listen ports; frames to others are not ours
  uint16_t mss = 1460;
  uint16_t window = 65535;
  TcpTableConfig table;
  size_t request_bound = 65535;
  uint64_t idle_timeout_ms = 10'000;  // [ms] a request's wait, and our FIN's for the peer's
  uint64_t keepalive_ms = 0;          // [ms] idle wait for the next request; 0: FIN with the answer
  uint64_t rto_ms = 200;              // [ms] first retransmission timeout, doubled per retry
  uint32_t max_retries = 5;
  CookieKey cookie_key{};
};

struct TcpStats {
  uint64_t frames_in = 0, not_ours = 0, malformed = 0, checksum_bad = 0, syn_received = 0,
           syn_acks_sent = 0, cookies_bad = 0, connections_established = 0, requests = 0,
           responses = 0, retransmissions = 0, rsts_sent = 0, rsts_received = 0, challenge_acks = 0,
           timeouts = 0, table_full = 0, per_client_limited = 0, keepalive_closes = 0,
           data_after_close = 0, paws_dropped = 0;
};

class TcpEndpoint {
 public:
  TcpEndpoint(const TcpEndpointConfig& config, TcpRequestHandler* handler, TcpFrameSink* sink);

  // One received frame; false when it is not ours (the caller may pass it to the kernel).
  bool OnFrame(std::span<const uint8_t> frame, uint64_t now_ms);
  // Retransmissions, persist probes and idle timeouts due by `now_ms`.
  void OnTimer(uint64_t now_ms);
  void RotateCookieKey(const CookieKey& key) { cookies_.Rotate(key); }
  // The process drains (a stop or a restart): as the kernel path's drain, no more keep-alive
  // (each answer from now on leaves with our FIN) and a kept connection idle between requests
  // gets our FIN now; connections in the middle of a request are answered. New connections
  // stop coming from the XDP program (XdpProgram::BeginDrain); connections() then falls to 0.
  void BeginDrain(uint64_t now_ms);

  const TcpStats& stats() const { return stats_; }
  size_t connections() const { return table_.size(); }

 private:
  // `home`: TcpTable::Home of the segment's key, which Find has just missed.
  void OnNoConnection(const SegmentView& s, size_t home, uint64_t now);
  void OnSegment(TcpConnection& c, const SegmentView& s, uint64_t now);
  // False when it dropped `c` (a request past request_bound, data after our FIN): `c` is gone.
  bool OnData(TcpConnection& c, const SegmentView& s, uint64_t now);
  // The handler on c.request: its answer appended to c.response, what it answered taken off.
  void Answer(TcpConnection& c);
  void SendData(TcpConnection& c, uint64_t now);
  void SendAck(TcpConnection& c, uint64_t now);
  void SendRst(const ReplyPath& path, uint32_t seq, uint32_t ack, bool with_ack);
  void Emit(const ReplyPath& path, const SegmentOut& seg);
  void Drop(TcpConnection& c);
  uint16_t RcvWindow(const TcpConnection& c) const;

  TcpEndpointConfig config_;
  TcpRequestHandler* handler_;
  TcpFrameSink* sink_;
  SynCookies cookies_;
  TcpTable table_;
  std::vector<TcpConnection*> due_;  // OnTimer's expired connections, then each handled
  TcpStats stats_;
  std::vector<uint8_t> frame_;
  std::vector<uint8_t> answer_;  // a keep-alive connection's next answer, before it is appended
  uint16_t ip_id_ = 0;
};

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_TCP_TCP_ENDPOINT_H_
