// The DNS frontend's protocol half with no sockets: queries in, datagrams for backends out,
// backend replies in, client answers out; deadlines with a fake clock.
#include "handlers/dns/frontend_handler.h"

#include <cstring>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/frontend_counters.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::Framed;
using testing::MakeQuery;

uint64_t Counter(const HandlerCounters& counters, FrontendCounter c) {
  return counters.Read(static_cast<size_t>(c));
}

class FrontendTest : public ::testing::Test {
 protected:
  explicit FrontendTest(int backends = 1) {
    // Real addresses: one of length 0 would be a vacant slot (--dns-backends-file).
    for (int i = 0; i < backends; ++i) {
      config_.backends.push_back(*ParseSocketAddress(absl::StrCat("192.0.2.1:", 5300 + i)));
    }
    config_.timeout = absl::Seconds(1);
    config_.udp_timeout = config_.timeout;  // no TCP retry but where a test asks for one
    config_.down_after = 2;
  }
  void Make() { handler_ = std::make_unique<FrontendHandler>(config_, counters_); }

  // One Process call on `bytes` for connection `connection`.
  Verdict Send(const std::vector<uint8_t>& bytes, uint64_t connection, OutputBuffer& out,
               bool encrypted = false) {
    RequestContext context;
    context.now = now_;
    context.upstream = &queue_;
    context.connection = connection;
    context.encrypted = encrypted;
    return handler_->Process(bytes, context, out);
  }
  // The backend's reply to datagram `i` of the queue: the query echoed with QR set and an
  // answer count of 0 (enough for matching; the bytes are passed through).
  std::vector<uint8_t> Reply(size_t i) {
    absl::Span<const uint8_t> query = queue_.bytes(i);
    std::vector<uint8_t> reply(query.begin(), query.end());
    reply[2] |= 0x80;
    return reply;
  }

  // The server's tick at now_: every expiry taken (answers dropped), due probes into `probes`.
  void Tick(UpstreamQueue& probes) {
    UpstreamAnswer answer;
    OutputBuffer expired(1 << 17);
    while (handler_->TakeExpired(now_, expired, answer, probes)) expired.Clear();
  }
  // Ticks, and lets every probe so sent go unanswered past its deadline, `rounds` times.
  void FailProbes(int rounds) {
    for (int i = 0; i < rounds; ++i) {
      UpstreamQueue probes;
      Tick(probes);
      now_ += config_.timeout;
      Tick(probes);
    }
  }

  // `reply` (no records yet) with one TXT record answering its question, TTL 300: an answer
  // the cache takes.
  static std::vector<uint8_t> WithTxtAnswer(std::vector<uint8_t> reply) {
    WriteU16(reply.data() + 6, 1);  // ANCOUNT
    const uint8_t record[] = {0xc0, 0x0c, 0, 16, 0, 1, 0, 0, 1, 44, 0, 4, 3, 'a', 'b', 'c'};
    reply.insert(reply.end(), std::begin(record), std::end(record));
    return reply;
  }

  FrontendConfig config_;
  HandlerCounters counters_{FrontendCounterCount(2)};  // TwoBackendsTest has the most
  std::unique_ptr<FrontendHandler> handler_;
  UpstreamQueue queue_;
  absl::Time now_ = absl::FromUnixSeconds(1'000'000);
};

TEST_F(FrontendTest, ForwardsWithNewIdAndRestoresClientId) {
  Make();
  OutputBuffer out(1 << 17);
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A", {.id = 0xbeef});
  const Verdict verdict = Send(Framed(query), 7, out);
  EXPECT_EQ(verdict.action, Action::kWaitUpstream);
  EXPECT_EQ(verdict.consumed, query.size() + 2);
  EXPECT_EQ(verdict.then, Action::kWriteThenClose);
  ASSERT_EQ(queue_.size(), 1u);
  absl::Span<const uint8_t> sent = queue_.bytes(0);
  // Everything but the ID passes untouched.
  EXPECT_TRUE(std::equal(sent.begin() + 2, sent.end(), query.begin() + 2, query.end()));
  std::vector<uint8_t> reply = Reply(0);
  OutputBuffer answer(1 << 17);
  const UpstreamAnswer result = handler_->TakeUpstreamReply(0, reply, now_, answer);
  ASSERT_TRUE(result.matched);
  EXPECT_EQ(result.connection, 7u);
  ASSERT_EQ(answer.size(), reply.size() + 2);
  EXPECT_EQ(ReadU16(answer.data()), reply.size());
  EXPECT_EQ(ReadU16(answer.data() + 2), 0xbeef);
  EXPECT_TRUE(std::equal(reply.begin() + 2, reply.end(), answer.data() + 4));
  EXPECT_EQ(Counter(counters_, FrontendCounter::kTruncatedPassed), 0u);
  // The same reply again: the ID is no longer in flight.
  OutputBuffer again(1 << 17);
  EXPECT_FALSE(handler_->TakeUpstreamReply(0, reply, now_, again).matched);
  EXPECT_EQ(Counter(counters_, FrontendCounter::kLateOrUnknownId), 1u);
}

TEST_F(FrontendTest, TenThousandInFlightEachAnswerToItsClientWithItsId) {
  Make();
  constexpr int kQueries = 10000;
  OutputBuffer out(1 << 17);
  std::vector<uint16_t> client_ids;
  std::vector<std::vector<uint8_t>> replies;
  for (int i = 0; i < kQueries; ++i) {
    const uint16_t id = static_cast<uint16_t>(i * 7919);
    client_ids.push_back(id);
    ASSERT_EQ(Send(Framed(MakeQuery("q" + std::to_string(i) + ".example.com", "A", {.id = id})),
                   1000 + i, out)
                  .action,
              Action::kWaitUpstream);
    replies.push_back(Reply(0));
    queue_.Clear();
  }
  EXPECT_EQ(handler_->backends().in_flight(), static_cast<size_t>(kQueries));
  // Forged: an ID not in flight, and a right ID with another question.
  std::vector<uint8_t> forged_id = replies[0];
  int forged_ids = 0;
  for (uint32_t candidate = 0; candidate < 65536 && forged_ids < 100; ++candidate) {
    WriteU16(forged_id.data(), static_cast<uint16_t>(candidate));
    OutputBuffer answer(1 << 17);
    // Only IDs not in flight are forged here (some candidates are real IDs).
    bool real = false;
    for (const auto& reply : replies) {
      if (ReadU16(reply.data()) == candidate) {
        real = true;
        break;
      }
    }
    if (real) continue;
    EXPECT_FALSE(handler_->TakeUpstreamReply(0, forged_id, now_, answer).matched);
    ++forged_ids;
  }
  std::vector<uint8_t> wrong_question = replies[1];
  wrong_question[12 + 1] ^= 0x01;  // 'q' -> 'p'
  OutputBuffer scratch(1 << 17);
  EXPECT_FALSE(handler_->TakeUpstreamReply(0, wrong_question, now_, scratch).matched);
  EXPECT_EQ(Counter(counters_, FrontendCounter::kLateOrUnknownId), 100u);
  EXPECT_EQ(Counter(counters_, FrontendCounter::kWrongQuestion), 1u);
  // Replies in reverse order: each to its own connection with its own ID.
  for (int i = kQueries - 1; i >= 0; --i) {
    OutputBuffer answer(1 << 17);
    const UpstreamAnswer result = handler_->TakeUpstreamReply(0, replies[i], now_, answer);
    ASSERT_TRUE(result.matched) << i;
    EXPECT_EQ(result.connection, static_cast<uint64_t>(1000 + i));
    EXPECT_EQ(ReadU16(answer.data() + 2), client_ids[i]);
  }
  EXPECT_EQ(handler_->backends().in_flight(), 0u);
  EXPECT_EQ(Counter(counters_, FrontendCounter::kAnswered), static_cast<uint64_t>(kQueries));
}

TEST_F(FrontendTest, PipelinedQueriesAllForwardedInOneCall) {
  Make();
  OutputBuffer out(1 << 17);
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 20; ++i) {
    std::vector<uint8_t> framed = Framed(MakeQuery("example.com", "SOA", {.id = uint16_t(i)}));
    bytes.insert(bytes.end(), framed.begin(), framed.end());
  }
  RequestContext context;
  context.now = now_;
  context.upstream = &queue_;
  context.connection = 3;
  context.keepalive = absl::Seconds(10);
  const Verdict verdict = handler_->Process(bytes, context, out);
  EXPECT_EQ(verdict.action, Action::kWaitUpstream);
  EXPECT_EQ(verdict.consumed, bytes.size());
  EXPECT_EQ(verdict.then, Action::kWriteThenRead);  // kept alive
  EXPECT_EQ(queue_.size(), 20u);
}

TEST_F(FrontendTest, TimeoutGivesServfailAndAProbeFailedProbesMarkDownAnsweredProbeMarksUp) {
  Make();
  OutputBuffer out(1 << 17);
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A", {.id = 0x1111});
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(Send(Framed(query), 10 + i, out).action, Action::kWaitUpstream);
  }
  queue_.Clear();
  UpstreamAnswer answer;
  UpstreamQueue probes;
  OutputBuffer expired(1 << 17);
  EXPECT_FALSE(handler_->TakeExpired(now_ + absl::Milliseconds(999), expired, answer, probes));
  now_ += absl::Seconds(1);
  for (int i = 0; i < 2; ++i) {
    expired.Clear();
    ASSERT_TRUE(handler_->TakeExpired(now_, expired, answer, probes));
    ASSERT_TRUE(answer.matched);
    EXPECT_EQ(answer.connection, static_cast<uint64_t>(10 + i));
    auto decoded = testing::DecodeResponse(expired.data() + 2, expired.size() - 2);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->rcode, kRcodeServFail);
    EXPECT_EQ(decoded->id, 0x1111);
  }
  // Client timeouts alone: suspect, still up, probed at once (one probe, not one per timeout).
  EXPECT_EQ(Counter(counters_, FrontendCounter::kMarkedDown), 0u);
  EXPECT_TRUE(handler_->backends().up(0));
  expired.Clear();
  EXPECT_FALSE(handler_->TakeExpired(now_, expired, answer, probes));
  EXPECT_EQ(probes.size(), 1u);
  // Two probes (down_after) unanswered: down.
  now_ += absl::Seconds(1);
  Tick(probes);
  EXPECT_TRUE(handler_->backends().up(0));
  EXPECT_EQ(Counter(counters_, FrontendCounter::kProbeFailed), 1u);
  EXPECT_EQ(probes.size(), 2u) << "the next probe goes at once";
  now_ += absl::Seconds(1);
  Tick(probes);
  EXPECT_FALSE(handler_->backends().up(0));
  EXPECT_EQ(Counter(counters_, FrontendCounter::kMarkedDown), 1u);
  // Down: SERVFAIL at once, nothing forwarded.
  EXPECT_EQ(Send(Framed(query), 20, out).action, Action::kWriteThenClose);
  EXPECT_TRUE(queue_.empty());
  EXPECT_EQ(Counter(counters_, FrontendCounter::kAllDownServfail), 1u);
  // The next probe's answer marks the backend up.
  probes.Clear();
  now_ += config_.probe_interval;
  Tick(probes);
  ASSERT_EQ(probes.size(), 1u);
  std::vector<uint8_t> probe_reply(probes.bytes(0).begin(), probes.bytes(0).end());
  probe_reply[2] |= 0x80;
  OutputBuffer none(1 << 17);
  EXPECT_FALSE(handler_->TakeUpstreamReply(0, probe_reply, now_, none).matched);
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(Counter(counters_, FrontendCounter::kMarkedUp), 1u);
  out.Clear();
  EXPECT_EQ(Send(Framed(query), 21, out).action, Action::kWaitUpstream);
}

// One client asking names the backend never answers (or a backend dropping queries for rate)
// cannot take it down for everyone: its probes are answered.
TEST_F(FrontendTest, ManyClientTimeoutsWithAnsweredProbesNeverMarkDown) {
  Make();
  OutputBuffer out(1 << 17);
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 5; ++i) {
      Send(Framed(MakeQuery("never.example.com", "A", {.id = static_cast<uint16_t>(i)})), i, out);
    }
    queue_.Clear();
    now_ += config_.timeout;
    UpstreamQueue probes;
    Tick(probes);
    for (size_t p = 0; p < probes.size(); ++p) {
      std::vector<uint8_t> reply(probes.bytes(p).begin(), probes.bytes(p).end());
      reply[2] |= 0x80;
      OutputBuffer none(1 << 17);
      handler_->TakeUpstreamReply(0, reply, now_, none);
    }
  }
  EXPECT_EQ(Counter(counters_, FrontendCounter::kTimeoutServfail), 100u);
  EXPECT_EQ(Counter(counters_, FrontendCounter::kMarkedDown), 0u);
  EXPECT_TRUE(handler_->backends().up(0));
}

// RFC 7766 §5 and RRL: a query unanswered over UDP for --dns-backend-udp-timeout-ms goes once
// more over TCP, same ID, same final deadline; the TCP answer reaches the client.
TEST_F(FrontendTest, UdpTimeoutRetriesOverTcpWithinTheDeadline) {
  config_.udp_timeout = absl::Milliseconds(300);
  Make();
  OutputBuffer out(1 << 17);
  ASSERT_EQ(Send(Framed(MakeQuery("slow.example.com", "A", {.id = 0x2222})), 9, out).action,
            Action::kWaitUpstream);
  ASSERT_EQ(queue_.size(), 1u);
  const std::vector<uint8_t> sent(queue_.bytes(0).begin(), queue_.bytes(0).end());
  UpstreamAnswer answer;
  UpstreamQueue probes;
  OutputBuffer retry(1 << 17);
  EXPECT_FALSE(handler_->TakeExpired(now_ + absl::Milliseconds(299), retry, answer, probes));
  ASSERT_TRUE(handler_->TakeExpired(now_ + absl::Milliseconds(300), retry, answer, probes));
  EXPECT_TRUE(answer.resend_over_stream);
  EXPECT_FALSE(answer.matched);
  EXPECT_EQ(answer.upstream, 0);
  ASSERT_EQ(retry.size(), sent.size() + 2);
  EXPECT_TRUE(std::equal(sent.begin(), sent.end(), retry.data() + 2)) << "the same query, same ID";
  EXPECT_EQ(Counter(counters_, FrontendCounter::kUdpTimeoutRetried), 1u);
  EXPECT_TRUE(probes.empty()) << "a UDP timeout alone is no sign of a dead backend";
  // Only once.
  retry.Clear();
  EXPECT_FALSE(handler_->TakeExpired(now_ + absl::Milliseconds(900), retry, answer, probes));
  std::vector<uint8_t> reply = sent;
  reply[2] |= 0x80;
  std::vector<uint8_t> framed = Framed(reply);
  OutputBuffer client(1 << 17);
  const UpstreamAnswer taken =
      handler_->TakeUpstreamStreamReply(0, framed, now_ + absl::Milliseconds(400), client);
  EXPECT_TRUE(taken.matched);
  EXPECT_EQ(taken.connection, 9u);
  EXPECT_EQ(ReadU16(client.data() + 2), 0x2222);
}

TEST_F(FrontendTest, AFullUdpAnswerLateAfterTheTcpRetryStillCounts) {
  config_.udp_timeout = absl::Milliseconds(300);
  Make();
  OutputBuffer out(1 << 17);
  Send(Framed(MakeQuery("slow.example.com", "A", {.id = 0x3333})), 4, out);
  const std::vector<uint8_t> reply = Reply(0);
  UpstreamAnswer answer;
  UpstreamQueue probes;
  OutputBuffer retry(1 << 17);
  ASSERT_TRUE(handler_->TakeExpired(now_ + absl::Milliseconds(300), retry, answer, probes));
  ASSERT_TRUE(answer.resend_over_stream);
  // A TC=1 UDP answer now is not taken (the TCP one is awaited); a full one is.
  std::vector<uint8_t> truncated = reply;
  truncated[2] |= 0x02;
  OutputBuffer client(1 << 17);
  EXPECT_FALSE(handler_->TakeUpstreamReply(0, truncated, now_, client).matched);
  const UpstreamAnswer taken = handler_->TakeUpstreamReply(0, reply, now_, client);
  EXPECT_TRUE(taken.matched);
  EXPECT_EQ(taken.connection, 4u);
}

// Our own SERVFAIL (deadline, then every backend down) to a query with EDNS carries an OPT
// with EDE 22 "No Reachable Authority" (RFC 8914 §4.23) and the query's DO; without EDNS, none.
TEST_F(FrontendTest, OwnServfailCarriesEde22OnlyForEdnsQueries) {
  config_.down_after = 1;
  Make();
  OutputBuffer out(1 << 17);
  const std::vector<uint8_t> edns =
      MakeQuery("www.example.com", "A", {.id = 1, .edns = true, .do_bit = true});
  ASSERT_EQ(Send(Framed(edns), 1, out).action, Action::kWaitUpstream);
  UpstreamAnswer answer;
  UpstreamQueue probes;
  OutputBuffer expired(1 << 17);
  now_ += absl::Seconds(1);
  ASSERT_TRUE(handler_->TakeExpired(now_, expired, answer, probes));
  auto timed_out = testing::DecodeResponse(expired.data() + 2, expired.size() - 2);
  ASSERT_TRUE(timed_out.ok()) << timed_out.status();
  EXPECT_EQ(timed_out->rcode, kRcodeServFail);
  EXPECT_TRUE(timed_out->has_opt);
  EXPECT_TRUE(timed_out->opt_do);
  EXPECT_EQ(timed_out->opt_options, std::vector<std::string>{"15:0016"});
  FailProbes(1);  // down_after 1
  ASSERT_FALSE(handler_->backends().up(0));
  OutputBuffer down(1 << 17);
  EXPECT_EQ(Send(Framed(edns), 2, down).action, Action::kWriteThenClose);
  auto all_down = testing::DecodeResponse(down.data() + 2, down.size() - 2);
  ASSERT_TRUE(all_down.ok()) << all_down.status();
  EXPECT_EQ(all_down->rcode, kRcodeServFail);
  EXPECT_EQ(all_down->opt_options, std::vector<std::string>{"15:0016"});
  OutputBuffer plain(1 << 17);
  Send(Framed(MakeQuery("www.example.com", "A")), 3, plain);
  auto no_edns = testing::DecodeResponse(plain.data() + 2, plain.size() - 2);
  ASSERT_TRUE(no_edns.ok()) << no_edns.status();
  EXPECT_EQ(no_edns->rcode, kRcodeServFail);
  EXPECT_FALSE(no_edns->has_opt);
}

// RFC 8467 on the frontend's own answers: the SERVFAIL of a padded query from an encrypted
// connection is padded to 468 bytes, at the deadline (the connection's encryption kept with the
// query in flight) and at once when every backend is down; from plain TCP it is not. A
// backend's answer is passed through as it is, padded or not by the backend.
TEST_F(FrontendTest, OwnServfailPaddedOnlyForPaddedQueriesOverTls) {
  config_.down_after = 1;
  Make();
  const std::vector<uint8_t> query =
      MakeQuery("www.example.com", "A", {.id = 1, .edns = true, .padding = 0});
  struct Sent {
    uint64_t connection;
    bool encrypted;
    size_t padded_to;  // 0: not padded
  };
  OutputBuffer out(1 << 17);
  for (const Sent& sent : {Sent{1, true, 468}, Sent{2, false, 0}}) {
    ASSERT_EQ(Send(Framed(query), sent.connection, out, sent.encrypted).action,
              Action::kWaitUpstream);
  }
  now_ += absl::Seconds(1);
  UpstreamQueue probes;
  for (int i = 0; i < 2; ++i) {
    UpstreamAnswer answer;
    OutputBuffer expired(1 << 17);
    ASSERT_TRUE(handler_->TakeExpired(now_, expired, answer, probes));
    auto r = testing::DecodeResponse(expired.data() + 2, expired.size() - 2);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->rcode, kRcodeServFail);
    if (answer.connection == 1) {
      EXPECT_EQ(expired.size() - 2, 468u);
      ASSERT_EQ(r->opt_options.size(), 2u);
      EXPECT_EQ(r->opt_options[1].substr(0, 3), "12:");
    } else {
      EXPECT_EQ(answer.connection, 2u);
      EXPECT_EQ(r->opt_options, std::vector<std::string>{"15:0016"});
    }
  }
  FailProbes(1);
  ASSERT_FALSE(handler_->backends().up(0));
  OutputBuffer down(1 << 17);
  EXPECT_EQ(Send(Framed(query), 3, down, /*encrypted=*/true).action, Action::kWriteThenClose);
  EXPECT_EQ(down.size() - 2, 468u);
  OutputBuffer plain(1 << 17);
  EXPECT_EQ(Send(Framed(query), 4, plain, /*encrypted=*/false).action, Action::kWriteThenClose);
  EXPECT_LT(plain.size() - 2, 468u);
}

// A backend reply with TC=1: not for the client, whose TCP connection must never carry a
// truncated answer (RFC 7766 §5); the same query, same ID, goes to the same backend over TCP.
TEST_F(FrontendTest, TruncatedReplyIsRetriedOverTcpAndOnlyTheFullAnswerReachesTheClient) {
  Make();
  OutputBuffer out(1 << 17);
  Send(Framed(MakeQuery("big.example.com", "TXT", {.id = 5})), 1, out);
  const std::vector<uint8_t> sent(queue_.bytes(0).begin(), queue_.bytes(0).end());
  std::vector<uint8_t> truncated = Reply(0);
  truncated[2] |= 0x02;  // TC
  OutputBuffer retry(1 << 17);
  const UpstreamAnswer result = handler_->TakeUpstreamReply(0, truncated, now_, retry);
  EXPECT_FALSE(result.matched);
  EXPECT_TRUE(result.resend_over_stream);
  EXPECT_EQ(std::vector<uint8_t>(retry.contents().begin(), retry.contents().end()), Framed(sent));
  EXPECT_EQ(Counter(counters_, FrontendCounter::kTcpRetried), 1u);
  EXPECT_EQ(handler_->cache().size(), 0u);  // not the whole answer: not cached
  // A duplicate of the UDP answer: the query now waits for TCP.
  OutputBuffer none(1 << 17);
  EXPECT_FALSE(handler_->TakeUpstreamReply(0, truncated, now_, none).matched);
  EXPECT_TRUE(none.empty());
  // The full answer over TCP (framed, as the server's stream reader hands it on).
  const std::vector<uint8_t> full = WithTxtAnswer(Reply(0));
  OutputBuffer answer(1 << 17);
  const UpstreamAnswer tcp = handler_->TakeUpstreamStreamReply(0, Framed(full), now_, answer);
  ASSERT_TRUE(tcp.matched);
  EXPECT_EQ(tcp.connection, 1u);
  ASSERT_EQ(answer.size(), full.size() + 2);
  EXPECT_EQ(ReadU16(answer.data() + 2), 5);  // the client's ID
  EXPECT_TRUE(std::equal(full.begin() + 2, full.end(), answer.data() + 4));
  EXPECT_EQ(Counter(counters_, FrontendCounter::kTcpAnswered), 1u);
  EXPECT_EQ(Counter(counters_, FrontendCounter::kTruncatedPassed), 0u);
  EXPECT_EQ(handler_->cache().size(), 1u);  // the full answer may be cached
  // The same TCP answer again: no longer in flight.
  OutputBuffer again(1 << 17);
  EXPECT_FALSE(handler_->TakeUpstreamStreamReply(0, Framed(full), now_, again).matched);
}

// RFC 7766 §7: answers on one connection may come back in any order; each is matched by ID.
TEST_F(FrontendTest, TcpAnswersOutOfOrderEachReachItsClientWithItsId) {
  Make();
  OutputBuffer out(1 << 17);
  for (uint16_t i = 0; i < 3; ++i) {
    Send(Framed(MakeQuery(i == 1 ? "b.example.com" : "a.example.com", "TXT",
                          {.id = static_cast<uint16_t>(100 + i)})),
         10 + i, out);
  }
  ASSERT_EQ(queue_.size(), 3u);
  std::vector<std::vector<uint8_t>> full;
  for (size_t i = 0; i < 3; ++i) {
    std::vector<uint8_t> truncated = Reply(i);
    truncated[2] |= 0x02;
    OutputBuffer retry(1 << 17);
    ASSERT_TRUE(handler_->TakeUpstreamReply(0, truncated, now_, retry).resend_over_stream);
    full.push_back(Reply(i));
  }
  for (int i = 2; i >= 0; --i) {
    OutputBuffer answer(1 << 17);
    const UpstreamAnswer result =
        handler_->TakeUpstreamStreamReply(0, Framed(full[i]), now_, answer);
    ASSERT_TRUE(result.matched) << i;
    EXPECT_EQ(result.connection, 10u + i);
    EXPECT_EQ(ReadU16(answer.data() + 2), 100 + i);
  }
  EXPECT_EQ(Counter(counters_, FrontendCounter::kTcpAnswered), 3u);
}

TEST_F(FrontendTest, TcpAnswerForAQueryNotRetriedOrWithAnotherQuestionIsDropped) {
  Make();
  OutputBuffer out(1 << 17);
  Send(Framed(MakeQuery("www.example.com", "A", {.id = 9})), 3, out);
  std::vector<uint8_t> reply = Reply(0);
  OutputBuffer dropped(1 << 17);
  EXPECT_FALSE(handler_->TakeUpstreamStreamReply(0, Framed(reply), now_, dropped).matched);
  EXPECT_EQ(Counter(counters_, FrontendCounter::kLateOrUnknownId), 1u);
  // A frame whose prefix disagrees with its length is no reply at all.
  std::vector<uint8_t> bad = Framed(reply);
  bad.push_back(0);
  EXPECT_FALSE(handler_->TakeUpstreamStreamReply(0, bad, now_, dropped).matched);
  EXPECT_EQ(Counter(counters_, FrontendCounter::kMalformedReply), 1u);
  // Retried, then a TCP answer with another question: forged.
  std::vector<uint8_t> truncated = reply;
  truncated[2] |= 0x02;
  OutputBuffer retry(1 << 17);
  ASSERT_TRUE(handler_->TakeUpstreamReply(0, truncated, now_, retry).resend_over_stream);
  std::vector<uint8_t> forged = reply;
  forged[kHeaderBytes + 1] ^= 0x01;  // a letter of the QNAME, not just its case
  EXPECT_FALSE(handler_->TakeUpstreamStreamReply(0, Framed(forged), now_, dropped).matched);
  EXPECT_EQ(Counter(counters_, FrontendCounter::kWrongQuestion), 1u);
  OutputBuffer answer(1 << 17);
  EXPECT_TRUE(handler_->TakeUpstreamStreamReply(0, Framed(reply), now_, answer).matched);
}

// The retry keeps the query's deadline: no TCP answer by then is SERVFAIL, counted as a
// failed TCP retry.
TEST_F(FrontendTest, RetryWithoutTcpAnswerGetsServfailAtTheQueryDeadline) {
  Make();
  OutputBuffer out(1 << 17);
  Send(Framed(MakeQuery("big.example.com", "TXT", {.id = 44})), 8, out);
  std::vector<uint8_t> truncated = Reply(0);
  truncated[2] |= 0x02;
  OutputBuffer retry(1 << 17);
  ASSERT_TRUE(handler_->TakeUpstreamReply(0, truncated, now_, retry).resend_over_stream);
  UpstreamAnswer answer;
  UpstreamQueue probes;
  OutputBuffer expired(1 << 17);
  EXPECT_FALSE(handler_->TakeExpired(now_ + absl::Milliseconds(999), expired, answer, probes));
  ASSERT_TRUE(handler_->TakeExpired(now_ + absl::Seconds(1), expired, answer, probes));
  EXPECT_TRUE(answer.matched);
  EXPECT_EQ(answer.connection, 8u);
  auto decoded = testing::DecodeResponse(expired.data() + 2, expired.size() - 2);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->rcode, kRcodeServFail);
  EXPECT_EQ(decoded->id, 44);
  EXPECT_EQ(Counter(counters_, FrontendCounter::kTcpFailed), 1u);
  EXPECT_EQ(handler_->cache().size(), 0u);
}

// A backend that answers (even TC=1) is alive: a timeout before that answer and one of the TCP
// retry after it are not "consecutive" (down_after is 2 here).
TEST_F(FrontendTest, TruncatedAnswerResetsTheBackendsTimeoutCount) {
  Make();
  OutputBuffer out(1 << 17);
  UpstreamAnswer answer;
  UpstreamQueue probes;
  Send(Framed(MakeQuery("lost.example.com", "A", {.id = 1})), 1, out);
  OutputBuffer expired(1 << 17);
  ASSERT_TRUE(handler_->TakeExpired(now_ + absl::Seconds(1), expired, answer, probes));
  now_ += absl::Seconds(1);
  Send(Framed(MakeQuery("big.example.com", "TXT", {.id = 2})), 2, out);
  std::vector<uint8_t> truncated = Reply(1);
  truncated[2] |= 0x02;
  OutputBuffer retry(1 << 17);
  ASSERT_TRUE(handler_->TakeUpstreamReply(0, truncated, now_, retry).resend_over_stream);
  OutputBuffer expired_retry(1 << 17);
  ASSERT_TRUE(handler_->TakeExpired(now_ + absl::Seconds(1), expired_retry, answer, probes));
  EXPECT_EQ(Counter(counters_, FrontendCounter::kMarkedDown), 0u);
  EXPECT_FALSE(handler_->backends().AllDown());
}

TEST_F(FrontendTest, FactoryGivesTheServerDnsFramingForTheTcpPool) {
  config_.tcp_connections = 3;
  config_.tcp_idle_timeout = absl::Seconds(7);
  const FrontendHandlerFactory factory(config_);
  const UpstreamStreamConfig streams = factory.UpstreamStreams();
  ASSERT_NE(streams.frame_length, nullptr);
  EXPECT_EQ(streams.connections, 3);
  EXPECT_EQ(streams.idle_timeout, absl::Seconds(7));
  EXPECT_EQ(streams.io_timeout, config_.timeout);
  EXPECT_EQ(streams.max_frame_bytes, 2u + 65535u);
  const std::vector<uint8_t> frame = Framed(MakeQuery("www.example.com", "A"));
  EXPECT_EQ(streams.frame_length(frame), static_cast<ptrdiff_t>(frame.size()));
  EXPECT_EQ(streams.frame_length(absl::MakeSpan(frame).subspan(0, 5)), 0);
  const uint8_t too_short[] = {0, 11};
  EXPECT_EQ(streams.frame_length(absl::MakeConstSpan(too_short)), -1);
}

// A SIGHUP reload gives each worker a new handler: the queries in flight and the cache pass to
// it (ForwardingHandler::TakeOver), so a client waiting on a backend gets its answer, not the
// backstop.
TEST_F(FrontendTest, ReloadedHandlerTakesOverQueriesInFlightAndTheCache) {
  Make();
  OutputBuffer out(1 << 17);
  Send(Framed(MakeQuery("cached.example.com", "TXT", {.id = 1})), 1, out);
  OutputBuffer first(1 << 17);
  ASSERT_TRUE(handler_->TakeUpstreamReply(0, WithTxtAnswer(Reply(0)), now_, first).matched);
  ASSERT_EQ(handler_->cache().size(), 1u);
  EXPECT_EQ(Send(Framed(MakeQuery("waiting.example.com", "A", {.id = 0x1234})), 2, out).action,
            Action::kWaitUpstream);
  const std::vector<uint8_t> reply = Reply(1);

  FrontendHandler next(config_, counters_);
  next.TakeOver(*handler_);
  handler_.reset();
  EXPECT_EQ(next.backends().in_flight(), 1u);
  OutputBuffer answer(1 << 17);
  const UpstreamAnswer result = next.TakeUpstreamReply(0, reply, now_, answer);
  ASSERT_TRUE(result.matched);
  EXPECT_EQ(result.connection, 2u);
  EXPECT_EQ(ReadU16(answer.data() + 2), 0x1234);  // the client's ID
  // The cached answer is answered at once by the new handler.
  RequestContext context;
  context.now = now_;
  context.upstream = &queue_;
  context.connection = 3;
  OutputBuffer hit(1 << 17);
  const size_t sent_before = queue_.size();
  EXPECT_NE(
      next.Process(Framed(MakeQuery("cached.example.com", "TXT", {.id = 9})), context, hit).action,
      Action::kWaitUpstream);
  EXPECT_EQ(queue_.size(), sent_before);
  EXPECT_FALSE(hit.empty());
}

// Other backends (or limits) on reload: the in-flight table is not taken over (its IDs and
// deadlines belong to the old backends); the cache still is, its settings being the same.
TEST_F(FrontendTest, ReloadWithOtherBackendsStartsAnEmptyInFlightTable) {
  Make();
  OutputBuffer out(1 << 17);
  Send(Framed(MakeQuery("waiting.example.com", "A", {.id = 7})), 1, out);
  FrontendConfig other = config_;
  other.timeout = absl::Seconds(2);
  FrontendHandler next(other, counters_);
  next.TakeOver(*handler_);
  EXPECT_EQ(next.backends().in_flight(), 0u);
  EXPECT_EQ(handler_->backends().in_flight(), 1u);
  // What stayed behind is answered at once by the replaced handler (the worker delivers it
  // before the handler goes): SERVFAIL with the client's ID, not the server's 60 s backstop.
  OutputBuffer abandoned(1 << 17);
  UpstreamAnswer answer;
  ASSERT_TRUE(handler_->TakeAbandoned(now_, abandoned, answer));
  EXPECT_TRUE(answer.matched);
  EXPECT_EQ(answer.connection, 1u);
  ASSERT_GE(abandoned.size(), 2u + 12u);
  EXPECT_EQ(ReadU16(abandoned.data() + 2), 7);   // the client's ID
  EXPECT_EQ(abandoned.data()[2 + 3] & 0x0f, 2);  // RCODE SERVFAIL
  EXPECT_EQ(Counter(counters_, FrontendCounter::kReloadServfail), 1u);
  OutputBuffer none(1 << 17);
  EXPECT_FALSE(handler_->TakeAbandoned(now_, none, answer));  // one query, one answer
  EXPECT_EQ(handler_->backends().in_flight(), 0u);
}

TEST_F(FrontendTest, WindowFullGetsRefused) {
  config_.max_in_flight = 3;
  Make();
  OutputBuffer out(1 << 17);
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Send(Framed(query), 1, out).action, Action::kWaitUpstream);
  EXPECT_EQ(Send(Framed(query), 2, out).action, Action::kWriteThenClose);
  auto decoded = testing::DecodeResponse(out.data() + 2, out.size() - 2);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->rcode, kRcodeRefused);
}

class TwoBackendsTest : public FrontendTest {
 protected:
  TwoBackendsTest() : FrontendTest(2) {}
};

TEST_F(TwoBackendsTest, LeastOutstandingSpreadsAndSkipsADownBackend) {
  Make();
  OutputBuffer out(1 << 17);
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A");
  for (int i = 0; i < 10; ++i) Send(Framed(query), i, out);
  std::map<int, int> per_backend;
  for (size_t i = 0; i < queue_.size(); ++i) ++per_backend[queue_.upstream(i)];
  EXPECT_EQ(per_backend[0], 5);
  EXPECT_EQ(per_backend[1], 5);
  // Backend 1 never answers; backend 0 does.
  std::vector<std::vector<uint8_t>> replies;
  for (size_t i = 0; i < queue_.size(); ++i) {
    if (queue_.upstream(i) == 0) replies.push_back(Reply(i));
  }
  for (auto& reply : replies) {
    OutputBuffer answer(1 << 17);
    EXPECT_TRUE(handler_->TakeUpstreamReply(0, reply, now_, answer).matched);
  }
  queue_.Clear();
  now_ += absl::Seconds(2);
  UpstreamAnswer answer;
  UpstreamQueue probes;
  OutputBuffer expired(1 << 17);
  while (handler_->TakeExpired(now_, expired, answer, probes)) expired.Clear();
  FailProbes(config_.down_after);  // backend 1's probes, unanswered
  EXPECT_FALSE(handler_->backends().up(1));
  EXPECT_TRUE(handler_->backends().up(0));
  for (int i = 0; i < 10; ++i) Send(Framed(query), i, out);
  for (size_t i = 0; i < queue_.size(); ++i) EXPECT_EQ(queue_.upstream(i), 0);
  EXPECT_EQ(queue_.size(), 10u);
}

uint64_t Counter(const HandlerCounters& counters, int backend, BackendCounter c) {
  return counters.Read(BackendCounterIndex(backend, c));
}

// A reload whose backends file dropped backend 0 and kept backend 1 (--dns-backends-file:
// each backend in its slot): the query waiting on backend 1 passes to the new handler with its
// ID and deadline, and its answer reaches the client; the one waiting on backend 0 stays with
// the old handler, which answers it SERVFAIL at once (TakeAbandoned). Slot 0's counters start
// again from zero; slot 1's go on.
TEST_F(TwoBackendsTest, ReloadKeepsTheQueriesOfABackendThatStaysAndAbandonsARemovedOnes) {
  Make();
  OutputBuffer out(1 << 17);
  Send(Framed(MakeQuery("on-zero.example.com", "A", {.id = 10})), 1, out);
  Send(Framed(MakeQuery("on-one.example.com", "A", {.id = 11})), 2, out);
  ASSERT_EQ(queue_.size(), 2u);
  ASSERT_NE(queue_.upstream(0), queue_.upstream(1));
  const size_t on_one = queue_.upstream(0) == 1 ? 0 : 1;
  const std::vector<uint8_t> reply_one = Reply(on_one);
  const std::vector<uint8_t> reply_zero = Reply(1 - on_one);
  EXPECT_EQ(Counter(counters_, 0, BackendCounter::kForwarded), 1u);
  EXPECT_EQ(Counter(counters_, 1, BackendCounter::kForwarded), 1u);

  FrontendConfig reloaded = config_;
  reloaded.backends[0] = SocketAddress();  // vacant: removed from the file
  FrontendHandler next(reloaded, counters_);
  next.TakeOver(*handler_);
  EXPECT_EQ(next.backends().in_flight(), 1u);
  EXPECT_FALSE(next.backends().present(0));
  EXPECT_EQ(handler_->backends().in_flight(), 1u);
  EXPECT_EQ(Counter(counters_, 0, BackendCounter::kForwarded), 0u);
  EXPECT_EQ(Counter(counters_, 1, BackendCounter::kForwarded), 1u);

  OutputBuffer abandoned(1 << 17);
  UpstreamAnswer answer;
  ASSERT_TRUE(handler_->TakeAbandoned(now_, abandoned, answer));
  EXPECT_EQ(answer.connection, 1u);
  EXPECT_EQ(ReadU16(abandoned.data() + 2), 10);
  EXPECT_EQ(abandoned.data()[2 + 3] & 0x0f, 2);  // SERVFAIL
  OutputBuffer none(1 << 17);
  EXPECT_FALSE(handler_->TakeAbandoned(now_, none, answer));
  EXPECT_EQ(Counter(counters_, FrontendCounter::kReloadServfail), 1u);
  handler_.reset();

  // The removed backend's late reply matches nothing; the kept one's is answered.
  OutputBuffer late(1 << 17);
  EXPECT_FALSE(next.TakeUpstreamReply(0, reply_zero, now_, late).matched);
  OutputBuffer kept(1 << 17);
  const UpstreamAnswer result = next.TakeUpstreamReply(1, reply_one, now_, kept);
  ASSERT_TRUE(result.matched);
  EXPECT_EQ(result.connection, 2u);
  EXPECT_EQ(ReadU16(kept.data() + 2), 11);
  EXPECT_EQ(Counter(counters_, 1, BackendCounter::kAnswered), 1u);
  // New queries go to the backend that is left, never to the vacant slot, nor probes.
  queue_.Clear();
  RequestContext context;
  context.now = now_;
  context.upstream = &queue_;
  for (int i = 0; i < 4; ++i) {
    context.connection = 10 + i;
    OutputBuffer more(1 << 17);
    EXPECT_EQ(next.Process(Framed(MakeQuery("www.example.com", "A")), context, more).action,
              Action::kWaitUpstream);
  }
  ASSERT_EQ(queue_.size(), 4u);
  for (size_t i = 0; i < queue_.size(); ++i) EXPECT_EQ(queue_.upstream(i), 1);
  now_ += absl::Seconds(5);
  UpstreamQueue probes;
  OutputBuffer expired(1 << 17);
  while (next.TakeExpired(now_, expired, answer, probes)) expired.Clear();
  while (next.TakeExpired(now_, expired, answer, probes)) expired.Clear();
  for (size_t i = 0; i < probes.size(); ++i) EXPECT_EQ(probes.upstream(i), 1);
}

// The factory side of that reload: a backend that stays keeps its slot; a new one takes a slot
// vacant before, not the one just freed; the counters' labels follow.
TEST(FrontendFactory, ArrangeAfterKeepsTheSlotsOfBackendsThatStay) {
  auto address = [](const char* text) { return *ParseSocketAddress(text); };
  FrontendConfig first;
  first.backends = {address("192.0.2.1:53"), address("192.0.2.2:53"), SocketAddress(),
                    SocketAddress()};
  const FrontendHandlerFactory before(first);
  FrontendConfig second = first;  // as read from the file: file order, then vacant slots
  second.backends = {address("192.0.2.3:53"), address("192.0.2.2:53"), SocketAddress(),
                     SocketAddress()};
  FrontendHandlerFactory after(second);
  after.ArrangeAfter(before);
  const std::vector<SocketAddress>& slots = after.config().backends;
  ASSERT_EQ(slots.size(), 4u);
  EXPECT_EQ(slots[0].length, 0u);  // freed by this reload: left vacant for now
  EXPECT_EQ(slots[1].ToString(), "192.0.2.2:53");
  EXPECT_EQ(slots[2].ToString(), "192.0.2.3:53");
  EXPECT_EQ(slots[3].length, 0u);
  EXPECT_EQ(after.backend_count(), 2u);
  const absl::Span<const CounterSpec> specs = after.Counters();
  ASSERT_EQ(specs.size(), before.Counters().size());
  EXPECT_FALSE(Exported(specs[BackendCounterIndex(0, BackendCounter::kForwarded)]));
  EXPECT_EQ(specs[BackendCounterIndex(1, BackendCounter::kForwarded)].scope_value, "192.0.2.2:53");
  EXPECT_EQ(specs[BackendCounterIndex(2, BackendCounter::kForwarded)].scope_value, "192.0.2.3:53");
  const std::optional<ForwardingSpec> forwarding = after.Forwarding();
  ASSERT_TRUE(forwarding.has_value());
  EXPECT_EQ(forwarding->upstreams[2].ToString(), "192.0.2.3:53");

  // Newcomers fill the slots vacant before, in file order.
  FrontendConfig third = first;
  third.backends = {address("192.0.2.2:53"), address("192.0.2.3:53"), address("192.0.2.4:53"),
                    address("192.0.2.5:53")};
  FrontendHandlerFactory grown(third);
  grown.ArrangeAfter(after);
  EXPECT_EQ(grown.config().backends[0].ToString(), "192.0.2.4:53");
  EXPECT_EQ(grown.config().backends[1].ToString(), "192.0.2.2:53");
  EXPECT_EQ(grown.config().backends[2].ToString(), "192.0.2.3:53");
  EXPECT_EQ(grown.config().backends[3].ToString(), "192.0.2.5:53");
  // No slot vacant before: a newcomer takes the one just freed.
  FrontendConfig fourth = third;
  fourth.backends = {address("192.0.2.9:53"), address("192.0.2.2:53"), address("192.0.2.3:53"),
                     address("192.0.2.5:53")};
  FrontendHandlerFactory swapped(fourth);
  swapped.ArrangeAfter(grown);
  EXPECT_EQ(swapped.config().backends[0].ToString(), "192.0.2.9:53");
  EXPECT_EQ(swapped.config().backends[3].ToString(), "192.0.2.5:53");

  // --dns-backend naming one backend twice (no file): a reload keeps both, slot for slot.
  FrontendConfig twice;
  twice.backends = {address("192.0.2.1:53"), address("192.0.2.1:53")};
  const FrontendHandlerFactory started(twice);
  FrontendHandlerFactory again(twice);
  again.ArrangeAfter(started);
  EXPECT_EQ(again.backend_count(), 2u);
  EXPECT_EQ(again.config().backends[1].ToString(), "192.0.2.1:53");
}

TEST_F(TwoBackendsTest, CountsEachBackendApartAndItsDownState) {
  config_.udp_timeout = absl::Milliseconds(300);
  Make();
  OutputBuffer out(1 << 17);
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A");
  for (int i = 0; i < 4; ++i) Send(Framed(query), i, out);
  // Backend 0 answers one in full and one with TC=1; backend 1 answers nothing.
  std::vector<size_t> to_zero;
  for (size_t i = 0; i < queue_.size(); ++i) {
    if (queue_.upstream(i) == 0) to_zero.push_back(i);
  }
  ASSERT_EQ(to_zero.size(), 2u);
  OutputBuffer answer(1 << 17);
  EXPECT_TRUE(handler_->TakeUpstreamReply(0, Reply(to_zero[0]), now_, answer).matched);
  std::vector<uint8_t> truncated = Reply(to_zero[1]);
  truncated[2] |= 0x02;
  EXPECT_TRUE(handler_->TakeUpstreamReply(0, truncated, now_, answer).resend_over_stream);
  EXPECT_TRUE(
      handler_->TakeUpstreamStreamReply(0, Framed(Reply(to_zero[1])), now_, answer).matched);
  EXPECT_EQ(Counter(counters_, 0, BackendCounter::kForwarded), 2u);
  EXPECT_EQ(Counter(counters_, 1, BackendCounter::kForwarded), 2u);
  EXPECT_EQ(Counter(counters_, 0, BackendCounter::kAnswered), 2u);
  EXPECT_EQ(Counter(counters_, 0, BackendCounter::kTruncated), 1u);
  EXPECT_EQ(Counter(counters_, 1, BackendCounter::kTruncated), 0u);
  // Past the UDP deadline: backend 1's two go over TCP; past the final one, they fail.
  queue_.Clear();
  UpstreamQueue probes;
  now_ += config_.udp_timeout;
  Tick(probes);
  EXPECT_EQ(Counter(counters_, 1, BackendCounter::kUdpTimeout), 2u);
  EXPECT_EQ(Counter(counters_, 0, BackendCounter::kUdpTimeout), 0u);
  now_ += config_.timeout;
  Tick(probes);
  EXPECT_EQ(Counter(counters_, 0, BackendCounter::kTimeoutServfail), 0u);
  EXPECT_EQ(Counter(counters_, 1, BackendCounter::kTimeoutServfail), 2u);
  EXPECT_EQ(Counter(counters_, 0, BackendCounter::kProbesSent), 0u);
  // Both suspect, probed; backend 1's probes go unanswered until it is down.
  EXPECT_EQ(Counter(counters_, 0, BackendCounter::kDown), 0u);
  FailProbes(config_.down_after);
  EXPECT_FALSE(handler_->backends().up(1));
  EXPECT_GE(Counter(counters_, 1, BackendCounter::kProbesFailed),
            static_cast<uint64_t>(config_.down_after));
  EXPECT_GE(Counter(counters_, 1, BackendCounter::kProbesSent),
            Counter(counters_, 1, BackendCounter::kProbesFailed));
  EXPECT_EQ(Counter(counters_, 1, BackendCounter::kDown), 1u);
  // Its next probe answered: up, and the gauge with it.
  probes.Clear();
  now_ += config_.probe_interval;
  Tick(probes);
  std::vector<uint8_t> probe_reply;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (probes.upstream(i) == 1) probe_reply.assign(probes.bytes(i).begin(), probes.bytes(i).end());
  }
  ASSERT_FALSE(probe_reply.empty());
  probe_reply[2] |= 0x80;
  handler_->TakeUpstreamReply(1, probe_reply, now_, answer);
  EXPECT_TRUE(handler_->backends().up(1));
  EXPECT_EQ(Counter(counters_, 1, BackendCounter::kDown), 0u);
}

}  // namespace
}  // namespace onepass::dns
