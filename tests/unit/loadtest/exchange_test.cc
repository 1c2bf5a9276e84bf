// The client's per-connection state machine (loadtest/exchange.h) without sockets: each test
// plays the driver, reporting connects, sends, receives, closes, errors and timeouts, and checks
// what the machine asks for next and what it counted. Every transaction must end exactly once.
#include "loadtest/exchange.h"

#include <cerrno>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "loadtest/dns_request.h"
#include "tests/unit/loadtest/dns_answer.h"

namespace onepass::load {
namespace {

// One DNS request per frame of `stream` (the queries the machine sent), in order.
std::vector<std::string> Frames(absl::string_view stream) {
  std::vector<std::string> frames;
  while (stream.size() >= 2) {
    size_t length = 2 + ((static_cast<uint8_t>(stream[0]) << 8) | static_cast<uint8_t>(stream[1]));
    frames.emplace_back(stream.substr(0, length));
    stream.remove_prefix(length);
  }
  return frames;
}

class ExchangeTest : public ::testing::Test {
 protected:
  void SetUp() override { MakeMachine(1, 1); }

  void MakeMachine(int queries, int pipeline) {
    auto client = DnsClient::Create({{"www.example.com.", "A"}}, DnsCheckConfig{});
    ASSERT_TRUE(client.ok()) << client.status();
    protocol_ = std::move(*client);
    config_.queries_per_conn = queries;
    config_.pipeline = pipeline;
    config_.max_response_bytes = 4096;
    requests_ = std::make_unique<RequestSource>(protocol_.get(), 42);
    stats_ = ThreadStats();
    exchange_ = std::make_unique<Exchange>(&config_, requests_.get(), &stats_);
  }

  // Begins, connects and sends everything queued; returns what was sent.
  std::string Open() {
    exchange_->Begin(/*origin_ns=*/1000, /*now_ns=*/1000);
    exchange_->OnConnected(0, 2000);
    return SendAll();
  }
  std::string SendAll() {
    std::string sent(exchange_->unsent());
    exchange_->OnSent(sent.size(), 3000);
    EXPECT_TRUE(exchange_->unsent().empty());
    return sent;
  }
  // Exactly one outcome per connection begun (and ended).
  void ExpectCountedOnce() { EXPECT_EQ(stats_.started, stats_.ok + stats_.errors_total()); }
  uint64_t Errors(ErrorKind kind) const { return stats_.errors[static_cast<int>(kind)]; }

  std::unique_ptr<DnsClient> protocol_;
  ExchangeConfig config_;
  std::unique_ptr<RequestSource> requests_;
  ThreadStats stats_;
  std::unique_ptr<Exchange> exchange_;
};

TEST_F(ExchangeTest, OneQueryOneAnswer) {
  std::string request = Open();
  EXPECT_TRUE(exchange_->wants_receive());
  exchange_->OnReceived(AnswerTo(request), 9000);
  EXPECT_FALSE(exchange_->active());
  EXPECT_TRUE(exchange_->succeeded());
  EXPECT_EQ(stats_.ok, 1u);
  EXPECT_EQ(stats_.queries_sent, 1u);
  EXPECT_EQ(stats_.queries_ok, 1u);
  EXPECT_EQ(stats_.latency.count(), 1u);
  EXPECT_EQ(stats_.bytes_sent, request.size());
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, ShortReadsGiveTheSameVerdictAtEverySplit) {
  // Whole, byte by byte, and at every two-way split: one success each time.
  for (size_t cut = 0; cut <= 200; ++cut) {
    MakeMachine(1, 1);
    std::string answer = AnswerTo(Open());
    if (cut > answer.size()) break;
    if (cut == 0) {
      for (char byte : answer) exchange_->OnReceived(std::string(1, byte), 9000);
    } else {
      exchange_->OnReceived(answer.substr(0, cut), 9000);
      exchange_->OnReceived(answer.substr(cut), 9000);
    }
    EXPECT_TRUE(exchange_->succeeded()) << "cut " << cut;
    EXPECT_EQ(stats_.ok, 1u) << "cut " << cut;
    ExpectCountedOnce();
  }
}

TEST_F(ExchangeTest, ConnectRefusedIsRefused) {
  exchange_->Begin(1000, 1000);
  exchange_->OnConnected(ECONNREFUSED, 2000);
  EXPECT_FALSE(exchange_->active());
  EXPECT_EQ(Errors(ErrorKind::kRefused), 1u);
  // Reports after the end change nothing.
  exchange_->OnReceived("xx", 3000);
  exchange_->OnTimeout(4000);
  EXPECT_EQ(stats_.errors_total(), 1u);
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, LocalAndConnectErrorsKeepTheirText) {
  exchange_->Begin(1000, 1000);
  exchange_->OnConnected(EMFILE, 2000);
  exchange_->Begin(1000, 1000);
  exchange_->OnConnected(ENETUNREACH, 2000);
  exchange_->Begin(1000, 1000);
  exchange_->OnConnected(EADDRNOTAVAIL, 2000);
  EXPECT_EQ(Errors(ErrorKind::kLocalError), 1u);
  EXPECT_EQ(Errors(ErrorKind::kConnectError), 1u);
  EXPECT_EQ(Errors(ErrorKind::kNoSourcePort), 1u);
  ASSERT_EQ(stats_.local_error_samples.size(), 2u);
  EXPECT_NE(stats_.local_error_samples[0].find("open files"), std::string::npos);
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, ResetMidAnswerIsReset) {
  std::string answer = AnswerTo(Open());
  exchange_->OnReceived(answer.substr(0, 10), 9000);
  EXPECT_TRUE(exchange_->active());
  exchange_->OnError(ECONNRESET, 9500);
  EXPECT_FALSE(exchange_->active());
  EXPECT_EQ(Errors(ErrorKind::kReset), 1u);
  EXPECT_EQ(stats_.bytes_received, 10u);
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, CloseMidAnswerIsShort) {
  std::string answer = AnswerTo(Open());
  exchange_->OnReceived(answer.substr(0, answer.size() - 1), 9000);
  exchange_->OnPeerClosed(9500);
  EXPECT_EQ(Errors(ErrorKind::kShort), 1u);
  ASSERT_EQ(stats_.reasons.size(), 1u);
  EXPECT_STREQ(stats_.reasons[0].reason, "closed inside the message");  // the DNS checker's
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, TimeoutEndsItOnceWhateverComesLater) {
  std::string request = Open();
  exchange_->OnTimeout(5000);
  EXPECT_FALSE(exchange_->active());
  EXPECT_FALSE(exchange_->wants_receive());
  exchange_->OnReceived(AnswerTo(request), 9000);  // a late answer: not counted ok
  exchange_->OnError(ECONNRESET, 9100);
  EXPECT_EQ(Errors(ErrorKind::kTimeout), 1u);
  EXPECT_EQ(stats_.ok, 0u);
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, WrongIdIsWrongWithItsReason) {
  std::string request = Open();
  exchange_->OnReceived(AnswerTo(request, /*id_delta=*/1), 9000);
  EXPECT_EQ(Errors(ErrorKind::kWrong), 1u);
  ASSERT_EQ(stats_.samples.size(), 1u);
  EXPECT_NE(stats_.samples[0].find("ID"), std::string::npos) << stats_.samples[0];
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, AnswerOverTheLimitIsWrong) {
  config_.max_response_bytes = 20;
  std::string answer = AnswerTo(Open());
  exchange_->OnReceived(answer.substr(0, 15), 9000);
  exchange_->OnReceived(answer.substr(15), 9000);
  EXPECT_EQ(Errors(ErrorKind::kWrong), 1u);
  EXPECT_STREQ(stats_.reasons[0].reason, "response too large");
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, ShortSendLeavesTheRestToSend) {
  exchange_->Begin(1000, 1000);
  exchange_->OnConnected(0, 2000);
  std::string request(exchange_->unsent());
  exchange_->OnSent(5, 2500);
  EXPECT_EQ(exchange_->unsent(), request.substr(5));
  exchange_->OnSent(request.size() - 5, 2600);
  EXPECT_TRUE(exchange_->unsent().empty());
  exchange_->OnReceived(AnswerTo(request), 9000);
  EXPECT_TRUE(exchange_->succeeded());
}

TEST_F(ExchangeTest, SequentialQueriesOneAfterTheOther) {
  MakeMachine(3, 1);
  std::string first = Open();
  EXPECT_EQ(Frames(first).size(), 1u);
  exchange_->OnReceived(AnswerTo(first), 9000);
  EXPECT_TRUE(exchange_->active());
  std::string second = SendAll();
  ASSERT_EQ(Frames(second).size(), 1u);
  EXPECT_NE(second, first);  // a fresh ID
  exchange_->OnReceived(AnswerTo(second), 9100);
  std::string third = SendAll();
  exchange_->OnReceived(AnswerTo(third), 9200);
  EXPECT_TRUE(exchange_->succeeded());
  EXPECT_EQ(stats_.ok, 1u);
  EXPECT_EQ(stats_.queries_sent, 3u);
  EXPECT_EQ(stats_.queries_ok, 3u);
  EXPECT_EQ(stats_.query_latency.count(), 3u);
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, PipelinedAnswersInAnyOrderAndInOnePiece) {
  MakeMachine(6, 3);
  std::vector<std::string> window = Frames(Open());
  ASSERT_EQ(window.size(), 3u);
  // Out of order, all three in one piece.
  exchange_->OnReceived(AnswerTo(window[2]) + AnswerTo(window[0]) + AnswerTo(window[1]), 9000);
  EXPECT_TRUE(exchange_->active());
  std::vector<std::string> next = Frames(SendAll());
  ASSERT_EQ(next.size(), 3u);  // the next window once this one is answered
  // Split across a message boundary and inside one.
  std::string rest = AnswerTo(next[1]) + AnswerTo(next[0]) + AnswerTo(next[2]);
  exchange_->OnReceived(rest.substr(0, 7), 9100);
  exchange_->OnReceived(rest.substr(7, 60), 9100);
  exchange_->OnReceived(rest.substr(67), 9100);
  EXPECT_TRUE(exchange_->succeeded());
  EXPECT_EQ(stats_.queries_ok, 6u);
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, ServerClosingAfterOneOfSeveralIsShort) {
  MakeMachine(3, 1);
  std::string first = Open();
  exchange_->OnReceived(AnswerTo(first), 9000);
  SendAll();
  exchange_->OnPeerClosed(9100);
  EXPECT_EQ(Errors(ErrorKind::kShort), 1u);
  EXPECT_EQ(stats_.queries_ok, 1u);
  ASSERT_EQ(stats_.samples.size(), 1u);
  EXPECT_EQ(stats_.samples[0], "closed before all answers: 1 of 3 answered");
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, ResetAfterSomeOfSeveralAnswersIsAnEarlyClose) {
  // The query after the server's close is answered with a reset: short, not reset.
  MakeMachine(3, 1);
  exchange_->OnReceived(AnswerTo(Open()), 9000);
  SendAll();
  exchange_->OnError(ECONNRESET, 9100);
  EXPECT_EQ(Errors(ErrorKind::kShort), 1u);
  // Before any answer, or mid-answer, a reset stays a reset.
  Open();
  exchange_->OnError(ECONNRESET, 9200);
  std::string request = Open();
  exchange_->OnReceived(AnswerTo(request), 9300);
  exchange_->OnReceived(AnswerTo(SendAll()).substr(0, 4), 9400);
  exchange_->OnError(ECONNRESET, 9500);
  EXPECT_EQ(Errors(ErrorKind::kReset), 2u);
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, AnAnswerToNoQueryInFlightIsWrong) {
  MakeMachine(2, 2);
  std::vector<std::string> window = Frames(Open());
  ASSERT_EQ(window.size(), 2u);
  exchange_->OnReceived(AnswerTo(window[0], /*id_delta=*/7), 9000);
  EXPECT_EQ(Errors(ErrorKind::kWrong), 1u);
  ExpectCountedOnce();
}

TEST_F(ExchangeTest, SlotIsReusableAfterEveryEnding) {
  // One machine, many connections: each Begin starts clean whatever the last one left.
  MakeMachine(2, 2);
  for (int i = 0; i < 5; ++i) {
    std::vector<std::string> window = Frames(Open());
    if (i % 2 == 0) {
      exchange_->OnReceived(AnswerTo(window[0]).substr(0, 9), 9000);  // left half-read
      exchange_->OnTimeout(9500);
    } else {
      exchange_->OnReceived(AnswerTo(window[1]) + AnswerTo(window[0]), 9000);
      EXPECT_TRUE(exchange_->succeeded());
    }
  }
  EXPECT_EQ(stats_.ok, 2u);
  EXPECT_EQ(Errors(ErrorKind::kTimeout), 3u);
  ExpectCountedOnce();
}

}  // namespace
}  // namespace onepass::load
