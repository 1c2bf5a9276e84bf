// TLS as a transport, through OpenSSL's client over memory: the handshake flight owed before
// the next recv, the request decrypted into the connection's input, the answer a record per
// message with close_notify riding on the last; and the factory's admission: a prefix at its
// share of the handshake room refused at its ClientHello, a full room making space from the
// handshake that waited longest (the core asked to evict it).
#include "server/transport/tls/tls_transport.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/transport/tls/tls_transport_factory.h"
#include "tests/unit/server/tls/tls_test_client.h"
#include "tests/unit/server/tls/tls_test_pki.h"
#include "tests/unit/server/transport/fake_send_path.h"

namespace onepass {
namespace {

using testing::FakeSendPath;
using tls::testing::TestTlsClient;

std::shared_ptr<const tls::TlsServerContext> Context() {
  static const auto* const pki = new tls::testing::TestPkiDir();
  tls::TlsConfig config;
  config.cert_file = pki->chain_file();
  config.key_file = pki->key_file();
  absl::StatusOr<std::shared_ptr<const tls::TlsServerContext>> made =
      tls::TlsServerContext::Create(config, absl::Now());
  EXPECT_TRUE(made.ok()) << made.status();
  return made.ok() ? *made : nullptr;
}

std::array<uint8_t, 16> V4(uint8_t host) {
  return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, host};
}

// The client's pending bytes, received by the transport.
Intake Deliver(TestTlsClient& client, Transport& transport, InputBuffer& input,
               FakeSendPath& send) {
  client.Step();
  const std::string bytes = client.TakeOutput();
  absl::Span<uint8_t> tail = transport.ReceiveTail(input);
  EXPECT_LE(bytes.size(), tail.size());
  std::memcpy(tail.data(), bytes.data(), bytes.size());
  return transport.TakeReceived(bytes.size(), input, send);
}

class Evictions final : public TransportHost {
 public:
  void Evict(void* owner) override {
    evicted.push_back(owner);
    static_cast<Transport*>(owner)->Ended();  // as the core's close does
  }
  std::vector<void*> evicted;
};

TEST(TlsTransportTest, HandshakeRequestAndAnswerWithCloseNotify) {
  TlsTransportFactory factory(Context(), /*limits=*/nullptr);
  std::unique_ptr<Transport> transport = factory.Make();
  ASSERT_TRUE(factory.Start(*transport, V4(1), transport.get()));
  EXPECT_TRUE(transport->encrypted());
  EXPECT_TRUE(transport->handshaking());
  TestTlsClient client;
  InputBuffer input(1024);
  FakeSendPath send;
  EXPECT_EQ(Deliver(client, *transport, input, send), Intake::kNeedMore);
  // The server's flight is owed before the client sends on.
  ASSERT_EQ(transport->owed(), Owed::kSend);
  OutputBuffer out(4096);
  EXPECT_EQ(transport->Flush(out, /*closing=*/false, send), Flushed::kAll);
  EXPECT_EQ(transport->owed(), Owed::kNothing);
  client.GiveInput(send.sent);
  send.sent.clear();
  send.sends.clear();
  ASSERT_TRUE(client.Step());
  client.Write("query\n");
  EXPECT_EQ(Deliver(client, *transport, input, send), Intake::kInput);
  EXPECT_FALSE(transport->handshaking());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(input.contents().data()), input.size()),
            "query\n");
  // Two messages: two records, in one send with the ticket, close_notify after them.
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>("one\n"), 4}));
  out.EndMessage();
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>("two\n"), 4}));
  out.EndMessage();
  EXPECT_EQ(transport->Flush(out, /*closing=*/true, send), Flushed::kAll);
  EXPECT_EQ(send.sends.size(), 1u);
  EXPECT_TRUE(send.sends.back().last);
  client.GiveInput(send.sent);
  bool closed = false;
  EXPECT_EQ(client.Read(&closed), "one\ntwo\n");
  EXPECT_TRUE(closed);
  EXPECT_EQ(factory.stats().Read().handshakes_full, 1u);
}

TEST(TlsTransportTest, GarbageFailsWithAnAlertSentAndCounted) {
  TlsTransportFactory factory(Context(), nullptr);
  std::unique_ptr<Transport> transport = factory.Make();
  ASSERT_TRUE(factory.Start(*transport, V4(1), nullptr));
  InputBuffer input(1024);
  FakeSendPath send;
  const std::string garbage = "GET / HTTP/1.1\r\n\r\n";
  absl::Span<uint8_t> tail = transport->ReceiveTail(input);
  std::memcpy(tail.data(), garbage.data(), garbage.size());
  EXPECT_EQ(transport->TakeReceived(garbage.size(), input, send), Intake::kFailed);
  EXPECT_EQ(factory.stats().Read().failed_total(), 1u);
}

TEST(TlsTransportTest, APrefixAtItsShareIsRefusedAtItsHello) {
  const TlsTransportFactory::Limits limits{
      .max_handshakes = 8, .handshakes_per_client = 1, .rates = {}};
  TlsTransportFactory factory(Context(), &limits);
  Evictions host;
  factory.set_host(&host);
  InputBuffer input(1024);
  FakeSendPath send;
  std::unique_ptr<Transport> first = factory.Make();
  ASSERT_TRUE(factory.Start(*first, V4(1), first.get()));
  TestTlsClient first_client;
  EXPECT_EQ(Deliver(first_client, *first, input, send), Intake::kNeedMore);
  first->Parked();  // waits for the client's Finished, in the room
  // The same address again: its share is held.
  std::unique_ptr<Transport> second = factory.Make();
  ASSERT_TRUE(factory.Start(*second, V4(1), second.get()));
  TestTlsClient second_client;
  EXPECT_EQ(Deliver(second_client, *second, input, send), Intake::kFailed);
  EXPECT_EQ(factory.stats().failed_by(tls::TlsFailure::k_limit).load(), 1u);
  // Another address is served.
  std::unique_ptr<Transport> other = factory.Make();
  ASSERT_TRUE(factory.Start(*other, V4(2), other.get()));
  TestTlsClient other_client;
  EXPECT_EQ(Deliver(other_client, *other, input, send), Intake::kNeedMore);
  EXPECT_TRUE(host.evicted.empty());
  // The first one ends: its prefix may have another.
  first->Ended();
  std::unique_ptr<Transport> third = factory.Make();
  ASSERT_TRUE(factory.Start(*third, V4(1), third.get()));
  TestTlsClient third_client;
  EXPECT_EQ(Deliver(third_client, *third, input, send), Intake::kNeedMore);
}

TEST(TlsTransportTest, AFullRoomEvictsTheHandshakeThatWaitedLongest) {
  const TlsTransportFactory::Limits limits{
      .max_handshakes = 2, .handshakes_per_client = 0, .rates = {}};
  TlsTransportFactory factory(Context(), &limits);
  Evictions host;
  factory.set_host(&host);
  InputBuffer input(1024);
  FakeSendPath send;
  std::vector<std::unique_ptr<Transport>> transports;
  std::vector<std::unique_ptr<TestTlsClient>> clients;
  for (uint8_t host_byte = 1; host_byte <= 3; ++host_byte) {
    transports.push_back(factory.Make());
    Transport& transport = *transports.back();
    ASSERT_TRUE(factory.Start(transport, V4(host_byte), &transport));
    clients.push_back(std::make_unique<TestTlsClient>());
    EXPECT_EQ(Deliver(*clients.back(), transport, input, send), Intake::kNeedMore);
    transport.Parked();
  }
  ASSERT_EQ(host.evicted.size(), 1u);
  EXPECT_EQ(host.evicted[0], transports[0].get());
  EXPECT_EQ(factory.stats().failed_by(tls::TlsFailure::k_evicted).load(), 1u);
  // A timeout mid-handshake is counted as one.
  transports[1]->TimedOut();
  EXPECT_EQ(factory.stats().failed_by(tls::TlsFailure::k_timeout).load(), 1u);
}

}  // namespace
}  // namespace onepass
