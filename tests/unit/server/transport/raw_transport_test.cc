// Plain TCP as a transport: the received bytes are the request, a ClientHello on a plain port
// is told apart, and the answer leaves in one send, corked with the close only when it is the
// connection's last.
#include "server/transport/raw_transport.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/server/transport/fake_send_path.h"

namespace onepass {
namespace {

using testing::FakeSendPath;

// What a recv into the transport's tail brings.
Intake Receive(RawTransport& transport, InputBuffer& input, const std::string& bytes,
               FakeSendPath& send) {
  absl::Span<uint8_t> tail = transport.ReceiveTail(input);
  std::memcpy(tail.data(), bytes.data(), bytes.size());
  return transport.TakeReceived(bytes.size(), input, send);
}

std::string Contents(const InputBuffer& input) {
  return std::string(reinterpret_cast<const char*>(input.contents().data()), input.size());
}

TEST(RawTransportTest, ReceivedBytesAreTheRequestInTheInputItself) {
  RawTransport transport;
  transport.Start();
  InputBuffer input(64);
  FakeSendPath send;
  EXPECT_EQ(transport.ReceiveTail(input).data(), input.WritableTail().data());
  EXPECT_EQ(Receive(transport, input, "hello\n", send), Intake::kInput);
  EXPECT_EQ(Contents(input), "hello\n");
  EXPECT_EQ(transport.owed(), Owed::kNothing);
  EXPECT_FALSE(transport.encrypted());
  EXPECT_FALSE(transport.handshaking());
  EXPECT_TRUE(send.sent.empty());
}

TEST(RawTransportTest, ClientHelloAsFirstBytesIsTheWrongProtocolOnlyAtTheStart) {
  const std::string hello("\x16\x03\x01\x00\x40\x01", 6);
  RawTransport transport;
  InputBuffer input(64);
  FakeSendPath send;
  transport.Start();
  EXPECT_EQ(Receive(transport, input, hello, send), Intake::kWrongProtocol);
  // The same bytes later in a connection are request bytes like any other.
  input.Clear();
  transport.Start();
  EXPECT_EQ(Receive(transport, input, "a", send), Intake::kInput);
  EXPECT_EQ(Receive(transport, input, hello, send), Intake::kInput);
  // Bytes that came with a PROXY header are the first ones: not checked again.
  input.Clear();
  transport.Start();
  input.WritableTail()[0] = 'x';
  input.Commit(1);
  transport.AfterProxyHeader(input, {});
  EXPECT_EQ(Receive(transport, input, hello, send), Intake::kInput);
}

TEST(RawTransportTest, TheLastAnswerIsCorkedWithTheCloseOnlyWhenClosing) {
  RawTransport transport;
  FakeSendPath send;
  OutputBuffer out(64);
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>("answer"), 6}));
  EXPECT_EQ(transport.Flush(out, /*closing=*/true, send), Flushed::kAll);
  ASSERT_EQ(send.sends.size(), 1u);
  EXPECT_TRUE(send.sends[0].last);
  EXPECT_EQ(send.sent, "answer");
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>("more"), 4}));
  EXPECT_EQ(transport.Flush(out, /*closing=*/false, send), Flushed::kAll);
  EXPECT_FALSE(send.sends[1].last);
  // Closing, but the connection will wait for the kernel first: no cork.
  send.cork = false;
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>("x"), 1}));
  EXPECT_EQ(transport.Flush(out, /*closing=*/true, send), Flushed::kAll);
  EXPECT_FALSE(send.sends[2].last);
}

TEST(RawTransportTest, PartialSendWaitsAndAFailedSendIsAnError) {
  RawTransport transport;
  FakeSendPath send;
  send.room = 3;
  OutputBuffer out(64);
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>("answer"), 6}));
  EXPECT_EQ(transport.Flush(out, true, send), Flushed::kWouldBlock);
  EXPECT_EQ(out.pending(), 3u);
  EXPECT_EQ(transport.Flush(out, true, send), Flushed::kWouldBlock);  // EAGAIN
  send.room = SIZE_MAX;
  EXPECT_EQ(transport.Flush(out, true, send), Flushed::kAll);
  EXPECT_EQ(send.sent, "answer");
  send.error = ECONNRESET;
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>("x"), 1}));
  EXPECT_EQ(transport.Flush(out, true, send), Flushed::kSendError);
}

}  // namespace
}  // namespace onepass
