// The Whois session through the Handler interface, as the server drives it: bytes in,
// verdict and reply out.
#include "handlers/whois/whois_handler.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "handlers/whois/whois_counters.h"
#include "handlers/whois/whois_db.h"
#include "handlers/whois/whois_embedded_db.h"

namespace onepass::whois {
namespace {

class WhoisHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto snapshot = LoadWhoisDbText(EmbeddedWhoisDb(), "embedded");
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    snapshot_ = *snapshot;
    config_.max_query_bytes = 512;
    factory_ = std::make_unique<WhoisHandlerFactory>(snapshot_, config_);
    counters_ = std::make_unique<HandlerCounters>(factory_->Counters().size());
    handler_ = factory_->CreateHandler(*counters_);
  }

  uint64_t Counted(WhoisCounter counter) const {
    return counters_->Read(static_cast<size_t>(counter));
  }

  struct Result {
    Verdict verdict;
    std::string reply;
  };

  Result Run(absl::string_view input, bool peer_closed = false, size_t capacity = 0) {
    OutputBuffer out(capacity == 0 ? factory_->OutputBufferBytes() : capacity);
    RequestContext context;
    context.peer_closed = peer_closed;
    Result result;
    result.verdict = handler_->Process(
        absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(input.data()), input.size()),
        context, out);
    result.reply.assign(reinterpret_cast<const char*>(out.data()), out.size());
    return result;
  }

  // Every reply ends with the same tail; every line ends in CRLF.
  void ExpectWellFormed(const std::string& reply) {
    EXPECT_TRUE(absl::EndsWith(reply, snapshot_->tail())) << reply;
    for (size_t i = 0; i < reply.size(); ++i) {
      if (reply[i] == '\n') {
        ASSERT_GT(i, 0u);
        EXPECT_EQ(reply[i - 1], '\r') << "bare LF at " << i;
      }
    }
  }

  std::shared_ptr<const WhoisSnapshot> snapshot_;
  WhoisConfig config_;
  std::unique_ptr<WhoisHandlerFactory> factory_;
  std::unique_ptr<HandlerCounters> counters_;
  std::unique_ptr<Handler> handler_;
};

TEST_F(WhoisHandlerTest, DomainQueryAnswersAndCloses) {
  const Result r = Run("example.com\r\n");
  EXPECT_EQ(r.verdict.action, Action::kWriteThenClose);
  EXPECT_EQ(r.verdict.consumed, 13u);
  EXPECT_TRUE(absl::StartsWith(r.reply, "   Domain Name: EXAMPLE.COM\r\n")) << r.reply;
  EXPECT_TRUE(absl::StrContains(r.reply, "   Registrar IANA ID: 376\r\n"));
  EXPECT_TRUE(absl::StrContains(
      r.reply,
      "   URL of the ICANN Whois Inaccuracy Complaint Form: https://www.icann.org/wicf/\r\n"
      ">>> Last update of whois database: 2026-11-29T00:00:00Z <<<\r\n"));
  ExpectWellFormed(r.reply);
}

TEST_F(WhoisHandlerTest, QueryFormsReachTheirObjects) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"EXAMPLE.COM.\n", "   Domain Name: EXAMPLE.COM\r\n"},
      {"domain example.net\r\n", "   Domain Name: EXAMPLE.NET\r\n"},
      {"xn--bcher-kva.example\r\n", "   Domain Name: XN--BCHER-KVA.EXAMPLE\r\n"},
      {"b\xc3\xbc"
       "cher.example\r\n",
       "   Domain Name: XN--BCHER-KVA.EXAMPLE\r\n"},
      {"nameserver ns1.registrar.example\r\n", "   Server Name: NS1.REGISTRAR.EXAMPLE\r\n"},
      {"ns2.registrar.example\r\n", "   Server Name: NS2.REGISTRAR.EXAMPLE\r\n"},
      {"registrar example registrar, inc.\r\n", "   Registrar Name: Example Registrar, Inc.\r\n"},
      {"registrar 376\r\n", "   Registrar Name: RESERVED-Internet Assigned Numbers Authority"},
      {"contact exr-1002\r\n", "   Contact ID: EXR-1002\r\n   Name: John Admin\r\n"},
      {"EXR-1001\r\n", "   Contact ID: EXR-1001\r\n"},
  };
  for (const auto& [query, start] : cases) {
    const Result r = Run(query);
    EXPECT_EQ(r.verdict.action, Action::kWriteThenClose) << query;
    EXPECT_TRUE(absl::StartsWith(r.reply, start)) << query << " got:\n" << r.reply;
    ExpectWellFormed(r.reply);
  }
  EXPECT_EQ(Counted(WhoisCounter::kQueryAny), 5u);
  EXPECT_EQ(Counted(WhoisCounter::kQueryDomain), 1u);
  EXPECT_EQ(Counted(WhoisCounter::kQueryNameserver), 1u);
  EXPECT_EQ(Counted(WhoisCounter::kQueryRegistrar), 2u);
  EXPECT_EQ(Counted(WhoisCounter::kQueryContact), 1u);
  EXPECT_EQ(Counted(WhoisCounter::kMatch), 10u);
  EXPECT_EQ(Counted(WhoisCounter::kNoMatch), 0u);
  EXPECT_EQ(Counted(WhoisCounter::kError), 0u);
}

TEST_F(WhoisHandlerTest, UnknownNameGetsNoMatch) {
  const Result r = Run("nosuch.example\r\n");
  EXPECT_EQ(r.verdict.action, Action::kWriteThenClose);
  EXPECT_EQ(r.reply, absl::StrCat("No match for \"NOSUCH.EXAMPLE\".\r\n", snapshot_->tail()));
  // "domain" asks for domains only: a host of that name is no match.
  EXPECT_TRUE(absl::StartsWith(Run("domain a.iana-servers.net\r\n").reply,
                               "No match for \"A.IANA-SERVERS.NET\".\r\n"));
  EXPECT_TRUE(absl::StartsWith(Run("registrar Nobody\r\n").reply, "No match for \"NOBODY\".\r\n"));
  EXPECT_EQ(Counted(WhoisCounter::kNoMatch), 3u);
  EXPECT_EQ(Counted(WhoisCounter::kMatch), 0u);
  EXPECT_EQ(Counted(WhoisCounter::kQueryAny), 1u);
}

TEST_F(WhoisHandlerTest, BadInputsGetOneErrorLineAndTheTail) {
  const std::string overlong = std::string(513, 'a') + "\r\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {overlong, "Error: query too long.\r\n"},
      {std::string(600, 'a'), "Error: query too long.\r\n"},  // no line end at all
      {std::string("exa\0mple.com\r\n", 14), "Error: query contains a NUL byte.\r\n"},
      {"exa\x1bmple.com\r\n", "Error: query contains a control character.\r\n"},
      {"\r\n", "Error: empty query;"},
      {"\xff\xfe\r\n", "Error: query is not valid UTF-8.\r\n"},
      {"\xe2\x98\x83\xe2\x80\x8d.example\r\n", "Error: invalid internationalized domain name: "},
      {"exa_mple.com\r\n", "Error: invalid domain name;"},
      {"contact a/b\r\n", "Error: invalid contact handle;"},
      {"show me everything\r\n", "Error: unknown query;"},
  };
  for (const auto& [input, start] : cases) {
    const Result r = Run(input);
    EXPECT_EQ(r.verdict.action, Action::kWriteThenClose) << start;
    EXPECT_TRUE(absl::StartsWith(r.reply, start)) << start << " got:\n" << r.reply;
    // One line, then the tail.
    EXPECT_EQ(r.reply.find("\r\n") + 2 + snapshot_->tail().size(), r.reply.size()) << start;
    ExpectWellFormed(r.reply);
  }
  // Framing and parsing errors alike; none of them is a query of some kind.
  EXPECT_EQ(Counted(WhoisCounter::kError), cases.size());
  EXPECT_EQ(Counted(WhoisCounter::kQueryAny) + Counted(WhoisCounter::kQueryContact), 0u);
}

TEST_F(WhoisHandlerTest, IncompleteLineReadsMoreWithinTheLimit) {
  Result r = Run("example.co");
  EXPECT_EQ(r.verdict.action, Action::kReadMore);
  EXPECT_EQ(r.verdict.consumed, 0u);
  EXPECT_TRUE(r.reply.empty());
  r = Run(std::string(513, 'a'));  // 512 + CR could still be a valid line
  EXPECT_EQ(r.verdict.action, Action::kReadMore);
  r = Run(std::string(514, 'a'));  // cannot: error at once
  EXPECT_EQ(r.verdict.action, Action::kWriteThenClose);
  EXPECT_EQ(r.verdict.consumed, 513u);  // the byte past the limit decided: not consumed
  EXPECT_EQ(factory_->MaxRequestBytes(), 514u);
}

TEST_F(WhoisHandlerTest, PeerCloseWithoutLineEndIsTheQuery) {
  Result r = Run("example.com", /*peer_closed=*/true);
  EXPECT_EQ(r.verdict.action, Action::kWriteThenClose);
  EXPECT_EQ(r.verdict.consumed, 11u);
  EXPECT_TRUE(absl::StartsWith(r.reply, "   Domain Name: EXAMPLE.COM\r\n"));
  r = Run(std::string("exa\0", 4), /*peer_closed=*/true);
  EXPECT_TRUE(absl::StartsWith(r.reply, "Error: query contains a NUL byte."));
  r = Run("", /*peer_closed=*/true);
  EXPECT_EQ(r.verdict.action, Action::kClose);
  EXPECT_TRUE(r.reply.empty());
}

TEST_F(WhoisHandlerTest, KeepaliveDoesNotKeepWhoisOpen) {
  OutputBuffer out(factory_->OutputBufferBytes());
  RequestContext context;
  context.keepalive = absl::Seconds(10);
  const std::string input = "example.com\r\nexample.net\r\n";
  const Verdict verdict = handler_->Process(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(input.data()), input.size()),
      context, out);
  EXPECT_EQ(verdict.action, Action::kWriteThenClose);  // RFC 3912 §2: the server closes
  EXPECT_EQ(verdict.consumed, 13u);
}

TEST_F(WhoisHandlerTest, ReplyThatDoesNotFitGetsAShortErrorOrClose) {
  const std::string tail(snapshot_->tail());
  Result r = Run("example.com\r\n", false, tail.size() + 100);
  EXPECT_EQ(r.verdict.action, Action::kWriteThenClose);
  EXPECT_EQ(r.reply, "Error: reply too large.\r\n" + tail);
  r = Run("example.com\r\n", false, 10);
  EXPECT_EQ(r.verdict.action, Action::kClose);
  EXPECT_TRUE(r.reply.empty());
  EXPECT_EQ(Counted(WhoisCounter::kTooLarge), 2u);
  EXPECT_EQ(Counted(WhoisCounter::kMatch), 0u);
}

// The block belongs to the worker: a handler from a new factory (a reload) counts on.
TEST_F(WhoisHandlerTest, CountsSurviveANewHandler) {
  Run("example.com\r\n");
  factory_ = std::make_unique<WhoisHandlerFactory>(snapshot_, config_);
  handler_ = factory_->CreateHandler(*counters_);
  Run("example.com\r\n");
  EXPECT_EQ(Counted(WhoisCounter::kMatch), 2u);
  EXPECT_EQ(factory_->Counters().size(), static_cast<size_t>(WhoisCounter::kCount));
  EXPECT_EQ(CounterName(factory_->Counters()[static_cast<size_t>(WhoisCounter::kNoMatch)]),
            "whois_replies{result=\"no_match\"}");
}

TEST_F(WhoisHandlerTest, OutputBufferHoldsTheLargestReply) {
  // The longest no-match echo: a 253-byte name; the longest registrar query: 512 bytes.
  const std::string label63(63, 'a');
  const std::string name = label63 + "." + label63 + "." + label63 + "." + std::string(61, 'b');
  EXPECT_EQ(Run(name + "\r\n").verdict.action, Action::kWriteThenClose);
  const std::string registrar = "registrar " + std::string(502, 'r');
  const Result r = Run(registrar + "\r\n");
  EXPECT_TRUE(absl::StartsWith(r.reply, "No match for \"RRR")) << r.reply.substr(0, 80);
  for (const char* query : {"example.org", "xn--bcher-kva.example", "registrar 9999"}) {
    EXPECT_LE(Run(absl::StrCat(query, "\r\n")).reply.size(), factory_->OutputBufferBytes());
  }
}

TEST_F(WhoisHandlerTest, HandlersShareTheSnapshot) {
  std::unique_ptr<Handler> second = factory_->CreateHandler(*counters_);
  const std::string input = "example.com\r\n";
  OutputBuffer a(factory_->OutputBufferBytes()), b(factory_->OutputBufferBytes());
  const auto bytes =
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  handler_->Process(bytes, RequestContext(), a);
  second->Process(bytes, RequestContext(), b);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(a.data()), a.size()),
            std::string(reinterpret_cast<const char*>(b.data()), b.size()));
  EXPECT_EQ(factory_->Name(), "whois");
}

// The handler is stateless between calls: feeding the bytes as the server would (everything
// received so far, each time) gives the same reply however the bytes arrive.
// The per-client limit, through the handler: the peer address comes in the RequestContext;
// a client over its rate gets the one-line refusal and the close, counted.
TEST_F(WhoisHandlerTest, ClientOverItsRateIsRefused) {
  config_.rate_limit.queries_per_second = 1;
  config_.rate_limit.burst = 2;
  factory_ = std::make_unique<WhoisHandlerFactory>(snapshot_, config_);
  handler_ = factory_->CreateHandler(*counters_);
  const auto query = [&](uint8_t last, absl::Time now) {
    OutputBuffer out(factory_->OutputBufferBytes());
    RequestContext context;
    context.now = now;
    context.peer = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, last};
    const std::string input = "example.com\r\n";
    Result result;
    result.verdict = handler_->Process(
        absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(input.data()), input.size()),
        context, out);
    result.reply.assign(reinterpret_cast<const char*>(out.data()), out.size());
    return result;
  };
  const absl::Time t = absl::FromUnixSeconds(1800000000);
  EXPECT_TRUE(absl::StartsWith(query(1, t).reply, "   Domain Name: EXAMPLE.COM\r\n"));
  EXPECT_TRUE(absl::StartsWith(query(1, t).reply, "   Domain Name: EXAMPLE.COM\r\n"));
  const Result refused = query(1, t);
  EXPECT_EQ(refused.verdict.action, Action::kWriteThenClose);
  EXPECT_EQ(refused.verdict.consumed, 13u);
  EXPECT_EQ(refused.reply,
            "Error: query rate limit exceeded for your address. Please slow down and try again "
            "later.\r\n");
  EXPECT_TRUE(absl::StartsWith(query(2, t).reply, "   Domain Name:"));  // another client
  EXPECT_TRUE(absl::StartsWith(query(1, t + absl::Seconds(1)).reply, "   Domain Name:"));
  EXPECT_EQ(Counted(WhoisCounter::kRateLimited), 1u);
  EXPECT_EQ(Counted(WhoisCounter::kMatch), 4u);
  EXPECT_EQ(Counted(WhoisCounter::kRateLimitEvictions), 0u);
}

// Errors consume only what was framed: the client may still be sending (lingering close).
TEST_F(WhoisHandlerTest, ErrorsConsumeOnlyWhatWasFramed) {
  Result r = Run(std::string("exam\x01ple.com\r\n"));
  EXPECT_EQ(r.verdict.action, Action::kWriteThenClose);
  EXPECT_EQ(r.verdict.consumed, 4u);
  r = Run(std::string(600, 'a'));
  EXPECT_EQ(r.verdict.consumed, 513u);
  // The same with the peer closed (the server does not linger then anyway).
  r = Run(std::string("exam\x01ple.com"), /*peer_closed=*/true);
  EXPECT_EQ(r.verdict.consumed, 4u);
}

TEST_F(WhoisHandlerTest, SplitInvariance) {
  const std::vector<std::string> inputs = {"example.com\r\n",
                                           "domain example.org\n",
                                           std::string("ab\0c\r\n", 6),
                                           std::string(520, 'x'),
                                           "registrar 376\r\n",
                                           "b\xc3\xbc"
                                           "cher.example\r\n"};
  for (const std::string& input : inputs) {
    const Result whole = Run(input, /*peer_closed=*/true);
    for (size_t split = 0; split <= input.size(); ++split) {
      // First part: either an answer equal to the whole one, or read more.
      const Result first = Run(absl::string_view(input).substr(0, split), split == input.size());
      if (first.verdict.action == Action::kReadMore) {
        const Result second = Run(input, /*peer_closed=*/true);
        EXPECT_EQ(second.reply, whole.reply) << split;
      } else if (split > 0) {
        EXPECT_EQ(first.reply, whole.reply) << "split at " << split;
        EXPECT_EQ(first.verdict.action, whole.verdict.action) << split;
      }
    }
  }
}

}  // namespace
}  // namespace onepass::whois
