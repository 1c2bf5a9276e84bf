#include "server/xdp/tcp/tcp_endpoint.h"

#include <algorithm>

namespace onepass::xdp {
namespace {

bool SeqLt(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }
bool SeqLe(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) <= 0; }

// The most payload one segment to `c` carries: its MSS less the options each segment has
// (RFC 6691: the MSS counts no options; timestamps take 12 bytes with their padding). A
// segment of the full MSS with timestamps would be 12 bytes past the path's MTU, and dropped.
uint32_t SegmentPayloadMax(const TcpConnection& c) {
  constexpr uint32_t kTimestampOptionBytes = 12;
  return c.mss - (c.ts ? kTimestampOptionBytes : 0);
}

// The sequence number just past the answers' last byte (where our FIN goes), in sequence space
// (uint32_t, wrapping).
uint32_t AnswersEnd(const TcpConnection& c) {
  return c.data_seq + static_cast<uint32_t>(c.response.size());
}

// A SYN-ACK's TSval carries the client's window shift (0 to 14; 15: none offered) in its low 4
// bits, so that the cookie's handshake keeps no state: the ACK echoes it (RFC 7323 §4.3), as
// the kernel's SYN cookies carry theirs.
constexpr uint32_t kTsShiftMask = 0xF;
constexpr uint32_t kTsNoShift = 0xF;

uint32_t CookieTimestamp(uint64_t now, int8_t peer_wscale) {
  const uint32_t now32 = static_cast<uint32_t>(now);
  const uint32_t bits = peer_wscale >= 0 ? static_cast<uint32_t>(peer_wscale) : kTsNoShift;
  uint32_t ts = (now32 & ~kTsShiftMask) | bits;
  // Not ahead of the TSvals that follow (now): the client's PAWS test (§5.3) drops a segment
  // whose TSval went back.
  if (SeqLt(now32, ts)) ts -= kTsShiftMask + 1;
  return ts;
}

}  // namespace

TcpEndpoint::TcpEndpoint(const TcpEndpointConfig& config, TcpRequestHandler* handler,
                         TcpFrameSink* sink)
    : config_(config),
      handler_(handler),
      sink_(sink),
      cookies_(config.cookie_key),
      table_(config.table),
      frame_(kMaxHeaderBytes + config.mss) {}

void TcpEndpoint::Emit(const ReplyPath& path, const SegmentOut& seg) {
  size_t n = BuildFrame(path, seg, ip_id_++, frame_);
  if (n != 0) sink_->Send({frame_.data(), n});
}

void TcpEndpoint::SendRst(const ReplyPath& path, uint32_t seq, uint32_t ack, bool with_ack) {
  SegmentOut o;
  o.seq = seq;
  o.ack = ack;
  o.flags = static_cast<uint8_t>(kRst | (with_ack ? kAck : 0));
  ++stats_.rsts_sent;
  Emit(path, o);
}

uint16_t TcpEndpoint::RcvWindow(const TcpConnection& c) const {
  size_t room = config_.request_bound - std::min(config_.request_bound, c.request.size());
  return static_cast<uint16_t>(std::min<size_t>(room, config_.window));
}

void TcpEndpoint::SendAck(TcpConnection& c, uint64_t now) {
  SegmentOut o;
  o.seq = c.snd_nxt;
  o.ack = c.rcv_nxt;
  o.flags = kAck;
  o.window = RcvWindow(c);
  o.options.has_ts = c.ts;
  o.options.ts_val = static_cast<uint32_t>(now);
  o.options.ts_ecr = c.ts_recent;
  Emit(c.path, o);
}

void TcpEndpoint::Drop(TcpConnection& c) { table_.Erase(&c); }

bool TcpEndpoint::OnFrame(std::span<const uint8_t> frame, uint64_t now) {
  ++stats_.frames_in;
  SegmentView s;
  switch (ParseFrame(frame, &s)) {
    case ParseResult::kOk:
      break;
    case ParseResult::kNotOurs:
      ++stats_.not_ours;
      return false;
    case ParseResult::kMalformed:
      ++stats_.malformed;
      return true;
    case ParseResult::kChecksumBad:
      ++stats_.checksum_bad;
      return true;
  }
  if (std::find(config_.ports.begin(), config_.ports.end(), s.path.key.local_port) ==
      config_.ports.end()) {
    ++stats_.not_ours;
    return false;
  }
  const size_t home = table_.Home(s.path.key);  // the 4-tuple hashed once per segment
  TcpConnection* c = table_.Find(s.path.key, home);
  if (c == nullptr) {
    OnNoConnection(s, home, now);
  } else {
    OnSegment(*c, s, now);
  }
  return true;
}

void TcpEndpoint::OnNoConnection(const SegmentView& s, size_t home, uint64_t now) {
  uint32_t seg_len = static_cast<uint32_t>(s.payload.size()) + ((s.flags & kSyn) ? 1 : 0) +
                     ((s.flags & kFin) ? 1 : 0);
  if (s.flags & kRst) {  // RFC 9293 §3.10.7.1: a RST to nothing is dropped
    ++stats_.rsts_received;
    return;
  }
  if ((s.flags & (kSyn | kAck)) == kSyn) {
    ++stats_.syn_received;
    uint16_t mss = s.options.mss != 0 ? std::min(s.options.mss, config_.mss) : 536;
    SegmentOut o;
    o.seq = cookies_.Make(s.path.key, s.seq, mss, now);
    o.ack = s.seq + 1;
    o.flags = kSyn | kAck;
    o.window = config_.window;
    o.options.mss = config_.mss;
    o.options.has_ts = s.options.has_ts;  // RFC 7323 §3.2: only when offered
    // Window scaling only with timestamps to carry the client's shift; ours is 0 (RcvWindow
    // never exceeds 64 KiB), so that the client's windows may exceed 64 KiB (§2.2).
    const bool scaled = s.options.has_ts && s.options.wscale >= 0;
    if (scaled) o.options.wscale = 0;
    o.options.ts_val = s.options.has_ts
                           ? CookieTimestamp(now, scaled ? s.options.wscale : int8_t{-1})
                           : static_cast<uint32_t>(now);
    o.options.ts_ecr = s.options.ts_val;
    ++stats_.syn_acks_sent;
    Emit(s.path, o);
    return;
  }
  if (!(s.flags & kAck)) {  // RFC 9293 §3.10.7.1
    SendRst(s.path, 0, s.seq + seg_len, true);
    return;
  }
  if (s.flags & kSyn) {
    SendRst(s.path, s.ack, 0, false);
    return;
  }
  std::optional<uint16_t> mss = cookies_.Check(s.path.key, s.seq - 1, s.ack - 1, now);
  if (!mss) {
    ++stats_.cookies_bad;
    SendRst(s.path, s.ack, 0, false);
    return;
  }
  TcpConnection* c = nullptr;
  switch (table_.InsertAbsent(s.path.key, home, &c)) {
    case TcpTableInsert::kOk:
      break;
    case TcpTableInsert::kPerClientLimited:
      ++stats_.per_client_limited;
      SendRst(s.path, s.ack, 0, false);
      return;
    default:
      ++stats_.table_full;
      SendRst(s.path, s.ack, 0, false);
      return;
  }
  ++stats_.connections_established;
  c->path = s.path;
  c->snd_una = c->snd_nxt = c->data_seq = s.ack;
  c->rcv_nxt = s.seq;
  c->mss = std::min(*mss, config_.mss);
  c->ts = s.options.has_ts;
  c->ts_recent = s.options.ts_val;
  // The shift our SYN-ACK's TSval carried (a client that leaves timestamps off from here is
  // read unscaled: a smaller window than it has, never a larger one).
  if (c->ts && (s.options.ts_ecr & kTsShiftMask) != kTsNoShift) {
    c->peer_wscale = static_cast<uint8_t>(s.options.ts_ecr & kTsShiftMask);
  }
  c->rto_ms = config_.rto_ms;
  c->request.reserve(std::min<size_t>(config_.request_bound, 4096));
  c->deadline_ms = now + config_.idle_timeout_ms;
  OnSegment(*c, s, now);
}

void TcpEndpoint::OnSegment(TcpConnection& c, const SegmentView& s, uint64_t now) {
  uint32_t wnd = std::max<uint32_t>(RcvWindow(c), 1);
  if (s.flags & kRst) {  // RFC 5961 §3.2
    if (s.seq == c.rcv_nxt) {
      ++stats_.rsts_received;
      Drop(c);
    } else if (SeqLe(c.rcv_nxt, s.seq) && SeqLt(s.seq, c.rcv_nxt + wnd)) {
      ++stats_.challenge_acks;
      SendAck(c, now);
    }
    return;
  }
  // RFC 7323 §5.3 R1 (PAWS): a timestamp older than the last one taken marks an old duplicate
  // (an earlier connection of this 4-tuple, a replay): ACKed and dropped. One tick of slack,
  // as the kernel allows (TCP_PAWS_WINDOW), for segments reordered within a millisecond.
  if (c.ts && s.options.has_ts && SeqLt(s.options.ts_val + 1, c.ts_recent)) {
    ++stats_.paws_dropped;
    SendAck(c, now);
    return;
  }
  if (s.flags & kSyn) {  // RFC 5961 §4.2
    ++stats_.challenge_acks;
    SendAck(c, now);
    return;
  }
  if (!(s.flags & kAck)) return;
  // RFC 5961 §5.2: an ACK beyond what we sent, or too old, is answered with an ACK and dropped.
  if (SeqLt(c.snd_nxt, s.ack) || SeqLt(s.ack, c.snd_una - 65535)) {
    SendAck(c, now);
    return;
  }
  if (SeqLt(c.snd_una, s.ack)) {
    c.snd_una = s.ack;
    c.retries = 0;
    c.rto_ms = config_.rto_ms;
  }
  c.peer_window = static_cast<uint32_t>(s.window) << c.peer_wscale;  // never a SYN here
  // §4.3: TS.Recent follows the timestamps of segments in order, never back (PAWS above), and
  // a segment without one leaves it.
  if (c.ts && s.options.has_ts && SeqLe(s.seq, c.rcv_nxt) && SeqLt(c.ts_recent, s.options.ts_val)) {
    c.ts_recent = s.options.ts_val;
  }
  if (!OnData(c, s, now)) return;
  bool fin_acked = c.fin_sent && c.snd_una == c.snd_nxt;
  if (fin_acked && c.peer_fin) {
    // Both sides closed; OnData has ACKed the peer's FIN (else the peer retransmits it and
    // gets a RST for a connection that ended well). No TIME_WAIT: a retransmitted FIN gets a
    // RST.
    Drop(c);
    return;
  }
  // Once answered: the rest of the answers, our FIN when due, and the timer they need.
  if (!c.response.empty() || c.fin_queued) SendData(c, now);
}

bool TcpEndpoint::OnData(TcpConnection& c, const SegmentView& s, uint64_t now) {
  std::span<const uint8_t> data = s.payload;
  uint32_t seq = s.seq;
  bool fin = s.flags & kFin;
  if (data.empty() && !fin) return true;
  uint32_t end = seq + static_cast<uint32_t>(data.size());
  if (SeqLe(end, c.rcv_nxt) && !(fin && end == c.rcv_nxt && !c.peer_fin)) {
    // All old: a duplicate request. Resend the answer from the first unacknowledged byte.
    if (c.snd_una != c.snd_nxt) {
      c.snd_nxt = c.snd_una;
      c.fin_sent = false;
      ++stats_.retransmissions;
    } else {
      SendAck(c, now);
    }
    return true;
  }
  if (SeqLt(c.rcv_nxt, seq) || SeqLe(c.rcv_nxt + std::max<uint32_t>(RcvWindow(c), 1), seq)) {
    SendAck(c, now);  // out of order or out of window: dropped, duplicate ACK (RFC 9293 §3.10.7.4)
    return true;
  }
  data = data.subspan(c.rcv_nxt - seq);  // trims what we already have
  if (!data.empty() && c.fin_queued) {
    // A request after we closed (keep-alive off, or over): nobody will read it. The kernel
    // answers data to a closed socket with a RST, so that the client does not wait.
    ++stats_.data_after_close;
    SendRst(c.path, c.snd_nxt, 0, false);
    Drop(c);
    return false;
  }
  if (c.peer_fin) {
    c.rcv_nxt += static_cast<uint32_t>(data.size());  // past the peer's FIN: ignored
  } else {
    if (c.request.size() + data.size() > config_.request_bound) {
      SendRst(c.path, c.snd_nxt, 0, false);
      Drop(c);
      return false;
    }
    c.request.insert(c.request.end(), data.begin(), data.end());
    c.rcv_nxt += static_cast<uint32_t>(data.size());
  }
  if (fin) {
    c.rcv_nxt += 1;
    c.peer_fin = true;
  }
  if (!c.fin_queued && !c.request.empty()) Answer(c);
  // The peer closed: what it sent is answered (above), then we close too.
  if (c.peer_fin) c.fin_queued = true;
  // Bytes of the answers not sent yet, or our FIN.
  const bool to_send =
      c.snd_nxt != AnswersEnd(c) + (c.fin_sent ? 1u : 0u) || (c.fin_queued && !c.fin_sent);
  if (!to_send) SendAck(c, now);
  if (to_send) c.deadline_ms = now;  // SendData sets the retransmission deadline
  return true;
}

void TcpEndpoint::Answer(TcpConnection& c) {
  // Everything sent before is acknowledged: its bytes go, and the next answer starts at
  // snd_una (the first answer, in the common case, is written into the empty buffer directly).
  if (!c.response.empty() && !c.fin_sent && c.snd_una == AnswersEnd(c)) {
    c.data_seq = c.snd_una;
    c.response.clear();
  }
  std::vector<uint8_t>* out = c.response.empty() ? &c.response : &answer_;
  answer_.clear();
  const size_t before = c.response.size();
  size_t consumed = 0;
  const TcpRequestHandler::Verdict v = handler_->OnRequest(
      {.bytes = c.request, .peer_closed = c.peer_fin, .flow = &c.key}, out, &consumed);
  if (out == &answer_) c.response.insert(c.response.end(), answer_.begin(), answer_.end());
  consumed = std::min(consumed, c.request.size());
  c.request.erase(c.request.begin(), c.request.begin() + static_cast<long>(consumed));
  switch (v) {
    case TcpRequestHandler::Verdict::kNeedMore:
      return;
    case TcpRequestHandler::Verdict::kRespond:
      if (config_.keepalive_ms == 0) c.fin_queued = true;
      break;
    case TcpRequestHandler::Verdict::kRespondThenClose:
    case TcpRequestHandler::Verdict::kClose:
      c.fin_queued = true;
      break;
  }
  if (c.response.size() > before) {
    ++stats_.requests;
    ++stats_.responses;
  }
}

// Sends what the peer's window allows from snd_nxt: MSS-sized segments, our FIN on the last when
// queued (RFC 9293 §3.10.4). A zero window arms the persist timer (OnTimer probes with one byte).
void TcpEndpoint::SendData(TcpConnection& c, uint64_t now) {
  const uint32_t size = static_cast<uint32_t>(c.response.size());
  const uint32_t fin_seq = AnswersEnd(c);
  bool sent = false;
  while (SeqLe(c.snd_nxt, fin_seq) && !(c.fin_sent && c.snd_nxt == fin_seq + 1)) {
    uint32_t offset = c.snd_nxt - c.data_seq;
    uint32_t in_flight = c.snd_nxt - c.snd_una;
    uint32_t room = c.peer_window > in_flight ? c.peer_window - in_flight : 0;
    uint32_t len = std::min({size - offset, SegmentPayloadMax(c), room});
    bool fin = c.fin_queued && offset + len == size;
    if (len == 0 && !fin) break;  // window closed
    if (len == 0 && room == 0 && size != 0 && in_flight != 0) break;
    SegmentOut o;
    o.seq = c.snd_nxt;
    o.ack = c.rcv_nxt;
    o.flags = static_cast<uint8_t>(kAck | (len ? kPsh : 0) | (fin ? kFin : 0));
    o.window = RcvWindow(c);
    o.options.has_ts = c.ts;
    o.options.ts_val = static_cast<uint32_t>(now);
    o.options.ts_ecr = c.ts_recent;
    o.payload = {c.response.data() + offset, len};
    Emit(c.path, o);
    c.snd_nxt += len + (fin ? 1 : 0);
    if (fin) c.fin_sent = true;
    sent = true;
    if (fin) break;
  }
  if (!sent && c.snd_una == c.snd_nxt) {
    // All acked: our FIN's wait for the peer's, a request's, or keep-alive's for the next one.
    c.deadline_ms =
        now + (c.fin_sent || !c.request.empty() ? config_.idle_timeout_ms : config_.keepalive_ms);
  } else {
    c.deadline_ms = now + c.rto_ms;  // retransmission or persist timer
  }
}

// Go-back-N from snd_una with a doubled timeout, up to max_retries; then RST and drop.
// Idle connections (nothing unacknowledged, no answer due) time out with a RST.
void TcpEndpoint::OnTimer(uint64_t now) {
  due_.clear();  // kept: a tick allocates nothing once it has held the most due at once
  table_.ForEachExpired(now, [this](TcpConnection& c) { due_.push_back(&c); });
  for (TcpConnection* c : due_) {
    // What we have to send (the answers' bytes, our FIN when queued) and the peer has not
    // acknowledged yet.
    const bool outstanding = c->snd_una != AnswersEnd(*c) + (c->fin_queued ? 1u : 0u);
    if (!outstanding && !c->fin_queued && c->request.empty() && !c->response.empty()) {
      // Keep-alive over: no next request within keepalive_ms. Closed as the kernel path
      // closes an idle kept connection, with our FIN (its wait is the idle timeout's).
      ++stats_.keepalive_closes;
      c->fin_queued = true;
      SendData(*c, now);
      continue;
    }
    if (!outstanding || ++c->retries > config_.max_retries) {
      ++stats_.timeouts;
      SendRst(c->path, c->snd_nxt, 0, false);
      Drop(*c);
      continue;
    }
    ++stats_.retransmissions;
    c->rto_ms *= 2;
    c->snd_nxt = c->snd_una;
    c->fin_sent = false;
    if (c->peer_window == 0) c->peer_window = 1;  // persist probe: one byte (RFC 9293 §3.8.6.1)
    SendData(*c, now);
  }
}

void TcpEndpoint::BeginDrain(uint64_t now) {
  config_.keepalive_ms = 0;
  due_.clear();
  table_.ForEachExpired(UINT64_MAX, [this](TcpConnection& c) { due_.push_back(&c); });
  for (TcpConnection* c : due_) {
    // Kept open after its answers, all acknowledged, no request begun: idle.
    const bool outstanding = c->snd_una != AnswersEnd(*c) + (c->fin_queued ? 1u : 0u);
    if (outstanding || c->fin_queued || !c->request.empty() || c->response.empty()) continue;
    ++stats_.keepalive_closes;
    c->fin_queued = true;
    SendData(*c, now);
  }
}

}  // namespace onepass::xdp
