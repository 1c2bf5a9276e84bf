// The DNS frontend's serve-stale paths (RFC 8767) with no sockets and a fake clock: the
// client-response timer (--dns-stale-answer-client-timeout-ms) answers with the stale entry
// while the query stays in flight and its late answer only refreshes the cache; a failed
// refresh (deadline, SERVFAIL) answers stale instead of SERVFAIL, and for the failure recheck
// window (--dns-stale-refresh-seconds) the stale answer goes out without asking.
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/frontend_counters.h"
#include "handlers/dns/frontend_handler.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::Framed;
using testing::MakeQuery;

constexpr uint64_t kConnection = 5;

class FrontendStaleTest : public ::testing::Test {
 protected:
  FrontendStaleTest() {
    config_.backends.push_back(*ParseSocketAddress("192.0.2.1:53"));  // length 0: vacant
    config_.timeout = absl::Seconds(1);
    config_.down_after = 100;               // probes here must not mark the backend down
    config_.udp_timeout = config_.timeout;  // no TCP retry: these tests are about the deadline
    config_.cache.serve_stale_seconds = 3600;
    config_.cache.stale_refresh_seconds = 30;
  }
  void Make() { handler_ = std::make_unique<FrontendHandler>(config_, counters_); }

  Verdict Ask(const std::vector<uint8_t>& query, OutputBuffer& out) {
    RequestContext context;
    context.now = now_;
    context.upstream = &queue_;
    context.connection = kConnection;
    return handler_->Process(Framed(query), context, out);
  }
  // The backend's answer to the last query queued: one TXT record with `ttl`, `rdata` (3
  // bytes), and `rcode`.
  std::vector<uint8_t> Reply(uint32_t ttl, const char* rdata, uint16_t rcode = 0) {
    absl::Span<const uint8_t> query = queue_.bytes(queue_.size() - 1);
    std::vector<uint8_t> reply(query.begin(), query.end());
    reply[2] |= 0x80;
    reply[3] = static_cast<uint8_t>((reply[3] & 0xf0) | rcode);
    if (rcode != 0) return reply;
    WriteU16(reply.data() + 6, 1);  // ANCOUNT
    const uint8_t record[] = {0xc0, 0x0c, 0, 16, 0, 1, 0, 0, 0, 0, 0, 4, 3};
    reply.insert(reply.end(), std::begin(record), std::end(record));
    WriteU32(reply.data() + reply.size() - 7, ttl);
    reply.insert(reply.end(), rdata, rdata + 3);
    return reply;
  }
  // Caches "abc" with TTL 300 for kName, then moves the clock past its expiry.
  void CacheThenExpire() {
    OutputBuffer out(1 << 17);
    ASSERT_EQ(Ask(MakeQuery(kName, "TXT"), out).action, Action::kWaitUpstream);
    OutputBuffer answer(1 << 17);
    ASSERT_TRUE(handler_->TakeUpstreamReply(0, Reply(300, "abc"), now_, answer).matched);
    now_ += absl::Seconds(301);
    queue_.Clear();
  }
  // TakeExpired at `at` into `out` (cleared first).
  bool Expire(absl::Time at, OutputBuffer& out, UpstreamAnswer& answer) {
    out.Clear();
    answer = UpstreamAnswer();
    return handler_->TakeExpired(at, out, answer, probes_);
  }
  // Asks for kName TXT with `id`, which the backend never answers, then runs the deadlines
  // `after` from now into `expired`.
  bool AskThenExpire(uint16_t id, absl::Duration after, OutputBuffer& expired,
                     UpstreamAnswer& answer) {
    OutputBuffer out(1 << 17);
    Ask(MakeQuery(kName, "TXT", {.id = id}), out);
    return Expire(now_ + after, expired, answer);
  }
  uint64_t Count(FrontendCounter c) const { return counters_.Read(static_cast<size_t>(c)); }

  // The answer framed in `out`: its ID, RCODE, and its one record's "TTL rdata".
  struct Seen {
    uint16_t id = 0;
    int rcode = -1;
    std::string record;
  };
  static Seen Decode(const OutputBuffer& out) {
    Seen seen;
    auto decoded = testing::DecodeResponse(out.data() + 2, out.size() - 2);
    EXPECT_TRUE(decoded.ok()) << decoded.status();
    if (!decoded.ok()) return seen;
    seen.id = decoded->id;
    seen.rcode = decoded->rcode;
    if (!decoded->answer.empty()) {
      std::vector<std::string> fields = absl::StrSplit(decoded->answer[0], ' ');
      seen.record = fields[1] + " " + fields.back();
    }
    return seen;
  }

  static constexpr char kName[] = "stale.example.com";
  FrontendConfig config_;
  HandlerCounters counters_{FrontendCounterCount(1)};
  std::unique_ptr<FrontendHandler> handler_;
  UpstreamQueue queue_;
  UpstreamQueue probes_;
  absl::Time now_ = absl::FromUnixSeconds(1'000'000);
};

TEST_F(FrontendStaleTest, ClientTimerAnswersStaleThenTheLateAnswerOnlyRefreshesTheCache) {
  config_.stale_client_timeout = absl::Milliseconds(300);
  Make();
  CacheThenExpire();
  OutputBuffer out(1 << 17);
  ASSERT_EQ(Ask(MakeQuery(kName, "TXT", {.id = 0x1111}), out).action, Action::kWaitUpstream);
  ASSERT_EQ(queue_.size(), 1u) << "an expired answer is asked for again";
  UpstreamAnswer answer;
  OutputBuffer expired(1 << 17);
  EXPECT_FALSE(Expire(now_ + absl::Milliseconds(299), expired, answer));
  ASSERT_TRUE(Expire(now_ + absl::Milliseconds(300), expired, answer));
  ASSERT_TRUE(answer.matched);
  EXPECT_EQ(answer.connection, kConnection);
  const Seen stale = Decode(expired);
  EXPECT_EQ(stale.id, 0x1111);
  EXPECT_EQ(stale.rcode, 0);
  EXPECT_EQ(stale.record, "30 \"abc\"") << "the stale answer, TTL 30 (RFC 8767 §4)";
  EXPECT_EQ(Count(FrontendCounter::kStaleClientTimeout), 1u);
  EXPECT_FALSE(Expire(now_ + absl::Milliseconds(300), expired, answer)) << "one stale answer";

  // The backend's answer, late: the cache takes it, the client does not get it again.
  OutputBuffer late(1 << 17);
  const UpstreamAnswer refreshed =
      handler_->TakeUpstreamReply(0, Reply(600, "new"), now_ + absl::Milliseconds(500), late);
  EXPECT_FALSE(refreshed.matched);
  EXPECT_TRUE(late.empty());
  EXPECT_EQ(Count(FrontendCounter::kRefreshedAfterStale), 1u);
  EXPECT_EQ(handler_->backends().in_flight(), 0u);
  EXPECT_FALSE(Expire(now_ + absl::Seconds(2), expired, answer)) << "no SERVFAIL later";
  // The refreshed answer, fresh, from the cache.
  OutputBuffer hit(1 << 17);
  queue_.Clear();
  EXPECT_EQ(Ask(MakeQuery(kName, "TXT", {.id = 0x2222}), hit).action, Action::kWriteThenClose);
  EXPECT_TRUE(queue_.empty());
  EXPECT_EQ(Decode(hit).record, "600 \"new\"");
}

TEST_F(FrontendStaleTest, BackendAnswerBeforeTheClientTimerGoesToTheClientAndNoStaleFollows) {
  config_.stale_client_timeout = absl::Milliseconds(300);
  Make();
  CacheThenExpire();
  OutputBuffer out(1 << 17);
  Ask(MakeQuery(kName, "TXT", {.id = 0x3333}), out);
  OutputBuffer reply(1 << 17);
  ASSERT_TRUE(handler_->TakeUpstreamReply(0, Reply(600, "new"), now_, reply).matched);
  EXPECT_EQ(Decode(reply).record, "600 \"new\"");
  UpstreamAnswer answer;
  OutputBuffer expired(1 << 17);
  EXPECT_FALSE(Expire(now_ + absl::Seconds(2), expired, answer));
  EXPECT_EQ(Count(FrontendCounter::kStaleClientTimeout), 0u);
}

TEST_F(FrontendStaleTest, ClientTimerOffOrNothingStaleTheQueryWaitsForTheBackend) {
  Make();  // stale_client_timeout zero: off
  CacheThenExpire();
  OutputBuffer out(1 << 17);
  Ask(MakeQuery(kName, "TXT"), out);
  Ask(MakeQuery("other.example.com", "TXT"), out);  // nothing cached
  UpstreamAnswer answer;
  OutputBuffer expired(1 << 17);
  EXPECT_FALSE(Expire(now_ + absl::Milliseconds(999), expired, answer));
  EXPECT_EQ(handler_->backends().in_flight(), 2u);
}

TEST_F(FrontendStaleTest, DeadlineGivesStaleNotServfailThenStaleUnaskedForTheRecheckWindow) {
  Make();
  CacheThenExpire();
  UpstreamAnswer answer;
  OutputBuffer expired(1 << 17);
  ASSERT_TRUE(AskThenExpire(0x4444, absl::Seconds(1), expired, answer));
  ASSERT_TRUE(answer.matched);
  const Seen stale = Decode(expired);
  EXPECT_EQ(stale.rcode, 0) << "RFC 8767 §5: stale rather than SERVFAIL";
  EXPECT_EQ(stale.id, 0x4444);
  EXPECT_EQ(stale.record, "30 \"abc\"");
  EXPECT_EQ(Count(FrontendCounter::kTimeoutServfail), 0u);
  EXPECT_EQ(Count(FrontendCounter::kStaleRefreshFailed), 1u);

  // RFC 8767 §4: within 30 s of the failure, answered at once, nothing sent.
  now_ += absl::Seconds(1) + absl::Seconds(29);
  queue_.Clear();
  OutputBuffer unasked(1 << 17);
  EXPECT_EQ(Ask(MakeQuery(kName, "TXT", {.id = 0x5555}), unasked).action, Action::kWriteThenClose);
  EXPECT_TRUE(queue_.empty());
  EXPECT_EQ(Decode(unasked).record, "30 \"abc\"");
  EXPECT_EQ(Count(FrontendCounter::kStaleRefreshFailed), 2u);
  // Past the window: asked again.
  now_ += absl::Seconds(1);
  OutputBuffer again(1 << 17);
  EXPECT_EQ(Ask(MakeQuery(kName, "TXT"), again).action, Action::kWaitUpstream);
  EXPECT_EQ(queue_.size(), 1u);
}

TEST_F(FrontendStaleTest, RecheckWindowZeroAsksEveryTime) {
  config_.cache.stale_refresh_seconds = 0;
  Make();
  CacheThenExpire();
  UpstreamAnswer answer;
  OutputBuffer expired(1 << 17);
  ASSERT_TRUE(AskThenExpire(0x1234, absl::Seconds(1), expired, answer));
  EXPECT_EQ(Decode(expired).record, "30 \"abc\"");
  now_ += absl::Seconds(1);  // the time of the failure
  queue_.Clear();
  OutputBuffer again(1 << 17);
  EXPECT_EQ(Ask(MakeQuery(kName, "TXT"), again).action, Action::kWaitUpstream);
}

TEST_F(FrontendStaleTest, BackendServfailGivesTheStaleAnswer) {
  Make();
  CacheThenExpire();
  OutputBuffer out(1 << 17);
  Ask(MakeQuery(kName, "TXT", {.id = 0x6666}), out);
  OutputBuffer reply(1 << 17);
  const UpstreamAnswer answer =
      handler_->TakeUpstreamReply(0, Reply(0, nullptr, kRcodeServFail), now_, reply);
  ASSERT_TRUE(answer.matched);
  EXPECT_EQ(answer.connection, kConnection);
  const Seen stale = Decode(reply);
  EXPECT_EQ(stale.rcode, 0);
  EXPECT_EQ(stale.id, 0x6666);
  EXPECT_EQ(stale.record, "30 \"abc\"");
  EXPECT_EQ(handler_->backends().in_flight(), 0u);
}

TEST_F(FrontendStaleTest, WithoutServeStaleTheDeadlineIsServfail) {
  config_.cache.serve_stale_seconds = 0;
  Make();
  CacheThenExpire();
  UpstreamAnswer answer;
  OutputBuffer expired(1 << 17);
  ASSERT_TRUE(AskThenExpire(0x1234, absl::Seconds(1), expired, answer));
  EXPECT_EQ(Decode(expired).rcode, kRcodeServFail);
}

TEST_F(FrontendStaleTest, StaleAnsweredQueryWhoseBackendNeverAnswersGetsNoSecondAnswer) {
  config_.stale_client_timeout = absl::Milliseconds(300);
  Make();
  CacheThenExpire();
  UpstreamAnswer answer;
  OutputBuffer expired(1 << 17);
  ASSERT_TRUE(AskThenExpire(0x1234, absl::Milliseconds(300), expired, answer));
  ASSERT_TRUE(answer.matched);
  ASSERT_TRUE(Expire(now_ + absl::Seconds(1), expired, answer)) << "the deadline is taken";
  EXPECT_FALSE(answer.matched) << "the client had its answer";
  EXPECT_TRUE(expired.empty());
  EXPECT_EQ(handler_->backends().in_flight(), 0u);
  EXPECT_EQ(Count(FrontendCounter::kTimeoutServfail), 0u);
}

}  // namespace
}  // namespace onepass::dns
