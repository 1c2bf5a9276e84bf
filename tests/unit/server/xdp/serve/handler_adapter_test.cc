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

TEST(HandlerAdapter, TheHandlerSeesTheClientAndKeepAlive) {
  LineHandler handler;
  HandlerAdapter adapter([&]() -> Handler& { return handler; }, 4096, absl::Milliseconds(2000));
  const FlowKey flow = V4Flow();
  const std::vector<uint8_t> request = Bytes("a\n");
  std::vector<uint8_t> response;
  size_t consumed = 0;
  EXPECT_EQ(adapter.OnRequest({.bytes = request, .peer_closed = true, .flow = &flow}, &response,
                              &consumed),
            TcpRequestHandler::Verdict::kRespond);
  EXPECT_EQ(handler.peer, PeerAddress(flow));  // per-client policy (Whois, RDAP) applies
  EXPECT_EQ(handler.keepalive, absl::Milliseconds(2000));
  EXPECT_TRUE(handler.peer_closed);
  EXPECT_EQ(Text(response), "ok:a\n");
  EXPECT_EQ(consumed, 2u);
}

// Two whole requests and half a third: both answered together, the half left for later.
TEST(HandlerAdapter, PipelinedRequestsAnsweredAndTheRestLeft) {
  LineHandler handler;
  HandlerAdapter adapter([&]() -> Handler& { return handler; }, 4096, absl::Milliseconds(2000));
  const FlowKey flow = V4Flow();
  const std::vector<uint8_t> request = Bytes("a\nbb\ncc");
  std::vector<uint8_t> response;
  size_t consumed = 0;
  EXPECT_EQ(adapter.OnRequest({.bytes = request, .flow = &flow}, &response, &consumed),
            TcpRequestHandler::Verdict::kRespond);
  EXPECT_EQ(Text(response), "ok:a\nok:bb\n");
  EXPECT_EQ(consumed, 5u);
  response.clear();
  const std::vector<uint8_t> half = Bytes("cc");
  EXPECT_EQ(adapter.OnRequest({.bytes = half, .flow = &flow}, &response, &consumed),
            TcpRequestHandler::Verdict::kNeedMore);
  EXPECT_TRUE(response.empty());
}

// Without keep-alive the handler closes after its answer: the TCP sends our FIN with it.
TEST(HandlerAdapter, NoKeepAliveAnswersThenCloses) {
  LineHandler handler;
  HandlerAdapter adapter([&]() -> Handler& { return handler; }, 4096, absl::ZeroDuration());
  const FlowKey flow = V4Flow();
  const std::vector<uint8_t> request = Bytes("a\nb\n");
  std::vector<uint8_t> response;
  size_t consumed = 0;
  EXPECT_EQ(adapter.OnRequest({.bytes = request, .flow = &flow}, &response, &consumed),
            TcpRequestHandler::Verdict::kRespondThenClose);
  EXPECT_EQ(Text(response), "ok:a\n");
  EXPECT_EQ(consumed, 2u);
}

}  // namespace
}  // namespace onepass::xdp
