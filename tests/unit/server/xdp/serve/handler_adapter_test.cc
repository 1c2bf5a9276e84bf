// HandlerAdapter: the worker's Handler as the AF_XDP path's TcpRequestHandler. What the handler
// is told (the client's address, keep-alive, the peer's close) and how its verdicts map onto the
// TCP's, with pipelined and split requests.
#include "server/xdp/serve/handler_adapter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace onepass::xdp {
namespace {

// Each line is a request, answered "ok:" and the line; kWriteThenRead under keep-alive, else
// kWriteThenClose. Records what it was told.
class LineHandler : public Handler {
 public:
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override {
    peer = context.peer;
    keepalive = context.keepalive;
    peer_closed = context.peer_closed;
    const auto end = std::find(input.begin(), input.end(), '\n');
    if (end == input.end()) return {.action = Action::kReadMore};
    const size_t line = static_cast<size_t>(end - input.begin()) + 1;
    const std::string answer = "ok:" + std::string(input.begin(), input.begin() + line);
    (void)out.Append(
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(answer.data()), answer.size()));
    return {.action = context.keepalive > absl::ZeroDuration() ? Action::kWriteThenRead
                                                               : Action::kWriteThenClose,
            .consumed = line};
  }
  std::array<uint8_t, 16> peer{};
  absl::Duration keepalive;
  bool peer_closed = false;
};

FlowKey V4Flow() {
  FlowKey flow;
  flow.peer = {192, 0, 2, 7};
  flow.local = {192, 0, 2, 1};
  flow.peer_port = 40000;
  flow.local_port = 53;
  return flow;
}

std::vector<uint8_t> Bytes(const std::string& text) { return {text.begin(), text.end()}; }
std::string Text(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

TEST(PeerAddress, Ipv4IsV4MappedAndIpv6AsIs) {
  const std::array<uint8_t, 16> mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 7};
  EXPECT_EQ(PeerAddress(V4Flow()), mapped);
  FlowKey v6 = V4Flow();
  v6.v6 = true;
  v6.peer = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
  EXPECT_EQ(PeerAddress(v6), v6.peer);
}

// One adapter over a LineHandler, with `keepalive`, for the client of V4Flow().
class AdapterTest : public ::testing::Test {
 protected:
  // `bytes` handed over once; the verdict, with what came back in response_ and consumed_.
  TcpRequestHandler::Verdict Ask(const std::string& bytes, absl::Duration keepalive,
                                 bool peer_closed = false) {
    HandlerAdapter adapter([this]() -> Handler& { return handler_; }, 4096, keepalive);
    const std::vector<uint8_t> request = Bytes(bytes);
    response_.clear();
    consumed_ = 0;
    return adapter.OnRequest({.bytes = request, .peer_closed = peer_closed, .flow = &flow_},
                             &response_, &consumed_);
  }
  LineHandler handler_;
  const FlowKey flow_ = V4Flow();
  std::vector<uint8_t> response_;
  size_t consumed_ = 0;
};

TEST_F(AdapterTest, TheHandlerSeesTheClientAndKeepAlive) {
  EXPECT_EQ(Ask("a\n", absl::Milliseconds(2000), /*peer_closed=*/true),
            TcpRequestHandler::Verdict::kRespond);
  EXPECT_EQ(handler_.peer, PeerAddress(flow_));  // per-client policy (Whois, RDAP) applies
  EXPECT_EQ(handler_.keepalive, absl::Milliseconds(2000));
  EXPECT_TRUE(handler_.peer_closed);
  EXPECT_EQ(Text(response_), "ok:a\n");
  EXPECT_EQ(consumed_, 2u);
}

// Two whole requests and half a third: both answered together, the half left for later.
TEST_F(AdapterTest, PipelinedRequestsAnsweredAndTheRestLeft) {
  EXPECT_EQ(Ask("a\nbb\ncc", absl::Milliseconds(2000)), TcpRequestHandler::Verdict::kRespond);
  EXPECT_EQ(Text(response_), "ok:a\nok:bb\n");
  EXPECT_EQ(consumed_, 5u);
  EXPECT_EQ(Ask("cc", absl::Milliseconds(2000)), TcpRequestHandler::Verdict::kNeedMore);
  EXPECT_TRUE(response_.empty());
}

// Without keep-alive the handler closes after its answer: the TCP sends our FIN with it.
TEST_F(AdapterTest, NoKeepAliveAnswersThenCloses) {
  EXPECT_EQ(Ask("a\nb\n", absl::ZeroDuration()), TcpRequestHandler::Verdict::kRespondThenClose);
  EXPECT_EQ(Text(response_), "ok:a\n");
  EXPECT_EQ(consumed_, 2u);
}

}  // namespace
}  // namespace onepass::xdp
