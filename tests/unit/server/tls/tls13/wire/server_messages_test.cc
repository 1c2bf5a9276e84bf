// The server's handshake writers: each message RFC 8448 prints, reproduced byte for byte
// (§3's ServerHello and whole encrypted flight, §4's ServerHello with pre_shared_key, §5's
// HelloRetryRequest, §3's NewSessionTicket up to its early_data extension); the rest
// checked by hand against RFC 8446's structures; the arguments no message may carry; and a
// writer that runs out of room at every byte.
#include "server/tls/tls13/wire/server_messages.h"

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/tls/tls13/wire/client_hello.h"
#include "server/tls/tls13/wire/client_messages.h"
#include "server/tls/tls13/wire/handshake_reader.h"
#include "server/tls/tls13/wire/handshake_type.h"
#include "tests/unit/server/tls/tls13/crypto/rfc8448_simple.h"
#include "tests/unit/server/tls/tls13/wire/rfc8448_messages.h"
#include "tests/unit/server/tls/tls13/wire/wire_test_util.h"

namespace onepass::tls::tls13 {
namespace {

using testing::ByteVec;
using testing::Hex;
using testing::kAes128GcmSha256;
using testing::kRsaPssRsaeSha256;
using testing::Vec;

// RFC 8448 §3's flight: EncryptedExtensions (40 bytes), Certificate (445), CertificateVerify
// (136), Finished (36).
struct Rfc8448Flight {
  ByteVec all = Hex(testing::kRfc8448ServerFlight);
  ByteVec Slice(size_t from, size_t n) const {
    return ByteVec(all.begin() + from, all.begin() + from + n);
  }
  ByteVec encrypted_extensions() const { return Slice(0, 40); }
  ByteVec certificate() const { return Slice(40, 445); }
  ByteVec certificate_der() const { return Slice(40 + 4 + 1 + 3 + 3, 432); }
  ByteVec certificate_verify() const { return Slice(485, 136); }
  ByteVec signature() const { return Slice(485 + 8, 128); }
  ByteVec finished() const { return Slice(621, 36); }
};

// RFC 8448 §3's EncryptedExtensions: supported_groups, record_size_limit, server_name.
constexpr uint16_t kRfc8448Groups[] = {0x001d, 0x0017, 0x0018, 0x0019, 0x0100,
                                       0x0101, 0x0102, 0x0103, 0x0104};
EncryptedExtensionsFields Rfc8448EncryptedExtensions() {
  EncryptedExtensionsFields fields;
  fields.supported_groups = kRfc8448Groups;
  fields.record_size_limit = 0x4001;
  fields.server_name_acknowledged = true;
  return fields;
}

TEST(ServerMessages, FlightFitsTheRfcLayout) {
  const Rfc8448Flight flight;
  ASSERT_EQ(flight.all.size(), 657u);
  EXPECT_EQ(flight.certificate_der()[0], 0x30);  // a DER SEQUENCE, 4 + 0x1ac bytes
  EXPECT_EQ(flight.certificate_der()[3], 0xac);
  EXPECT_EQ(flight.certificate_verify()[0], kCertificateVerify);
  EXPECT_EQ(flight.finished()[0], kFinished);
}

TEST(ServerMessages, ServerHelloIsRfc8448Section3) {
  const ByteVec random = Hex(testing::kRfc8448ServerRandom);
  const ByteVec key = Hex(testing::kRfc8448ServerPublicKey);
  uint8_t buffer[512];
  MessageWriter out(buffer);
  const absl::Span<const uint8_t> message = WriteServerHello({.random = random,
                                                              .legacy_session_id = {},
                                                              .cipher_suite = kAes128GcmSha256,
                                                              .key_share_group = kGroupX25519,
                                                              .key_share = key},
                                                             &out);
  EXPECT_EQ(Vec(message), Hex(testing::kRfc8448ServerHello));
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(Vec(out.written()), Vec(message));
}

TEST(ServerMessages, ServerHelloWithPskIsRfc8448Section4) {
  const ByteVec random = Hex(testing::kRfc8448ResumedServerRandom);
  const ByteVec key = Hex(testing::kRfc8448ResumedServerPublicKey);
  uint8_t buffer[512];
  MessageWriter out(buffer);
  const absl::Span<const uint8_t> message = WriteServerHello({.random = random,
                                                              .cipher_suite = kAes128GcmSha256,
                                                              .key_share_group = kGroupX25519,
                                                              .key_share = key,
                                                              .has_psk = true,
                                                              .psk_identity = 0},
                                                             &out);
  EXPECT_EQ(Vec(message), Hex(testing::kRfc8448ResumedServerHello));
}

TEST(ServerMessages, ServerHelloEchoesTheSessionIdAndIdentity) {
  const ByteVec random(32, 0xaa);
  const ByteVec session_id(32, 0x55);
  const ByteVec key = {1, 2, 3};
  uint8_t buffer[512];
  MessageWriter out(buffer);
  const ByteVec message = Vec(WriteServerHello({.random = random,
                                                .legacy_session_id = session_id,
                                                .cipher_suite = 0x1302,
                                                .key_share_group = kGroupSecp256r1,
                                                .key_share = key,
                                                .has_psk = true,
                                                .psk_identity = 3},
                                               &out));
  ByteVec expected = {kServerHello, 0, 0, 0, 0x03, 0x03};
  expected.insert(expected.end(), random.begin(), random.end());
  expected.push_back(32);
  expected.insert(expected.end(), session_id.begin(), session_id.end());
  const ByteVec tail = {0x13, 0x02, 0x00,                    // suite, null
                        0x00, 0x17,                          // extensions
                        0x00, 0x29, 0x00, 0x02, 0x00, 0x03,  // selected_identity
                        0x00, 0x33, 0x00, 0x07, 0x00, 0x17, 0x00, 0x03, 1, 2, 3,  // key_share
                        0x00, 0x2b, 0x00, 0x02, 0x03, 0x04};  // supported_versions
  expected.insert(expected.end(), tail.begin(), tail.end());
  expected[3] = static_cast<uint8_t>(expected.size() - 4);
  EXPECT_EQ(message, expected);
}

TEST(ServerMessages, ServerHelloRefusesWhatNoMessageCarries) {
  const ByteVec random(32, 1);
  const ByteVec short_random(31, 1);
  const ByteVec long_session_id(33, 2);
  const ByteVec key = {1};
  const ServerHelloFields bad[] = {
      {.random = short_random, .key_share = key},
      {.random = random, .legacy_session_id = long_session_id, .key_share = key},
      {.random = random, .key_share = {}},
  };
  for (const ServerHelloFields& fields : bad) {
    uint8_t buffer[512];
    MessageWriter out(buffer);
    EXPECT_TRUE(WriteServerHello(fields, &out).empty());
    EXPECT_FALSE(out.ok());
    EXPECT_EQ(out.size(), 0u);
  }
}

TEST(ServerMessages, HelloRetryRequestIsRfc8448Section5) {
  const ByteVec expected = Hex(testing::kRfc8448HelloRetryRequest);
  ASSERT_EQ(expected.size(), 176u);
  // The cookie is opaque to the client: take it from where the HRR carries it.
  const ByteVec cookie(expected.begin() + 56, expected.begin() + 56 + 114);
  uint8_t buffer[512];
  MessageWriter out(buffer);
  const absl::Span<const uint8_t> message =
      WriteHelloRetryRequest({}, kAes128GcmSha256, kGroupSecp256r1, cookie, &out);
  EXPECT_EQ(Vec(message), expected);
}

TEST(ServerMessages, HelloRetryRequestWithoutCookie) {
  const ByteVec session_id = {9, 8};
  uint8_t buffer[512];
  MessageWriter out(buffer);
  const ByteVec message = Vec(WriteHelloRetryRequest(session_id, 0x1303, kGroupX25519, {}, &out));
  ByteVec expected = {kServerHello, 0, 0, 0, 0x03, 0x03};
  expected.insert(expected.end(), std::begin(kHelloRetryRequestRandom),
                  std::end(kHelloRetryRequestRandom));
  const ByteVec tail = {2,    9,    8,                        // legacy_session_id_echo
                        0x13, 0x03, 0x00,                     // suite, null compression
                        0x00, 0x0c,                           // extensions
                        0x00, 0x33, 0x00, 0x02, 0x00, 0x1d,   // key_share: selected_group
                        0x00, 0x2b, 0x00, 0x02, 0x03, 0x04};  // supported_versions
  expected.insert(expected.end(), tail.begin(), tail.end());
  expected[3] = static_cast<uint8_t>(expected.size() - 4);
  EXPECT_EQ(message, expected);

  const ByteVec long_session_id(33, 0);
  out.Clear();
  EXPECT_TRUE(WriteHelloRetryRequest(long_session_id, 0x1301, kGroupX25519, {}, &out).empty());
  EXPECT_FALSE(out.ok());
}

TEST(ServerMessages, EncryptedExtensionsIsRfc8448Section3) {
  const Rfc8448Flight flight;
  uint8_t buffer[512];
  MessageWriter out(buffer);
  EXPECT_EQ(Vec(WriteEncryptedExtensions(Rfc8448EncryptedExtensions(), &out)),
            flight.encrypted_extensions());
}

TEST(ServerMessages, EncryptedExtensionsEmptyAndWithAlpn) {
  uint8_t buffer[512];
  MessageWriter out(buffer);
  EXPECT_EQ(Vec(WriteEncryptedExtensions({}, &out)),
            (ByteVec{kEncryptedExtensions, 0, 0, 2, 0, 0}));

  const std::string dot = "dot";
  EncryptedExtensionsFields fields;
  fields.alpn_protocol = absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(dot.data()), 3);
  fields.server_name_acknowledged = true;
  fields.record_size_limit = 16385;
  out.Clear();
  EXPECT_EQ(Vec(WriteEncryptedExtensions(fields, &out)), (ByteVec{kEncryptedExtensions,
                                                                  0,
                                                                  0,
                                                                  0x16,
                                                                  0x00,
                                                                  0x14,  //
                                                                  0x00,
                                                                  0x1c,
                                                                  0x00,
                                                                  0x02,
                                                                  0x40,
                                                                  0x01,  // record_size_limit
                                                                  0x00,
                                                                  0x00,
                                                                  0x00,
                                                                  0x00,  // server_name, empty
                                                                  0x00,
                                                                  0x10,
                                                                  0x00,
                                                                  0x06,
                                                                  0x00,
                                                                  0x04,
                                                                  3,
                                                                  'd',
                                                                  'o',
                                                                  't'}));  // ALPN
}

TEST(ServerMessages, EncryptedExtensionsRefusesWhatNoMessageCarries) {
  const ByteVec long_name(256, 'a');
  EncryptedExtensionsFields bad[4];
  bad[0].alpn_protocol = long_name;
  bad[1].record_size_limit = 63;
  bad[2].record_size_limit = 16386;
  bad[3].record_size_limit = 0xffff;
  for (const EncryptedExtensionsFields& fields : bad) {
    uint8_t buffer[512];
    MessageWriter out(buffer);
    EXPECT_TRUE(WriteEncryptedExtensions(fields, &out).empty());
    EXPECT_FALSE(out.ok());
    EXPECT_EQ(out.size(), 0u);
  }
  EncryptedExtensionsFields edge;
  edge.record_size_limit = 64;
  uint8_t buffer[512];
  MessageWriter out(buffer);
  EXPECT_FALSE(WriteEncryptedExtensions(edge, &out).empty());
}

TEST(ServerMessages, CertificateIsRfc8448Section3) {
  const Rfc8448Flight flight;
  const std::vector<ByteVec> chain = {flight.certificate_der()};
  EXPECT_EQ(EncodeCertificateMessage(chain), flight.certificate());
}

TEST(ServerMessages, CertificateChainLeafFirst) {
  const std::vector<ByteVec> chain = {{0xaa, 0xbb}, {0xcc}};
  EXPECT_EQ(EncodeCertificateMessage(chain),
            (ByteVec{kCertificate, 0,    0,    0x11,        //
                     0x00,                                  // certificate_request_context
                     0x00,         0x00, 0x0d,              // certificate_list
                     0x00,         0x00, 0x02, 0xaa, 0xbb,  // cert_data
                     0x00,         0x00,                    // extensions
                     0x00,         0x00, 0x01, 0xcc, 0x00, 0x00}));
  EXPECT_TRUE(EncodeCertificateMessage({}).empty());
  const std::vector<ByteVec> with_empty = {{0xaa}, {}};
  EXPECT_TRUE(EncodeCertificateMessage(with_empty).empty());
  // A body of 2^24 bytes does not fit the message's uint24 length.
  const std::vector<ByteVec> huge = {ByteVec((1u << 24) - 9, 0x30)};
  EXPECT_TRUE(EncodeCertificateMessage(huge).empty());
  const std::vector<ByteVec> largest = {ByteVec((1u << 24) - 10, 0x30)};
  EXPECT_EQ(EncodeCertificateMessage(largest).size(), 4u + (1u << 24) - 1);
}

TEST(ServerMessages, CertificateVerifyIsRfc8448Section3) {
  const Rfc8448Flight flight;
  uint8_t buffer[512];
  MessageWriter out(buffer);
  EXPECT_EQ(Vec(WriteCertificateVerify(kRsaPssRsaeSha256, flight.signature(), &out)),
            flight.certificate_verify());
}

TEST(ServerMessages, CertificateVerifyContent) {
  const ByteVec hash(48, 0x5a);
  uint8_t content[kMaxCertificateVerifyContent];
  ASSERT_EQ(ServerCertificateVerifyContent(hash, content), 146u);
  ByteVec expected(64, 0x20);
  const std::string context = "TLS 1.3, server CertificateVerify";
  expected.insert(expected.end(), context.begin(), context.end());
  expected.push_back(0);
  expected.insert(expected.end(), hash.begin(), hash.end());
  EXPECT_EQ(ByteVec(content, content + 146), expected);

  const ByteVec sha256(32, 0x11);
  EXPECT_EQ(ServerCertificateVerifyContent(sha256, content), 130u);
  EXPECT_EQ(ServerCertificateVerifyContent(sha256, absl::MakeSpan(content, 129)), 0u);
  EXPECT_EQ(ServerCertificateVerifyContent(hash, absl::MakeSpan(content, 145)), 0u);
}

TEST(ServerMessages, FinishedIsRfc8448Section3) {
  const Rfc8448Flight flight;
  const ByteVec finished = flight.finished();
  const ByteVec verify_data(finished.begin() + 4, finished.end());
  uint8_t buffer[64];
  MessageWriter out(buffer);
  EXPECT_EQ(Vec(WriteFinished(verify_data, &out)), finished);
  out.Clear();
  EXPECT_TRUE(WriteFinished({}, &out).empty());
  EXPECT_FALSE(out.ok());
}

// The whole encrypted flight in one writer, as the state machine writes it.
TEST(ServerMessages, FlightIsRfc8448Section3) {
  const Rfc8448Flight flight;
  const std::vector<ByteVec> chain = {flight.certificate_der()};
  const ByteVec certificate = EncodeCertificateMessage(chain);
  const ByteVec finished = flight.finished();
  const ByteVec verify_data(finished.begin() + 4, finished.end());
  uint8_t buffer[1024];
  MessageWriter out(buffer);
  EXPECT_EQ(WriteEncryptedExtensions(Rfc8448EncryptedExtensions(), &out).size(), 40u);
  out.Bytes(certificate);
  EXPECT_EQ(WriteCertificateVerify(kRsaPssRsaeSha256, flight.signature(), &out).size(), 136u);
  EXPECT_EQ(WriteFinished(verify_data, &out).size(), 36u);
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(Vec(out.written()), flight.all);
}

// What the writers emit, the reader takes apart again: every header's length is the body's,
// and the parsers accept our own Finished and KeyUpdate.
TEST(ServerMessages, WrittenMessagesReadBack) {
  const Rfc8448Flight flight;
  const std::vector<ByteVec> chain = {flight.certificate_der()};
  const ByteVec certificate = EncodeCertificateMessage(chain);
  const ByteVec verify_data(48, 0x3c);
  const ByteVec ticket(100, 0x7e);
  const uint8_t nonce[] = {0};
  uint8_t buffer[2048];
  MessageWriter out(buffer);
  WriteEncryptedExtensions(Rfc8448EncryptedExtensions(), &out);
  out.Bytes(certificate);
  WriteCertificateVerify(kRsaPssRsaeSha256, flight.signature(), &out);
  WriteFinished(verify_data, &out);
  WriteNewSessionTicket(7200, 0x01020304, nonce, ticket, &out);
  WriteKeyUpdate(true, &out);
  ASSERT_TRUE(out.ok());

  HandshakeReader reader;
  std::vector<HandshakeMessage> messages;
  ASSERT_EQ(reader.Feed(out.written(), messages), HandshakeReader::Result::kOk);
  EXPECT_TRUE(reader.AtMessageBoundary());
  ASSERT_EQ(messages.size(), 6u);
  EXPECT_EQ(messages[0].type, kEncryptedExtensions);
  EXPECT_EQ(messages[1].type, kCertificate);
  EXPECT_EQ(messages[2].type, kCertificateVerify);
  EXPECT_EQ(messages[3].type, kFinished);
  EXPECT_EQ(messages[4].type, kNewSessionTicket);
  EXPECT_EQ(messages[5].type, kKeyUpdate);
  absl::Span<const uint8_t> parsed;
  ASSERT_TRUE(ParseFinished(messages[3].body, 48, &parsed));
  EXPECT_EQ(Vec(parsed), verify_data);
  EXPECT_EQ(messages[4].body.size(), 4u + 4 + 2 + 2 + 100 + 2);
  const KeyUpdateResult update = ParseKeyUpdate(messages[5].body);
  EXPECT_TRUE(update.ok);
  EXPECT_TRUE(update.update_requested);
}

// Our ticket carries no extensions; RFC 8448's ends in early_data (00 2a 00 04 00 00 04 00).
// Everything before them must match, and the length and extensions block must say "none".
TEST(ServerMessages, NewSessionTicketIsRfc8448Section3WithoutEarlyData) {
  const ByteVec rfc = Hex(testing::kRfc8448NewSessionTicket);
  ASSERT_EQ(rfc.size(), 205u);
  const ByteVec nonce(rfc.begin() + 13, rfc.begin() + 15);
  const ByteVec ticket(rfc.begin() + 17, rfc.begin() + 17 + 0xb2);
  ASSERT_EQ(ByteVec(rfc.end() - 10, rfc.end()),
            (ByteVec{0x00, 0x08, 0x00, 0x2a, 0x00, 0x04, 0x00, 0x00, 0x04, 0x00}));
  ByteVec expected(rfc.begin(), rfc.end() - 10);
  expected[3] = 0xc9 - 8;
  expected.push_back(0);
  expected.push_back(0);

  uint8_t buffer[512];
  MessageWriter out(buffer);
  EXPECT_EQ(Vec(WriteNewSessionTicket(30, 0xfad6aac5, nonce, ticket, &out)), expected);
}

TEST(ServerMessages, NewSessionTicketRefusesWhatNoMessageCarries) {
  const ByteVec ticket = {1, 2, 3};
  const ByteVec long_nonce(256, 0);
  uint8_t buffer[512];
  MessageWriter out(buffer);
  EXPECT_FALSE(WriteNewSessionTicket(kMaxNewSessionTicketLifetime, 0, {}, ticket, &out).empty());
  out.Clear();
  EXPECT_TRUE(WriteNewSessionTicket(kMaxNewSessionTicketLifetime + 1, 0, {}, ticket, &out).empty());
  EXPECT_FALSE(out.ok());
  out.Clear();
  EXPECT_TRUE(WriteNewSessionTicket(60, 0, long_nonce, ticket, &out).empty());
  EXPECT_FALSE(out.ok());
  out.Clear();
  EXPECT_TRUE(WriteNewSessionTicket(60, 0, {}, {}, &out).empty());
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.size(), 0u);
}

TEST(ServerMessages, KeyUpdate) {
  uint8_t buffer[16];
  MessageWriter out(buffer);
  EXPECT_EQ(Vec(WriteKeyUpdate(true, &out)), (ByteVec{kKeyUpdate, 0, 0, 1, 1}));
  EXPECT_EQ(Vec(WriteKeyUpdate(false, &out)), (ByteVec{kKeyUpdate, 0, 0, 1, 0}));
  EXPECT_EQ(out.size(), 10u);
}

// Every capacity short of the message: an empty span, a writer that stays not ok and keeps
// only the whole messages before, and refuses even a one-byte append after.
TEST(ServerMessages, OverflowAtEveryByteLeavesOnlyWholeMessages) {
  const ByteVec random = Hex(testing::kRfc8448ServerRandom);
  const ByteVec key = Hex(testing::kRfc8448ServerPublicKey);
  const ByteVec verify_data(32, 0x77);
  constexpr size_t kServerHelloSize = 90;
  constexpr size_t kTotal = kServerHelloSize + 36;
  for (size_t capacity = 0; capacity < kTotal; ++capacity) {
    SCOPED_TRACE(capacity);
    ByteVec buffer(capacity);
    MessageWriter out(absl::MakeSpan(buffer));
    const absl::Span<const uint8_t> hello = WriteServerHello({.random = random,
                                                              .cipher_suite = kAes128GcmSha256,
                                                              .key_share_group = kGroupX25519,
                                                              .key_share = key},
                                                             &out);
    const absl::Span<const uint8_t> finished = WriteFinished(verify_data, &out);
    EXPECT_TRUE(finished.empty());
    EXPECT_FALSE(out.ok());
    EXPECT_EQ(hello.empty(), capacity < kServerHelloSize);
    EXPECT_EQ(out.size(), hello.size());
    out.U8(0);
    EXPECT_TRUE(WriteKeyUpdate(false, &out).empty());
    EXPECT_EQ(out.size(), hello.size());
    EXPECT_FALSE(out.ok());
  }
  ByteVec buffer(kTotal);
  MessageWriter out(absl::MakeSpan(buffer));
  WriteServerHello({.random = random,
                    .cipher_suite = kAes128GcmSha256,
                    .key_share_group = kGroupX25519,
                    .key_share = key},
                   &out);
  EXPECT_FALSE(WriteFinished(verify_data, &out).empty());
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(out.size(), kTotal);
  EXPECT_TRUE(WriteKeyUpdate(false, &out).empty());
  out.Clear();
  EXPECT_TRUE(out.ok());
  EXPECT_FALSE(WriteKeyUpdate(false, &out).empty());
}

// A failed writer refuses what would fit: the flight fails as a whole.
TEST(ServerMessages, FailureIsStickyUntilClear) {
  uint8_t buffer[64];
  MessageWriter out(buffer);
  out.Fail();
  EXPECT_TRUE(WriteKeyUpdate(true, &out).empty());
  EXPECT_EQ(out.size(), 0u);
  out.Clear();
  EXPECT_EQ(WriteKeyUpdate(true, &out).size(), 5u);
}

}  // namespace
}  // namespace onepass::tls::tls13
