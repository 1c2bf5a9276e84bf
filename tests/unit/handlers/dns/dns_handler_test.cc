// The session glue: framing (RFC 1035 §4.2.2), pipelining (RFC 7766 §6.2.1.1), split reads,
// the 64 KiB output limit (RFC 9210 §4.5) and the verdicts the server acts on.
#include "handlers/dns/dns_handler.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "handlers/dns/dns_counters.h"
#include "handlers/dns/dns_framer.h"
#include "handlers/dns/dns_wire.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::Framed;
using testing::MakeQuery;

std::vector<uint8_t> Concat(const std::vector<std::vector<uint8_t>>& parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Splits the output into messages by their length prefixes.
std::vector<std::vector<uint8_t>> Messages(absl::Span<const uint8_t> out) {
  std::vector<std::vector<uint8_t>> messages;
  while (!out.empty()) {
    const Frame frame = NextFrame(out);
    EXPECT_EQ(frame.status, FrameStatus::kFrame);
    if (frame.status != FrameStatus::kFrame) break;
    messages.emplace_back(frame.message.begin(), frame.message.end());
    out.remove_prefix(frame.frame_bytes);
  }
  return messages;
}

class HandlerTest : public ::testing::Test {
 protected:
  HandlerTest()
      : factory_(testing::DefaultSnapshot(), ResponderConfig{}),
        handler_(factory_.CreateHandler(counters_)),
        out_(factory_.OutputBufferBytes()) {}

  Verdict Process(const std::vector<uint8_t>& input, RequestContext context = {}) {
    return handler_->Process(input, context, out_);
  }

  DnsHandlerFactory factory_;
  HandlerCounters counters_{factory_.Counters().size()};
  std::unique_ptr<Handler> handler_;
  OutputBuffer out_;
};

TEST(FramerTest, Table) {
  struct Case {
    std::vector<uint8_t> input;
    FrameStatus status;
    size_t frame_bytes;
  };
  const std::vector<Case> cases = {
      {{}, FrameStatus::kIncomplete, 0},
      {{0}, FrameStatus::kIncomplete, 0},
      {{0, 0}, FrameStatus::kInvalid, 0},
      {{0, 11}, FrameStatus::kInvalid, 0},
      {{0, 12}, FrameStatus::kIncomplete, 0},
      {Concat({{0, 12}, std::vector<uint8_t>(11, 0)}), FrameStatus::kIncomplete, 0},
      {Concat({{0, 12}, std::vector<uint8_t>(12, 7)}), FrameStatus::kFrame, 14},
      {Concat({{0, 12}, std::vector<uint8_t>(20, 7)}), FrameStatus::kFrame, 14},
      {Concat({{0xff, 0xff}, std::vector<uint8_t>(65534, 0)}), FrameStatus::kIncomplete, 0},
      {Concat({{0xff, 0xff}, std::vector<uint8_t>(65535, 0)}), FrameStatus::kFrame, 65537},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    const Frame frame = NextFrame(cases[i].input);
    EXPECT_EQ(frame.status, cases[i].status);
    EXPECT_EQ(frame.frame_bytes, cases[i].frame_bytes);
    if (frame.status == FrameStatus::kFrame) {
      EXPECT_EQ(frame.message.size(), frame.frame_bytes - 2);
      EXPECT_EQ(frame.message.data(), cases[i].input.data() + 2);
    }
  }
}

TEST_F(HandlerTest, OneQueryWriteThenClose) {
  const auto input = Framed(MakeQuery("www.example.com", "A"));
  const Verdict v = Process(input);
  EXPECT_EQ(v.action, Action::kWriteThenClose);
  EXPECT_EQ(v.consumed, input.size());
  const auto messages = Messages(out_.contents());
  ASSERT_EQ(messages.size(), 1u);
  auto r = testing::DecodeResponse(messages[0]);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->answer.size(), 1u);
}

TEST_F(HandlerTest, PipelinedQueriesAnsweredInOrderInOneBuffer) {
  std::vector<std::vector<uint8_t>> queries;
  for (uint16_t id = 1; id <= 30; ++id) {
    queries.push_back(
        Framed(MakeQuery(id % 2 ? "www.example.com" : "nx.example.com", "A", {.id = id})));
  }
  const auto input = Concat(queries);
  const Verdict v = Process(input);
  EXPECT_EQ(v.action, Action::kWriteThenClose);
  EXPECT_EQ(v.consumed, input.size());
  const auto messages = Messages(out_.contents());
  ASSERT_EQ(messages.size(), 30u);
  for (uint16_t id = 1; id <= 30; ++id) {
    auto r = testing::DecodeResponse(messages[id - 1]);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->id, id);
    EXPECT_EQ(r->rcode, id % 2 ? kRcodeNoError : kRcodeNxDomain);
  }
}

// Feeds `input` the way a server would with the given read boundaries: appends each chunk to
// the unconsumed bytes, calls Process, drops what was consumed, collects the output.
std::string Replay(Handler& handler, const std::vector<uint8_t>& input,
                   const std::vector<size_t>& cuts, std::vector<Action>* actions,
                   absl::Duration keepalive = absl::ZeroDuration(), bool encrypted = false) {
  OutputBuffer out(kSoftOutputLimit + 65537);
  std::vector<uint8_t> pending;
  std::string sent;
  size_t start = 0;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    const size_t end = i < cuts.size() ? cuts[i] : input.size();
    pending.insert(pending.end(), input.begin() + start, input.begin() + end);
    start = end;
    const bool last = i == cuts.size();
    RequestContext context;
    context.keepalive = keepalive;
    context.encrypted = encrypted;
    const Verdict v = handler.Process(pending, context, out);
    pending.erase(pending.begin(), pending.begin() + v.consumed);
    sent.append(reinterpret_cast<const char*>(out.data()), out.size());
    out.Clear();
    actions->push_back(v.action);
    if (last || v.action == Action::kWriteThenClose || v.action == Action::kClose) break;
  }
  return sent;
}

TEST_F(HandlerTest, SplitInvariance) {
  // Queries that ask for keepalive on a server that keeps connections: the connection stays
  // open after every answer, so every split must give the same bytes out.
  const testing::QueryOptions keep = {.edns = true, .keepalive = true};
  const absl::Duration idle = absl::Seconds(5);
  testing::QueryOptions second = keep;
  second.id = 8;
  const auto input = Concat({Framed(MakeQuery("www.example.com", "A", keep)),
                             Framed(MakeQuery("sub.example.com", "NS", second))});
  std::vector<Action> actions;
  const std::string whole = Replay(*handler_, input, {}, &actions, idle);
  ASSERT_EQ(
      Messages(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(whole.data()), whole.size()))
          .size(),
      2u);
  for (size_t cut = 1; cut < input.size(); ++cut) {
    actions.clear();
    EXPECT_EQ(Replay(*handler_, input, {cut}, &actions, idle), whole) << "cut at " << cut;
    for (Action a : actions) EXPECT_NE(a, Action::kClose) << "cut at " << cut;
    for (Action a : actions) EXPECT_NE(a, Action::kWriteThenClose) << "cut at " << cut;
  }
  std::vector<size_t> cuts;
  for (size_t i = 1; i < input.size(); ++i) cuts.push_back(i);
  actions.clear();
  EXPECT_EQ(Replay(*handler_, input, cuts, &actions, idle), whole);
}

// RFC 8467 over TLS (RequestContext::encrypted): padded queries, pipelined, get answers padded
// to multiples of 468 bytes, the same bytes at every split and byte by byte; over plain TCP the
// same input gets the answers without padding.
TEST_F(HandlerTest, PaddedAnswersOverTlsOnlyAndSplitInvariant) {
  const testing::QueryOptions first = {.id = 7, .edns = true, .keepalive = true, .padding = 90};
  testing::QueryOptions second = first;
  second.id = 8;
  second.padding = 0;
  const auto input = Concat({Framed(MakeQuery("www.example.com", "A", first)),
                             Framed(MakeQuery("nx.example.com", "AAAA", second))});
  const absl::Duration idle = absl::Seconds(5);
  std::vector<Action> actions;
  auto messages = [](const std::string& sent) {
    return Messages(
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(sent.data()), sent.size()));
  };
  const std::string whole = Replay(*handler_, input, {}, &actions, idle, /*encrypted=*/true);
  ASSERT_EQ(messages(whole).size(), 2u);
  for (const auto& message : messages(whole)) {
    EXPECT_EQ(message.size() % kResponsePaddingBlock, 0u) << message.size();
  }
  for (size_t cut = 1; cut < input.size(); ++cut) {
    actions.clear();
    EXPECT_EQ(Replay(*handler_, input, {cut}, &actions, idle, true), whole) << "cut at " << cut;
  }
  std::vector<size_t> cuts;
  for (size_t i = 1; i < input.size(); ++i) cuts.push_back(i);
  actions.clear();
  EXPECT_EQ(Replay(*handler_, input, cuts, &actions, idle, true), whole);

  const std::string plain = Replay(*handler_, input, {}, &actions, idle, /*encrypted=*/false);
  ASSERT_EQ(messages(plain).size(), 2u);
  for (const auto& message : messages(plain)) {
    auto r = testing::DecodeResponse(message);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->opt_options, std::vector<std::string>{"11:0032"});  // keepalive, no padding
  }
}

TEST_F(HandlerTest, SplitInvarianceWithoutKeepalive) {
  // Without keepalive the connection closes after the last complete query in the input: any
  // split inside the second message still gets both answers; a split exactly between them
  // answers the first and closes (the single pass).
  const auto first = Framed(MakeQuery("www.example.com", "A", {.id = 7}));
  const auto input = Concat({first, Framed(MakeQuery("sub.example.com", "NS", {.id = 8}))});
  std::vector<Action> actions;
  const std::string whole = Replay(*handler_, input, {}, &actions);
  ASSERT_EQ(actions.back(), Action::kWriteThenClose);
  for (size_t cut = 1; cut < input.size(); ++cut) {
    actions.clear();
    const std::string sent = Replay(*handler_, input, {cut}, &actions);
    if (cut == first.size()) {
      EXPECT_EQ(actions.front(), Action::kWriteThenClose);
      EXPECT_EQ(sent.size(), Messages(absl::MakeConstSpan(
                                 reinterpret_cast<const uint8_t*>(whole.data()), whole.size()))[0]
                                     .size() +
                                 2);
      continue;
    }
    EXPECT_EQ(sent, whole) << "cut at " << cut;
    EXPECT_EQ(actions.back(), Action::kWriteThenClose) << "cut at " << cut;
    EXPECT_NE(actions.front(), Action::kWriteThenClose) << "cut at " << cut;
    EXPECT_NE(actions.front(), Action::kClose) << "cut at " << cut;
  }
}

TEST_F(HandlerTest, IncompleteAsksForMore) {
  const auto input = Framed(MakeQuery("www.example.com", "A"));
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, input.size() - 1}) {
    const Verdict v = Process(std::vector<uint8_t>(input.begin(), input.begin() + n));
    EXPECT_EQ(v.action, Action::kReadMore) << n;
    EXPECT_EQ(v.consumed, 0u);
    EXPECT_TRUE(out_.empty());
  }
  RequestContext closed;
  closed.peer_closed = true;
  EXPECT_EQ(Process(std::vector<uint8_t>(input.begin(), input.begin() + 5), closed).action,
            Action::kClose);
}

TEST_F(HandlerTest, AnswerThenPartialNextKeepsReading) {
  const auto first = Framed(MakeQuery("www.example.com", "A"));
  auto input = Concat({first, Framed(MakeQuery("www.example.com", "AAAA"))});
  input.resize(first.size() + 5);
  const Verdict v = Process(input);
  EXPECT_EQ(v.action, Action::kWriteThenRead);
  EXPECT_EQ(v.consumed, first.size());
  EXPECT_EQ(Messages(out_.contents()).size(), 1u);
}

TEST_F(HandlerTest, TooShortMessageCloses) {
  EXPECT_EQ(Process({0, 5, 1, 2, 3, 4, 5}).action, Action::kClose);
  // After an answered query: send it, then close.
  const auto first = Framed(MakeQuery("www.example.com", "A"));
  const Verdict v = Process(Concat({first, {0, 3, 1, 2, 3}}));
  EXPECT_EQ(v.action, Action::kWriteThenClose);
  EXPECT_EQ(v.consumed, first.size());
}

TEST_F(HandlerTest, ResponsesAreDroppedNotAnswered) {
  auto response = MakeQuery("www.example.com", "A");
  response[2] |= 0x80;  // QR
  const auto input = Framed(response);
  const Verdict v = Process(input);
  EXPECT_EQ(v.action, Action::kReadMore);
  EXPECT_EQ(v.consumed, input.size());
  EXPECT_TRUE(out_.empty());
}

TEST_F(HandlerTest, KeepaliveKeepsConnectionOpen) {
  const auto input = Framed(MakeQuery("www.example.com", "A", {.edns = true, .keepalive = true}));
  RequestContext context;
  context.keepalive = absl::Seconds(10);
  Verdict v = Process(input, context);
  EXPECT_EQ(v.action, Action::kWriteThenRead);
  auto r = testing::DecodeResponse(Messages(out_.contents())[0]);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->opt_options, std::vector<std::string>{"11:0064"});
  out_.Clear();
  // Server not keeping connections: close after the answer, option not echoed.
  v = Process(input);
  EXPECT_EQ(v.action, Action::kWriteThenClose);
  // Keepalive configured and the client did not ask (dnsperf cannot): kept all the same (RFC
  // 7766 §6.2.3, as NSD and Knot do), and no option is echoed to a query without one.
  out_.Clear();
  v = Process(Framed(MakeQuery("www.example.com", "A", {.edns = true})), context);
  EXPECT_EQ(v.action, Action::kWriteThenRead);
  r = testing::DecodeResponse(Messages(out_.contents())[0]);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->opt_options.empty());
}

// Input that ends exactly at a query boundary after a read that filled the server's buffer is
// not the end of the client's queries: the connection stays open for the rest (RFC 7766
// §6.2.1.1), until the client's EOF.
TEST_F(HandlerTest, MoreInputExpectedKeepsReadingAtAQueryBoundary) {
  const auto input = Framed(MakeQuery("www.example.com", "A"));
  RequestContext context;
  context.more_input_expected = true;
  EXPECT_EQ(Process(input, context).action, Action::kWriteThenRead);
  out_.Clear();
  context.peer_closed = true;
  EXPECT_EQ(Process(input, context).action, Action::kWriteThenClose);
}

TEST_F(HandlerTest, StopsAtSoftOutputLimit) {
  // ~180-byte answers: 1000 queries produce far more than 64 KiB.
  std::vector<std::vector<uint8_t>> queries;
  for (int i = 0; i < 1000; ++i) queries.push_back(Framed(MakeQuery("www.example.com", "A")));
  const auto input = Concat(queries);
  const size_t query_size = queries[0].size();
  size_t offset = 0;
  size_t answered = 0;
  for (int round = 0; round < 20 && offset < input.size(); ++round) {
    const Verdict v = Process(std::vector<uint8_t>(input.begin() + offset, input.end()));
    const size_t n = Messages(out_.contents()).size();
    EXPECT_EQ(v.consumed, n * query_size);
    EXPECT_LE(out_.size(), kSoftOutputLimit + 65537);
    offset += v.consumed;
    answered += n;
    if (offset < input.size()) {
      EXPECT_EQ(v.action, Action::kWriteThenRead);
      EXPECT_GE(out_.size(), kSoftOutputLimit);
    } else {
      EXPECT_EQ(v.action, Action::kWriteThenClose);
    }
    out_.Clear();
  }
  EXPECT_EQ(answered, 1000u);
}

TEST_F(HandlerTest, MalformedQueriesGetFormErrWithIdOpcodeRd) {
  // A header with QDCOUNT=1 and no question.
  std::vector<uint8_t> message = {0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
  Process(Framed(message));
  const auto messages = Messages(out_.contents());
  ASSERT_EQ(messages.size(), 1u);
  auto r = testing::DecodeResponse(messages[0]);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->id, 0xabcd);
  EXPECT_EQ(r->rcode, kRcodeFormErr);
  EXPECT_TRUE(r->qr && r->rd);
}

TEST_F(HandlerTest, OutputBufferSizeAndMaxRequest) {
  EXPECT_GE(factory_.OutputBufferBytes(), kSoftOutputLimit + 2 + 65535);
  EXPECT_EQ(factory_.MaxRequestBytes(), 2u + 65535u);
  EXPECT_EQ(factory_.Name(), "dns");
}

// Each response is counted once by RCODE, and by kind where an answer was planned; the same
// with the answers precompiled as rendered per query.
TEST(DnsCountersTest, CountsRcodeAndKindWithAndWithoutPrecompiledAnswers) {
  struct Case {
    std::string name;
    std::string type;
    testing::QueryOptions options;
    DnsCounter rcode;
    DnsCounter kind;  // kCount: none
    bool wildcard;
    bool precompiled;  // a name of the zone: in the precompiled set when it is on
  };
  testing::QueryOptions with_do;
  with_do.edns = true;
  with_do.do_bit = true;
  testing::QueryOptions badvers;
  badvers.edns = true;
  badvers.edns_version = 1;
  testing::QueryOptions chaos;
  chaos.qclass = 3;
  const std::vector<Case> cases = {
      {"www.example.com.", "A", {}, DnsCounter::kNoError, DnsCounter::kKindAnswer, false, true},
      {"www.example.com.", "A", with_do, DnsCounter::kNoError, DnsCounter::kKindAnswer, false,
       true},
      {"alias.example.com.", "A", {}, DnsCounter::kNoError, DnsCounter::kKindCname, false, true},
      {"tonx.example.com.", "A", {}, DnsCounter::kNxDomain, DnsCounter::kKindCname, false, true},
      {"host.sub.example.com.",
       "A",
       {},
       DnsCounter::kNoError,
       DnsCounter::kKindReferral,
       false,
       false},
      {"www.example.com.", "MX", {}, DnsCounter::kNoError, DnsCounter::kKindNodata, false, false},
      {"nothere.example.com.",
       "A",
       {},
       DnsCounter::kNxDomain,
       DnsCounter::kKindNxdomain,
       false,
       false},
      {"x.wild.example.com.", "A", {}, DnsCounter::kNoError, DnsCounter::kKindAnswer, true, false},
      {"www.example.org.", "A", {}, DnsCounter::kRefused, DnsCounter::kKindRefused, false, false},
      {"www.example.com.", "A", badvers, DnsCounter::kBadVers, DnsCounter::kCount, false, false},
      {"www.example.com.", "A", chaos, DnsCounter::kRefused, DnsCounter::kCount, false, false},
      {"www.example.com.", "AXFR", {}, DnsCounter::kRefused, DnsCounter::kCount, false, false},
  };
  for (const size_t precompile : {size_t{0}, size_t{1} << 20}) {
    ResponderConfig config;
    config.precompile_max_bytes = precompile;
    DnsHandlerFactory factory(testing::DefaultSnapshot(), config);
    ASSERT_EQ(factory.Counters().size(), static_cast<size_t>(DnsCounter::kCount));
    HandlerCounters counters(factory.Counters().size());
    auto handler = factory.CreateHandler(counters);
    OutputBuffer out(factory.OutputBufferBytes());
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name + " " + c.type + " precompile=" + std::to_string(precompile));
      std::vector<uint64_t> before(counters.size());
      for (size_t i = 0; i < counters.size(); ++i) before[i] = counters.Read(i);
      out.Clear();
      const Verdict verdict =
          handler->Process(Framed(MakeQuery(c.name, c.type, c.options)), {}, out);
      ASSERT_EQ(verdict.action, Action::kWriteThenClose);
      std::vector<uint64_t> expected = before;
      ++expected[static_cast<size_t>(c.rcode)];
      if (c.kind != DnsCounter::kCount) ++expected[static_cast<size_t>(c.kind)];
      if (c.wildcard) ++expected[static_cast<size_t>(DnsCounter::kWildcard)];
      if (c.options.do_bit) ++expected[static_cast<size_t>(DnsCounter::kDnssecOk)];
      if (precompile > 0 && c.precompiled)
        ++expected[static_cast<size_t>(DnsCounter::kPrecompiled)];
      for (size_t i = 0; i < counters.size(); ++i) {
        EXPECT_EQ(counters.Read(i), expected[i]) << CounterName(kDnsCounters[i]);
      }
    }
  }
  // A malformed query (QDCOUNT 0) is a FORMERR.
  DnsHandlerFactory factory(testing::DefaultSnapshot(), ResponderConfig{});
  HandlerCounters counters(factory.Counters().size());
  auto handler = factory.CreateHandler(counters);
  OutputBuffer out(factory.OutputBufferBytes());
  std::vector<uint8_t> formerr(kHeaderBytes, 0);
  handler->Process(Framed(formerr), {}, out);
  EXPECT_EQ(counters.Read(static_cast<size_t>(DnsCounter::kFormErr)), 1u);
}

}  // namespace
}  // namespace onepass::dns
