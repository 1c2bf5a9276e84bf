// The transport state machine on a socketpair, without an event loop: what the single pass and
// the parked path do with every arrival pattern.
#include "server/core/connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/line_handler.h"

namespace onepass {
namespace {

using testing::LineHandler;
using testing::LineProtocolOptions;

class ConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(LineProtocolOptions{}); }
  void TearDown() override { CloseBoth(); }

  void Open(const LineProtocolOptions& options) {
    CloseBoth();
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    server_fd_ = fds[0];
    client_fd_ = fds[1];
    handler_ = std::make_unique<LineHandler>(0, options);
    connection_ = std::make_unique<Connection>(std::max<size_t>(options.max_line_bytes + 1, 64),
                                               options.output_bytes);
    connection_->Reset(server_fd_);
    env_.handler = handler_.get();
    env_.stats = &stats_;
    env_.max_request_bytes = options.max_line_bytes;
  }
  void CloseBoth() {
    if (server_fd_ >= 0) close(server_fd_);
    if (client_fd_ >= 0) close(client_fd_);
    server_fd_ = client_fd_ = -1;
  }
  void ClientSends(const std::string& bytes) {
    ASSERT_EQ(send(client_fd_, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  }
  // Everything the server sent so far (non-blocking).
  std::string ClientReceives() {
    std::string text;
    char buf[65536];
    ssize_t n;
    while ((n = recv(client_fd_, buf, sizeof(buf), 0)) > 0) text.append(buf, n);
    return text;
  }
  StatsSnapshot Stats() const { return stats_.Read(); }

  int server_fd_ = -1;
  int client_fd_ = -1;
  std::unique_ptr<LineHandler> handler_;
  std::unique_ptr<Connection> connection_;
  WorkerStats stats_;
  ConnectionEnv env_;
};

TEST_F(ConnectionTest, WholeRequestIsServedInOnePass) {
  ClientSends("hello\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "worker=0 hello\n");
  const StatsSnapshot stats = Stats();
  EXPECT_EQ(stats.served, 1u);
  EXPECT_EQ(stats.responses, 1u);
  EXPECT_EQ(stats.sends, 1u);
  EXPECT_EQ(stats.recvs, 1u);  // no recv for EAGAIN, no recv for EOF: the handler said close
}

// Over TCP the single pass's answer is sent with MSG_MORE and leaves with the FIN at the close
// that follows: the client must get the whole answer, then its EOF, and nothing may stay held.
TEST_F(ConnectionTest, SinglePassAnswerLeavesWithTheCloseOverTcp) {
  CloseBoth();
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  client_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  server_fd_ = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK);
  close(listener);
  ASSERT_GE(server_fd_, 0);
  connection_->Reset(server_fd_);
  ClientSends("hello\n");
  pollfd readable{.fd = server_fd_, .events = POLLIN, .revents = 0};
  ASSERT_EQ(poll(&readable, 1, 2000), 1);
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  close(server_fd_);  // as the worker does right after a single pass
  server_fd_ = -1;
  std::string text;
  char buf[256];
  for (int i = 0; i < 100; ++i) {
    pollfd answer{.fd = client_fd_, .events = POLLIN, .revents = 0};
    ASSERT_EQ(poll(&answer, 1, 2000), 1) << "the answer or its FIN was held back";
    ssize_t n = recv(client_fd_, buf, sizeof(buf), 0);
    ASSERT_GE(n, 0);
    if (n == 0) break;  // EOF
    text.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(text, "worker=0 hello\n");
  EXPECT_EQ(Stats().sends, 1u);
}

TEST_F(ConnectionTest, PipelinedRequestsAreAnsweredWithOneSend) {
  ClientSends("a\nb\nc\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "worker=0 a\nworker=0 b\nworker=0 c\n");
  EXPECT_EQ(Stats().sends, 1u);
}

TEST_F(ConnectionTest, SplitArrivalGivesTheSameAnswerAtEverySplit) {
  const std::string request = "split me\n";
  for (size_t split = 0; split <= request.size(); ++split) {
    Open(LineProtocolOptions{});
    ClientSends(request.substr(0, split));
    ConnectionState next = connection_->Advance(env_);
    if (split < request.size()) {
      ASSERT_EQ(next, ConnectionState::kReading) << split;
      EXPECT_EQ(ClientReceives(), "") << split;
      ClientSends(request.substr(split));
      next = connection_->Advance(env_);
    }
    EXPECT_EQ(next, ConnectionState::kClosed) << split;
    EXPECT_EQ(ClientReceives(), "worker=0 split me\n") << split;
  }
}

TEST_F(ConnectionTest, ByteByByte) {
  const std::string request = "slow\n";
  for (size_t i = 0; i + 1 < request.size(); ++i) {
    ClientSends(request.substr(i, 1));
    ASSERT_EQ(connection_->Advance(env_), ConnectionState::kReading) << i;
  }
  ClientSends("\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "worker=0 slow\n");
}

TEST_F(ConnectionTest, OversizeRequestIsClosed) {
  LineProtocolOptions options;
  options.max_line_bytes = 16;
  Open(options);
  ClientSends(std::string(40, 'z'));
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "");
  EXPECT_EQ(Stats().rejected_oversize, 1u);
  EXPECT_EQ(Stats().rejected, 1u);
}

TEST_F(ConnectionTest, PeerClosingMidRequestIsCountedIncomplete) {
  ClientSends("half");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kReading);
  shutdown(client_fd_, SHUT_WR);
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(Stats().closed_incomplete, 1u);
  EXPECT_EQ(Stats().closed_unused, 0u);  // it sent a part of a request
  EXPECT_EQ(Stats().served, 0u);
}

// A speculative connect (or a probe) is told apart from a request cut short.
TEST_F(ConnectionTest, PeerClosingWithoutAByteIsCountedUnused) {
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kReading);
  EXPECT_TRUE(connection_->unused());
  shutdown(client_fd_, SHUT_WR);
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(Stats().closed_incomplete, 1u);
  EXPECT_EQ(Stats().closed_unused, 1u);
}

TEST_F(ConnectionTest, HalfClosedPeerStillGetsItsAnswer) {
  ClientSends("last\n");
  shutdown(client_fd_, SHUT_WR);
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "worker=0 last\n");
  EXPECT_EQ(Stats().closed_incomplete, 0u);
}

TEST_F(ConnectionTest, HandlerCloseSendsNothing) {
  ClientSends("drop\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "");
  EXPECT_EQ(Stats().closed_by_handler, 1u);
}

TEST_F(ConnectionTest, KeepaliveServesSeveralRequestsAndRestartsTheDeadline) {
  connection_->set_keepalive(absl::Seconds(5));
  ClientSends("one\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kReading);
  EXPECT_EQ(ClientReceives(), "worker=0 one\n");
  EXPECT_TRUE(connection_->TakeMessageConsumed());
  EXPECT_TRUE(connection_->idle());
  ClientSends("tw");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kReading);
  EXPECT_FALSE(connection_->TakeMessageConsumed());  // a partial request restarts nothing
  EXPECT_FALSE(connection_->idle());
  ClientSends("o\nquit\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "worker=0 two\nworker=0 quit\n");
}

// Parking hands the whole state over (the worker's scratch connection to a pooled one): the
// request continues where it stopped, and the scratch is fresh for the next single pass.
TEST_F(ConnectionTest, TakeOverMovesTheStateAndLeavesAFreshConnection) {
  connection_->set_keepalive(absl::Seconds(5));
  ClientSends("one\ntw");
  ASSERT_EQ(connection_->Advance(env_), ConnectionState::kReading);
  EXPECT_EQ(ClientReceives(), "worker=0 one\n");
  const SteadyTime deadline = SteadyTime{} + std::chrono::seconds(7);
  connection_->deadlines().read = deadline;
  connection_->deadlines().read_is_idle = true;

  Connection parked(64, /*output_capacity=*/0);
  parked.TakeOver(*connection_);
  EXPECT_EQ(parked.fd(), server_fd_);
  EXPECT_EQ(parked.state(), ConnectionState::kReading);
  EXPECT_TRUE(parked.served());
  EXPECT_TRUE(parked.TakeMessageConsumed());
  EXPECT_EQ(parked.deadlines().read, deadline);
  EXPECT_TRUE(parked.deadlines().read_is_idle);
  EXPECT_EQ(parked.in().size(), 2u);
  // Buffers are swapped, not copied: the output buffer goes too (the worker takes it back
  // from a connection that waits to read).
  EXPECT_TRUE(parked.has_output());

  EXPECT_EQ(connection_->fd(), -1);
  EXPECT_EQ(connection_->state(), ConnectionState::kReading);
  EXPECT_FALSE(connection_->served());
  EXPECT_FALSE(connection_->TakeMessageConsumed());
  EXPECT_FALSE(connection_->deadlines().read.has_value());
  EXPECT_TRUE(connection_->in().empty());
  EXPECT_FALSE(connection_->has_output());

  ClientSends("o\nquit\n");
  EXPECT_EQ(parked.Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "worker=0 two\nworker=0 quit\n");
}

TEST_F(ConnectionTest, FullOutputIsSentBeforeTheRestIsProcessed) {
  LineProtocolOptions options;
  options.output_bytes = 32;  // room for two answers at a time
  Open(options);
  ClientSends("1\n2\n3\n4\n5\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "worker=0 1\nworker=0 2\nworker=0 3\nworker=0 4\nworker=0 5\n");
  EXPECT_EQ(Stats().sends, 3u);
}

TEST_F(ConnectionTest, FullSocketWaitsForWriteThenFinishes) {
  LineProtocolOptions options;
  options.output_bytes = 8 << 20;
  Open(options);
  ClientSends("big 4000000\n");
  ASSERT_EQ(connection_->Advance(env_), ConnectionState::kWriting);
  connection_->deadlines().write = SteadyTime{} + std::chrono::seconds(1);  // as parked
  std::string received;
  ConnectionState next = ConnectionState::kWriting;
  for (int round = 0; round < 10000 && next == ConnectionState::kWriting; ++round) {
    received += ClientReceives();
    next = connection_->Advance(env_);
  }
  EXPECT_EQ(next, ConnectionState::kClosed);
  received += ClientReceives();
  EXPECT_EQ(received.size(), 4000001u);
  EXPECT_FALSE(connection_->deadlines().write.has_value());  // sent whole: disarmed
  EXPECT_EQ(Stats().responses, 1u);
  EXPECT_GT(Stats().sends, 1u);
}

// A body attached by the handler (OutputBuffer::AttachBody) goes after the head: by sendfile
// from its file, through a socket that fills many times, whole and in order.
TEST_F(ConnectionTest, AttachedBodyIsSentByFileAfterTheHead) {
  for (const std::string kind : {"file", "mem"}) {
    SCOPED_TRACE(kind);
    WorkerStats fresh;
    Open(LineProtocolOptions{});  // a 4 KiB output buffer: the body is not in it
    env_.stats = &fresh;
    ClientSends(kind + " 3000000\n");
    ASSERT_EQ(connection_->Advance(env_), ConnectionState::kWriting);
    std::string received;
    ConnectionState next = ConnectionState::kWriting;
    for (int round = 0; round < 100000 && next == ConnectionState::kWriting; ++round) {
      received += ClientReceives();
      next = connection_->Advance(env_);
    }
    EXPECT_EQ(next, ConnectionState::kClosed);
    received += ClientReceives();
    const std::string head = "body 3000000\n";
    ASSERT_EQ(received.size(), head.size() + 3000000);
    EXPECT_EQ(received.substr(0, head.size()), head);
    EXPECT_TRUE(received.substr(head.size()) == testing::BodyPattern().substr(0, 3000000));
    const StatsSnapshot stats = fresh.Read();
    EXPECT_EQ(stats.responses, 1u);
    EXPECT_EQ(stats.sendfile_bytes, kind == "file" ? 3000000u : 0u);
  }
  env_.stats = &stats_;
}

// Lines after a body wait until it is sent, then get their answers on the same connection.
TEST_F(ConnectionTest, LinesAfterABodyAreAnsweredAfterIt) {
  ClientSends("file 1000\nafter\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  const std::string received = ClientReceives();
  EXPECT_EQ(received, absl::StrCat("body 1000\n", testing::BodyPattern().substr(0, 1000),
                                   "worker=0 after\n"));
  EXPECT_EQ(Stats().sendfile_bytes, 1000u);
}

// A handler that never makes progress must not make the server spin.
class StuckHandler : public Handler {
 public:
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override {
    const uint8_t byte = '!';
    (void)out.Append({&byte, 1});
    return {Action::kWriteThenRead, 0};
  }
};

// A call that consumed nothing is not repeated on the same bytes (handler.h kWriteThenRead):
// the answer goes out once and the connection waits for more bytes instead of spinning.
TEST_F(ConnectionTest, HandlerWithoutProgressWaitsForBytes) {
  StuckHandler stuck;
  env_.handler = &stuck;
  ClientSends("x");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kReading);
  EXPECT_EQ(ClientReceives(), "!");
  EXPECT_EQ(Stats().handler_loops, 0u);
}

TEST(InputBufferTest, ConsumeAndCompact) {
  InputBuffer buffer(8);
  absl::Span<uint8_t> tail = buffer.WritableTail();
  ASSERT_EQ(tail.size(), 8u);
  std::memcpy(tail.data(), "abcdefgh", 8);
  buffer.Commit(8);
  buffer.Consume(6);
  EXPECT_EQ(buffer.size(), 2u);
  tail = buffer.WritableTail();
  EXPECT_EQ(tail.size(), 6u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buffer.contents().data()), 2), "gh");
  buffer.Consume(100);
  EXPECT_TRUE(buffer.empty());
}

// Lingering close (ConnectionState::kLingering): a final response sent while request bytes are left
// over shuts the write side down and discards input until the client's EOF, instead of a close()
// that would reset the connection under the unread bytes.
bool ClientSeesEof(int fd) {
  char byte;
  return recv(fd, &byte, 1, 0) == 0;
}

TEST_F(ConnectionTest, LeftoverInputLingersUntilTheClientCloses) {
  env_.linger = true;
  ClientSends("hello\nthe client is still sen");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kLingering);
  EXPECT_EQ(connection_->state(), ConnectionState::kLingering);
  EXPECT_FALSE(connection_->idle());
  EXPECT_EQ(ClientReceives(), "worker=0 hello\n");
  EXPECT_TRUE(ClientSeesEof(client_fd_));  // FIN after the response
  ClientSends("ding more\nand more\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kLingering);  // discarded, not answered
  EXPECT_EQ(ClientReceives(), "");
  shutdown(client_fd_, SHUT_WR);
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(Stats().lingering_closes, 1u);
  EXPECT_EQ(Stats().linger_cut, 0u);
  EXPECT_EQ(Stats().responses, 1u);
}

TEST_F(ConnectionTest, NoLingerWhenEverythingWasConsumedOrLingerIsOff) {
  env_.linger = true;
  ClientSends("hello\n");  // the usual single pass: nothing left, a short read
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(Stats().lingering_closes, 0u);
  Open(LineProtocolOptions{});
  env_.linger = false;
  ClientSends("hello\nmore");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(Stats().lingering_closes, 0u);
  // The client already half-closed: the linger meets its EOF at once, in the same pass.
  Open(LineProtocolOptions{});
  env_.linger = true;
  ClientSends("hello\nmore");
  shutdown(client_fd_, SHUT_WR);
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "worker=0 hello\n");
  EXPECT_EQ(Stats().linger_cut, 0u);
}

// Handlers consume exactly what they parsed (handler.h), so a request that came in pieces and
// was consumed whole closes at once; bytes left over after it are what asks for a linger.
TEST_F(ConnectionTest, RequestInPiecesConsumedWholeClosesAtOnce) {
  env_.linger = true;
  ClientSends("hel");
  ASSERT_EQ(connection_->Advance(env_), ConnectionState::kReading);
  ClientSends("lo\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "worker=0 hello\n");
  EXPECT_EQ(Stats().lingering_closes, 0u);
}

TEST_F(ConnectionTest, LingerDiscardsAtMostTheByteBound) {
  env_.linger = true;
  ClientSends("hello\nx");
  ASSERT_EQ(connection_->Advance(env_), ConnectionState::kLingering);
  const std::string chunk(8192, 'x');
  ConnectionState next = ConnectionState::kLingering;
  for (int i = 0; i < 64 && next == ConnectionState::kLingering; ++i) {
    ClientSends(chunk);
    next = connection_->Advance(env_);
  }
  EXPECT_EQ(next, ConnectionState::kClosed);
  EXPECT_EQ(Stats().linger_cut, 1u);
}

// Pipelined requests where a read fills the input buffer exactly at a request boundary: the
// handler must not take it for the end of its input and close, discarding (and resetting) the
// rest.
// Every request is answered however the requests fall across reads.
TEST_F(ConnectionTest, PipelinedRequestsAcrossFullReadsAreAllAnswered) {
  LineProtocolOptions options;
  options.max_line_bytes = 63;  // an input buffer of 64 bytes
  options.output_bytes = 1 << 20;
  Open(options);
  std::string requests;
  for (int i = 0; i < 64; ++i) requests += "abcdefg\n";  // 8 bytes: every read ends at a boundary
  ClientSends(requests);
  ConnectionState state = ConnectionState::kReading;
  for (int turn = 0; turn < 20 && state != ConnectionState::kClosed; ++turn) {
    state = connection_->Advance(env_);
    if (turn == 0) shutdown(client_fd_, SHUT_WR);  // all sent: the client's EOF follows
  }
  EXPECT_EQ(state, ConnectionState::kClosed);
  const std::string reply = ClientReceives();
  EXPECT_EQ(std::count(reply.begin(), reply.end(), '\n'), 64) << reply;
  EXPECT_EQ(Stats().closed_incomplete, 0u);
}

}  // namespace
}  // namespace onepass

namespace onepass {
namespace {

// A FinalSendQueue that records what it was given (the io_uring loop's role,
// server/drivers/uring/uring_driver.h), or declines.
class RecordingFinalSend : public FinalSendQueue {
 public:
  explicit RecordingFinalSend(bool accept) : accept_(accept) {}
  bool QueueFinalSend(int fd, absl::Span<const uint8_t> bytes) override {
    ++calls;
    last_fd = fd;
    if (accept_) queued.assign(bytes.begin(), bytes.end());
    return accept_;
  }
  int calls = 0;
  int last_fd = -1;
  std::string queued;

 private:
  bool accept_;
};

// The ring loop receives for the connection: the same bytes taken by AdvanceReceived give the
// same answer, counters and state as Advance's own recv.
TEST_F(ConnectionTest, ReceivedByTheLoopIsServedAsIfReadByAdvance) {
  ClientSends("hello\n");
  absl::Span<uint8_t> tail = connection_->ReceiveTail();
  const ssize_t received = recv(server_fd_, tail.data(), tail.size(), MSG_DONTWAIT);
  ASSERT_EQ(received, 6);
  EXPECT_EQ(connection_->AdvanceReceived(env_, received, tail.size()), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "worker=0 hello\n");
  const StatsSnapshot stats = Stats();
  EXPECT_EQ(stats.responses, 1u);
  EXPECT_EQ(stats.sends, 1u);
  EXPECT_EQ(stats.recvs, 1u);
}

TEST_F(ConnectionTest, ReceivedNothingYetWaitsToRead) {
  absl::Span<uint8_t> tail = connection_->ReceiveTail();
  EXPECT_EQ(connection_->AdvanceReceived(env_, -EAGAIN, tail.size()), ConnectionState::kReading);
  ClientSends("hel");
  tail = connection_->ReceiveTail();
  const ssize_t received = recv(server_fd_, tail.data(), tail.size(), MSG_DONTWAIT);
  EXPECT_EQ(connection_->AdvanceReceived(env_, received, tail.size()), ConnectionState::kReading);
  ClientSends("lo\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(ClientReceives(), "worker=0 hello\n");
}

TEST_F(ConnectionTest, ReceiveErrorFromTheLoopClosesAsAReset) {
  absl::Span<uint8_t> tail = connection_->ReceiveTail();
  EXPECT_EQ(connection_->AdvanceReceived(env_, -ECONNRESET, tail.size()), ConnectionState::kClosed);
  EXPECT_EQ(Stats().reset_errors, 1u);
}

// The last send of a connection that closes at once goes to the queue, whole; the connection
// sends nothing itself and counts it sent.
TEST_F(ConnectionTest, LastSendGoesToTheFinalSendQueue) {
  RecordingFinalSend queue(/*accept=*/true);
  env_.final_send = &queue;
  ClientSends("hello\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(queue.calls, 1);
  EXPECT_EQ(queue.last_fd, server_fd_);
  EXPECT_EQ(queue.queued, "worker=0 hello\n");
  EXPECT_EQ(ClientReceives(), "");  // the queue sends it
  EXPECT_EQ(Stats().responses, 1u);
}

TEST_F(ConnectionTest, DeclinedFinalSendIsSentByTheConnection) {
  RecordingFinalSend queue(/*accept=*/false);
  env_.final_send = &queue;
  ClientSends("hello\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kClosed);
  EXPECT_EQ(queue.calls, 1);
  EXPECT_EQ(ClientReceives(), "worker=0 hello\n");
}

// A response on a connection that stays open is not a last send: the queue never sees it.
TEST_F(ConnectionTest, KeptOpenResponsesNeverGoToTheFinalSendQueue) {
  connection_->set_keepalive(absl::Seconds(5));
  RecordingFinalSend queue(/*accept=*/true);
  env_.final_send = &queue;
  ClientSends("hello\n");
  EXPECT_EQ(connection_->Advance(env_), ConnectionState::kReading);
  EXPECT_EQ(queue.calls, 0);
  EXPECT_EQ(ClientReceives(), "worker=0 hello\n");
}

}  // namespace
}  // namespace onepass
