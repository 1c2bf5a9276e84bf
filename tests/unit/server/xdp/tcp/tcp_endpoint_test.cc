// The endpoint through frames: a tiny test-only client builds frames with BuildFrame and reads
// the endpoint's with ParseFrame. Time is passed in; no sockets, no sleeps.
#include "server/xdp/tcp/tcp_endpoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace onepass::xdp {
namespace {

// Echoes "answer:" + request once the request ends in '\n'.
class LineHandler : public TcpRequestHandler {
 public:
  size_t answer_size = 0;  // when set, the answer is this many 'a's
  // Each line is a request: the answer is "ok:" and the line, for every whole line received.
  Verdict OnRequest(const TcpRequest& request, std::vector<uint8_t>* out,
                    size_t* consumed) override {
    const std::span<const uint8_t> req = request.bytes;
    const auto end = std::find(req.rbegin(), req.rend(), '\n');
    if (end == req.rend()) return Verdict::kNeedMore;
    *consumed = static_cast<size_t>(req.rend() - end);
    if (answer_size) {
      out->assign(answer_size, 'a');
    } else {
      out->assign({'o', 'k', ':'});
      out->insert(out->end(), req.begin(), req.begin() + static_cast<long>(*consumed));
    }
    return Verdict::kRespond;
  }
};

struct Sink : TcpFrameSink {
  std::vector<SegmentView> got;
  std::vector<std::vector<uint8_t>> frames;
  void Send(std::span<const uint8_t> f) override {
    frames.emplace_back(f.begin(), f.end());
    SegmentView v;
    ASSERT_EQ(ParseFrame(frames.back(), &v), ParseResult::kOk);
    got.push_back(v);
  }
};

class Client {
 public:
  Client(bool v6, uint16_t port) {
    path_.key.v6 = v6;
    path_.key.local = {10, 0, 0, 9};  // the client's address (BuildFrame writes from local)
    path_.key.peer = {10, 0, 0, 1};
    if (v6) {
      path_.key.local = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
      path_.key.peer = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    }
    path_.key.local_port = port;
    path_.key.peer_port = 53;
  }
  std::vector<uint8_t> Frame(uint32_t seq, uint32_t ack, uint8_t flags, std::string data = "",
                             uint16_t window = 65535) {
    SegmentOut o;
    o.seq = seq;
    o.ack = ack;
    o.flags = flags;
    o.window = window;
    if (flags & kSyn) {
      o.options.mss = 1400;
      o.options.wscale = wscale;
    }
    o.options.has_ts = ts;
    o.options.ts_val = ts_val;
    o.options.ts_ecr = ts_ecr;
    o.payload = {reinterpret_cast<const uint8_t*>(data.data()), data.size()};
    std::vector<uint8_t> f(kMaxHeaderBytes + data.size());
    f.resize(BuildFrame(path_, o, 0, f));
    return f;
  }

  bool ts = true;        // timestamps on every segment
  int8_t wscale = -1;    // the SYN's window scale option; -1: none
  uint32_t ts_ecr = 0;   // what the segments echo (the server's last TSval)
  uint32_t ts_val = 77;  // the client's timestamp clock

 private:
  ReplyPath path_;
};

struct Fixture : ::testing::Test {
  TcpEndpointConfig Config() {
    TcpEndpointConfig c;
    c.ports = {53};
    c.table = {.max_connections = 4, .per_client_max = 2};
    c.cookie_key = {9, 9, 9};
    return c;
  }
  LineHandler handler;
  Sink sink;
  TcpEndpoint ep{Config(), &handler, &sink};
  const uint32_t isn = 1000;

  // SYN, SYN-ACK; returns the server's ISN.
  uint32_t Handshake(Client& cl, uint64_t now = 0) {
    EXPECT_TRUE(ep.OnFrame(cl.Frame(isn, 0, kSyn), now));
    const SegmentView& sa = sink.got.back();
    EXPECT_EQ(sa.flags, kSyn | kAck);
    EXPECT_EQ(sa.ack, isn + 1);
    EXPECT_EQ(sa.options.mss, 1460);
    EXPECT_TRUE(sa.options.has_ts);
    EXPECT_EQ(sa.options.ts_ecr, 77u);
    return sa.seq;
  }
};

void OneQuery(Fixture& t, bool v6) {
  Client cl(v6, 40000);
  uint32_t s = t.Handshake(cl);
  ASSERT_TRUE(t.ep.OnFrame(cl.Frame(t.isn + 1, s + 1, kAck | kPsh, "q\n"), 1));
  EXPECT_EQ(t.ep.connections(), 1u);
  const SegmentView& r = t.sink.got.back();
  EXPECT_EQ(r.flags, kAck | kPsh | kFin);
  EXPECT_EQ(std::string(r.payload.begin(), r.payload.end()), "ok:q\n");
  EXPECT_EQ(r.ack, t.isn + 3);
  uint32_t fin_ack = s + 1 + 5 + 1;
  t.ep.OnFrame(cl.Frame(t.isn + 3, fin_ack, kAck), 2);
  EXPECT_EQ(t.ep.connections(), 1u);  // waits for the client's FIN
  const size_t sent_before_fin = t.sink.got.size();
  t.ep.OnFrame(cl.Frame(t.isn + 3, fin_ack, kAck | kFin), 3);
  EXPECT_EQ(t.ep.connections(), 0u);
  // The client's FIN is ACKed, as the kernel would (else it retransmits it into a RST).
  ASSERT_EQ(t.sink.got.size(), sent_before_fin + 1);
  EXPECT_EQ(t.sink.got.back().flags, kAck);
  EXPECT_EQ(t.sink.got.back().ack, t.isn + 4);
  EXPECT_EQ(t.sink.got.back().seq, fin_ack);
  EXPECT_EQ(t.ep.stats().connections_established, 1u);
  EXPECT_EQ(t.ep.stats().responses, 1u);
  EXPECT_EQ(t.ep.stats().rsts_sent, 0u);
}

TEST_F(Fixture, OneQueryIpv4) { OneQuery(*this, false); }
TEST_F(Fixture, OneQueryIpv6) { OneQuery(*this, true); }

TEST_F(Fixture, SplitDuplicatedAndReorderedRequest) {
  Client cl(false, 40001);
  uint32_t s = Handshake(cl);
  ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck, "ab"), 1);
  ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck, "ab"), 1);  // duplicate: ACKed again
  ep.OnFrame(cl.Frame(isn + 5, s + 1, kAck, "\n"), 1);  // ahead: dropped, dup ACK
  EXPECT_EQ(sink.got.back().ack, isn + 3);
  ep.OnFrame(cl.Frame(isn + 3, s + 1, kAck, "cd"), 1);
  ep.OnFrame(cl.Frame(isn + 5, s + 1, kAck, "\n"), 1);
  EXPECT_EQ(std::string(sink.got.back().payload.begin(), sink.got.back().payload.end()),
            "ok:abcd\n");
}

TEST_F(Fixture, LostResponseRetransmittedWithBackoffThenDropped) {
  Client cl(false, 40002);
  uint32_t s = Handshake(cl);
  ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck, "q\n"), 0);
  size_t before = sink.got.size();
  ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck, "q\n"), 10);  // duplicate request: answer again
  ASSERT_GT(sink.got.size(), before);
  EXPECT_EQ(sink.got.back().payload.size(), 5u);
  uint64_t now = 10, rto = 200;
  for (int i = 0; i < 5; ++i) {
    ep.OnTimer(now + rto - 1);
    size_t n = sink.got.size();
    now += rto;
    ep.OnTimer(now);
    ASSERT_EQ(sink.got.size(), n + 1) << i;
    EXPECT_EQ(sink.got.back().seq, s + 1);
    rto *= 2;
  }
  ep.OnTimer(now + rto);
  EXPECT_EQ(ep.connections(), 0u);
  EXPECT_EQ(sink.got.back().flags & kRst, kRst);
  EXPECT_EQ(ep.stats().timeouts, 1u);
}

TEST_F(Fixture, BadChecksumAndBadCookie) {
  Client cl(false, 40003);
  std::vector<uint8_t> f = cl.Frame(isn, 0, kSyn);
  f.back() ^= 1;
  ep.OnFrame(f, 0);
  EXPECT_EQ(ep.stats().checksum_bad, 1u);
  EXPECT_TRUE(sink.got.empty());
  ep.OnFrame(cl.Frame(isn + 1, 12345, kAck, "q\n"), 0);
  EXPECT_EQ(ep.stats().cookies_bad, 1u);
  EXPECT_EQ(sink.got.back().flags, kRst);
  EXPECT_EQ(sink.got.back().seq, 12345u);
  EXPECT_EQ(ep.connections(), 0u);
}

TEST_F(Fixture, Rfc5961RstAndSyn) {
  Client cl(false, 40004);
  uint32_t s = Handshake(cl);
  ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck, "q"), 0);
  for (uint32_t off : {1u, 100u, 5000u, 0x80000000u}) {
    ep.OnFrame(cl.Frame(isn + 2 + off, 0, kRst), 0);
    EXPECT_EQ(ep.connections(), 1u);
  }
  EXPECT_EQ(ep.stats().challenge_acks, 3u);
  ep.OnFrame(cl.Frame(isn, 0, kSyn), 0);
  EXPECT_EQ(ep.stats().challenge_acks, 4u);
  ep.OnFrame(cl.Frame(isn + 1, s + 1000, kAck, "x"), 0);  // acks unsent data: dropped
  ep.OnFrame(cl.Frame(isn + 2, 0, kRst), 0);
  EXPECT_EQ(ep.connections(), 0u);
}

TEST_F(Fixture, ZeroWindowThenProbe) {
  Client cl(false, 40005);
  uint32_t s = Handshake(cl);
  ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck, "q\n", 0), 0);
  EXPECT_TRUE(sink.got.back().payload.empty());  // only the ACK
  ep.OnTimer(200);
  EXPECT_EQ(sink.got.back().payload.size(), 1u);  // persist probe
  ep.OnFrame(cl.Frame(isn + 3, s + 2, kAck, "", 65535), 201);
  EXPECT_EQ(std::string(sink.got.back().payload.begin(), sink.got.back().payload.end()), "k:q\n");
  EXPECT_TRUE(sink.got.back().flags & kFin);
}

TEST_F(Fixture, LargeResponseInMssSegments) {
  handler.answer_size = 4000;
  Client cl(false, 40006);
  uint32_t s = Handshake(cl);
  ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck, "q\n"), 0);
  ASSERT_GE(sink.got.size(), 4u);
  size_t n = sink.got.size();
  // The client's MSS is 1400 and every segment carries timestamps (12 bytes of options): 1388
  // bytes of payload each, so that no frame is larger than the client's MTU allows.
  EXPECT_EQ(sink.got[n - 3].payload.size(), 1388u);
  EXPECT_EQ(sink.got[n - 2].payload.size(), 1388u);
  EXPECT_EQ(sink.got[n - 1].payload.size(), 4000u - 2 * 1388u);
  EXPECT_TRUE(sink.got[n - 1].flags & kFin);
  for (size_t i = n - 3; i < n; ++i) {
    EXPECT_LE(sink.frames[i].size(), 14u + 20u + 20u + 1400u) << "segment " << i;
  }
}

TEST_F(Fixture, TableAndPerClientLimits) {
  for (uint16_t p = 1; p <= 3; ++p) {
    Client cl(false, p);
    uint32_t s = Handshake(cl);
    ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck), 0);
  }
  EXPECT_EQ(ep.connections(), 2u);
  EXPECT_EQ(ep.stats().per_client_limited, 1u);
}

TEST_F(Fixture, NeverAckingClientFreedAndNotOurs) {
  Client cl(false, 40007);
  uint32_t s = Handshake(cl);
  ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck), 0);
  ep.OnTimer(10'000);
  EXPECT_EQ(ep.connections(), 0u);
  Client other(false, 40008);
  std::vector<uint8_t> f = other.Frame(isn, 0, kSyn);
  EXPECT_TRUE(ep.OnFrame(f, 0));
}

// A SYN with timestamps and window scale 9: the SYN-ACK offers shift 0 and carries 9 in its
// TSval's low bits, not ahead of the clock; the ACK that echoes it makes the client's window
// field 4 mean 2048 bytes, so a 3000-byte answer goes as 1388 + 660 bytes, the rest and our
// FIN once those are acknowledged.
TEST_F(Fixture, WindowScaleNegotiatedWithTimestamps) {
  handler.answer_size = 3000;
  Client cl(false, 40010);
  cl.wscale = 9;
  const uint64_t now = 1'000'003;
  const uint32_t s = Handshake(cl, now);
  const SegmentView sa = sink.got.back();
  EXPECT_EQ(sa.options.wscale, 0);
  EXPECT_EQ(sa.options.ts_val & 0xF, 9u);
  EXPECT_LE(sa.options.ts_val, static_cast<uint32_t>(now));
  cl.ts_ecr = sa.options.ts_val;
  const size_t before = sink.got.size();
  ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck, "q\n", 4), now + 1);
  ASSERT_EQ(sink.got.size(), before + 2);
  EXPECT_EQ(sink.got[before].payload.size(), 1388u);
  EXPECT_EQ(sink.got[before + 1].payload.size(), 2048u - 1388u);
  EXPECT_FALSE(sink.got[before + 1].flags & kFin);
  EXPECT_GE(sink.got[before + 1].options.ts_val, sa.options.ts_val);
  ep.OnFrame(cl.Frame(isn + 3, s + 1 + 2048, kAck, "", 4), now + 2);
  EXPECT_EQ(sink.got.back().payload.size(), 3000u - 2048u);
  EXPECT_TRUE(sink.got.back().flags & kFin);
}

// Window scaling is not offered without timestamps to carry the client's shift (RFC 7323
// §2.2: both sides then unscaled), nor when the client does not offer it: either way a window
// field of 4 is 4 bytes.
TEST_F(Fixture, WindowScaleNotOfferedWithoutTimestampsOrTheClientsOption) {
  handler.answer_size = 3000;
  Client no_ts(false, 40011);
  no_ts.ts = false;
  no_ts.wscale = 9;
  ep.OnFrame(no_ts.Frame(isn, 0, kSyn), 5);
  const SegmentView sa = sink.got.back();
  EXPECT_EQ(sa.options.wscale, -1);
  EXPECT_FALSE(sa.options.has_ts);
  ep.OnFrame(no_ts.Frame(isn + 1, sa.seq + 1, kAck, "q\n", 4), 6);
  EXPECT_EQ(sink.got.back().payload.size(), 4u);

  Client no_option(false, 40012);
  const uint32_t s = Handshake(no_option, 7);
  EXPECT_EQ(sink.got.back().options.wscale, -1);
  EXPECT_EQ(sink.got.back().options.ts_val & 0xF, 0xFu);  // "none" in the cookie's TSval
  no_option.ts_ecr = sink.got.back().options.ts_val;
  ep.OnFrame(no_option.Frame(isn + 1, s + 1, kAck, "q\n", 4), 8);
  EXPECT_EQ(sink.got.back().payload.size(), 4u);
}

// Without keep-alive a second request, sent after our FIN was decided, is nobody's to read:
// a RST, as the kernel answers data to a closed socket (the client does not wait for nothing).
TEST_F(Fixture, RequestAfterOurFinIsReset) {
  Client cl(false, 40009);
  uint32_t s = Handshake(cl);
  ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck, "a\n"), 1);
  ASSERT_TRUE(sink.got.back().flags & kFin);
  ep.OnFrame(cl.Frame(isn + 3, s + 1, kAck, "b\n"), 2);
  EXPECT_EQ(sink.got.back().flags & kRst, kRst);
  EXPECT_EQ(ep.connections(), 0u);
  EXPECT_EQ(ep.stats().data_after_close, 1u);
  EXPECT_EQ(ep.stats().responses, 1u);
}

// --keepalive-ms: the connection stays open after each answer; each request gets its answer in
// order (one at a time, two pipelined in one segment, one split over two), then the client's
// FIN gets ours, and its ACK frees the slot.
struct KeepAlive : ::testing::Test {
  static TcpEndpointConfig Config() {
    TcpEndpointConfig c;
    c.ports = {53};
    c.table = {.max_connections = 4, .per_client_max = 2};
    c.cookie_key = {9, 9, 9};
    c.keepalive_ms = 1000;
    c.idle_timeout_ms = 5000;
    return c;
  }
  LineHandler handler;
  Sink sink;
  TcpEndpoint ep{Config(), &handler, &sink};
  const uint32_t isn = 1000;
  Client cl{false, 40100};
  uint32_t s = 0;                       // our ISN
  uint32_t c_seq = isn + 1, s_seq = 0;  // the client's next byte; the server's next byte

  void SetUp() override {
    ASSERT_TRUE(ep.OnFrame(cl.Frame(isn, 0, kSyn), 0));
    s = sink.got.back().seq;
    s_seq = s + 1;
  }
  // Sends `data` at the client's next sequence number, acking everything the server sent.
  void Send(const std::string& data, uint64_t now, uint8_t flags = kAck) {
    ep.OnFrame(cl.Frame(c_seq, s_seq, flags, data), now);
    c_seq += static_cast<uint32_t>(data.size()) + ((flags & kFin) ? 1 : 0);
  }
  // The last frame's payload, checked to start at the server's next byte and carry no FIN.
  std::string Answer() {
    const SegmentView& r = sink.got.back();
    EXPECT_EQ(r.seq, s_seq);
    EXPECT_EQ(r.flags & kFin, 0) << "closed after one answer";
    s_seq += static_cast<uint32_t>(r.payload.size());
    return std::string(r.payload.begin(), r.payload.end());
  }
};

TEST_F(KeepAlive, EveryRequestAnsweredThenThePeersFinGetsOurs) {
  Send("a\n", 1);
  EXPECT_EQ(Answer(), "ok:a\n");
  Send("", 2);  // the client's ACK of it
  Send("b\n", 3);
  EXPECT_EQ(Answer(), "ok:b\n");
  Send("c\nd\n", 4);  // pipelined: both in one answer
  EXPECT_EQ(Answer(), "ok:c\nd\n");
  Send("e", 5);  // half a request: only ACKed
  EXPECT_EQ(sink.got.back().payload.size(), 0u);
  EXPECT_EQ(sink.got.back().ack, c_seq);
  Send("\n", 6);
  EXPECT_EQ(Answer(), "ok:e\n");
  EXPECT_EQ(ep.connections(), 1u);
  Send("", 7, kAck | kFin);
  const SegmentView& fin = sink.got.back();
  EXPECT_EQ(fin.flags, kAck | kFin);
  EXPECT_EQ(fin.seq, s_seq);
  EXPECT_EQ(fin.ack, c_seq);  // the client's FIN, acknowledged with ours
  s_seq += 1;
  const size_t sent = sink.got.size();
  Send("", 8);  // its ACK of our FIN
  EXPECT_EQ(ep.connections(), 0u);
  EXPECT_EQ(sink.got.size(), sent);
  EXPECT_EQ(ep.stats().responses, 4u);
  EXPECT_EQ(ep.stats().rsts_sent, 0u);
}

// No next request within keepalive_ms: our FIN, as the kernel path closes an idle kept
// connection; the client's FIN then gets its ACK and the slot goes.
// PAWS (RFC 7323 §5.3): once a segment in order carried TSval 100, one with an older TSval is
// an old duplicate: an ACK of what we have, and its data dropped, not answered; one tick older
// is still taken (reordering within a millisecond), and a segment without timestamps does not
// move TS.Recent back.
TEST_F(KeepAlive, AnOlderTimestampIsAnOldDuplicateAckedAndDropped) {
  cl.ts_val = 100;
  Send("a\n", 1);
  EXPECT_EQ(Answer(), "ok:a\n");
  cl.ts = false;
  Send("", 2);  // its ACK, without timestamps
  cl.ts = true;
  cl.ts_val = 50;
  const size_t before = sink.got.size();
  Send("b\n", 3);
  ASSERT_EQ(sink.got.size(), before + 1);
  EXPECT_EQ(sink.got.back().flags, kAck);
  EXPECT_TRUE(sink.got.back().payload.empty());
  EXPECT_EQ(sink.got.back().ack, c_seq - 2);  // "b\n" not taken
  EXPECT_EQ(ep.stats().paws_dropped, 1u);
  EXPECT_EQ(ep.stats().responses, 1u);
  c_seq -= 2;
  cl.ts_val = 99;  // one tick older than TS.Recent: taken
  Send("b\n", 4);
  EXPECT_EQ(Answer(), "ok:b\n");
  EXPECT_EQ(ep.stats().paws_dropped, 1u);
}

TEST_F(KeepAlive, IdleForKeepaliveEndsInOurFin) {
  Send("a\n", 0);
  EXPECT_EQ(Answer(), "ok:a\n");
  Send("", 1);
  ep.OnTimer(999);
  EXPECT_EQ(sink.got.back().flags & kFin, 0);
  ep.OnTimer(1001);
  const SegmentView& fin = sink.got.back();
  EXPECT_EQ(fin.flags, kAck | kFin);
  EXPECT_EQ(fin.seq, s_seq);
  s_seq += 1;
  EXPECT_EQ(ep.stats().keepalive_closes, 1u);
  Send("", 1002, kAck | kFin);
  EXPECT_EQ(sink.got.back().flags, kAck);
  EXPECT_EQ(sink.got.back().ack, c_seq);
  EXPECT_EQ(ep.connections(), 0u);
  EXPECT_EQ(ep.stats().rsts_sent, 0u);
}

// A drain (a stop or a restart): a kept connection idle between requests gets our FIN at once;
// one in the middle of a request is answered, with our FIN since keep-alive is over; both free
// their slots once the FINs are exchanged.
TEST_F(KeepAlive, ADrainClosesIdleKeptConnectionsAndAnswersWhatIsUnderWay) {
  Send("a\n", 1);
  EXPECT_EQ(Answer(), "ok:a\n");
  Send("", 2);  // idle now, kept
  Client other{false, 40101};
  const uint32_t other_isn = 5000;
  ASSERT_TRUE(ep.OnFrame(other.Frame(other_isn, 0, kSyn), 3));
  const uint32_t other_s = sink.got.back().seq + 1;
  ep.OnFrame(other.Frame(other_isn + 1, other_s, kAck, "b"), 4);  // half a request
  ASSERT_EQ(ep.connections(), 2u);

  const size_t before = sink.got.size();
  ep.BeginDrain(5);
  ASSERT_EQ(sink.got.size(), before + 1);  // the idle one's FIN, nothing for the other
  EXPECT_EQ(sink.got.back().flags, kAck | kFin);
  EXPECT_EQ(sink.got.back().seq, s_seq);
  EXPECT_EQ(sink.got.back().ack, c_seq);
  s_seq += 1;
  EXPECT_EQ(ep.stats().keepalive_closes, 1u);

  ep.OnFrame(other.Frame(other_isn + 2, other_s, kAck, "\n"), 6);
  const SegmentView& answer = sink.got.back();
  EXPECT_EQ(std::string(answer.payload.begin(), answer.payload.end()), "ok:b\n");
  EXPECT_EQ(answer.flags & kFin, kFin);  // keep-alive is over: the answer closes
  const uint32_t other_fin = answer.seq + static_cast<uint32_t>(answer.payload.size());

  Send("", 7, kAck | kFin);  // the idle one's FIN and the ACK of ours
  ep.OnFrame(other.Frame(other_isn + 3, other_fin + 1, kAck | kFin), 8);
  EXPECT_EQ(ep.connections(), 0u);
  EXPECT_EQ(ep.stats().responses, 2u);
  EXPECT_EQ(ep.stats().rsts_sent, 0u);
}

// A drain with nothing kept sends nothing.
TEST_F(KeepAlive, ADrainWithNoConnectionSendsNothing) {
  const size_t before = sink.got.size();  // SetUp's SYN-ACK
  ep.BeginDrain(1);
  EXPECT_EQ(sink.got.size(), before);
  EXPECT_EQ(ep.stats().keepalive_closes, 0u);
}

// A lost answer on a kept connection is retransmitted from the first unacknowledged byte, the
// next answer after it: nothing of the first is sent twice once acknowledged.
TEST_F(KeepAlive, LostSecondAnswerRetransmittedAlone) {
  Send("a\n", 0);
  EXPECT_EQ(Answer(), "ok:a\n");
  Send("", 1);
  Send("bb\n", 2);
  const uint32_t second = s_seq;
  EXPECT_EQ(Answer(), "ok:bb\n");
  ep.OnTimer(2 + 200);  // its ACK lost: the first retransmission timeout
  const SegmentView& again = sink.got.back();
  EXPECT_EQ(again.seq, second);
  EXPECT_EQ(std::string(again.payload.begin(), again.payload.end()), "ok:bb\n");
  EXPECT_EQ(ep.stats().retransmissions, 1u);
}

// An answer whose bytes cross our sequence number's wrap (2^32): what remains to send is reckoned
// in sequence space. A client's half request while the answer is still unacknowledged gets a
// plain ACK (a sum in size_t had never matched the wrapped snd_nxt, and sent none), and the next
// answer starts past the wrap. Our ISN is a SYN cookie: the test tries client ISNs (a SYN leaves
// no state) until the cookie lands within the answer's length of the wrap, about 1 in 72,000.
TEST(SequenceWrap, AnAnswerAcrossTheWrapStillAcksTheNextSegments) {
  constexpr uint32_t kAnswer = 60000;
  LineHandler handler;
  handler.answer_size = kAnswer;
  Sink sink;
  TcpEndpoint ep{KeepAlive::Config(), &handler, &sink};
  Client cl{false, 40200};
  uint32_t isn = 0, s = 0;
  bool found = false;
  for (uint32_t i = 0; i < 3'000'000 && !found; ++i) {
    isn = i * 2654435761u;
    ASSERT_TRUE(ep.OnFrame(cl.Frame(isn, 0, kSyn), 0));
    s = sink.got.back().seq;
    sink.got.clear();
    sink.frames.clear();
    found = s + 1 > UINT32_MAX - kAnswer;  // the answer's bytes [s + 1, s + 1 + kAnswer) wrap
  }
  ASSERT_TRUE(found) << "no SYN cookie near the wrap in 3 million tries";
  ASSERT_EQ(ep.connections(), 0u);

  ep.OnFrame(cl.Frame(isn + 1, s + 1, kAck | kPsh, "a\n"), 1);
  uint32_t bytes = 0;
  for (const SegmentView& seg : sink.got) {
    EXPECT_EQ(seg.seq, s + 1 + bytes);
    bytes += static_cast<uint32_t>(seg.payload.size());
  }
  ASSERT_EQ(bytes, kAnswer);
  const uint32_t end = s + 1 + kAnswer;  // wrapped
  ASSERT_LT(end, s);

  // Half a request, acknowledging none of the answer yet: only ACKed.
  const size_t sent = sink.got.size();
  ep.OnFrame(cl.Frame(isn + 3, s + 1, kAck | kPsh, "b"), 2);
  ASSERT_EQ(sink.got.size(), sent + 1);
  EXPECT_EQ(sink.got.back().payload.size(), 0u);
  EXPECT_EQ(sink.got.back().ack, isn + 4);
  EXPECT_EQ(sink.got.back().seq, end);

  // The answer acknowledged and the request completed: the next answer begins past the wrap.
  ep.OnFrame(cl.Frame(isn + 4, end, kAck | kPsh, "\n"), 3);
  ASSERT_GT(sink.got.size(), sent + 1);
  EXPECT_EQ(sink.got[sent + 1].seq, end);
  EXPECT_EQ(sink.got[sent + 1].payload.size(), 1388u);  // MSS 1400 less the timestamps
  EXPECT_EQ(ep.stats().responses, 2u);
  EXPECT_EQ(ep.stats().retransmissions, 0u);
}

}  // namespace
}  // namespace onepass::xdp
