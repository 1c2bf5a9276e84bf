// RFC 8448 §5 (HelloRetryRequest) as the server writes it, from what our reader takes out of
// the RFC's two ClientHellos: the HelloRetryRequest (x25519 offered, secp256r1 asked for, the
// RFC's cookie), the ServerHello after ClientHello2, and the encrypted flight (§5's
// EncryptedExtensions lists secp256r1, secp384r1, x25519; the rest is §3's certificate
// with §5's signature and Finished). The key schedule of the same trace is
// tests/unit/server/tls/tls13/crypto/key_schedule_hrr_test.cc.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "server/tls/tls13/wire/client_hello.h"
#include "server/tls/tls13/wire/message_writer.h"
#include "server/tls/tls13/wire/server_messages.h"
#include "tests/unit/server/tls/tls13/crypto/rfc8448_hrr.h"
#include "tests/unit/server/tls/tls13/wire/rfc8448_messages.h"
#include "tests/unit/server/tls/tls13/wire/wire_test_util.h"

namespace onepass::tls::tls13 {
namespace {

using testing::ByteVec;
using testing::Hex;
using testing::kAes128GcmSha256;
using testing::kRsaPssRsaeSha256;
using testing::Vec;

// A whole ClientHello message parsed (the reader takes the body, after the 4-byte header).
struct ParsedHello {
  explicit ParsedHello(const char* hex) : message(Hex(hex)) {
    result = ParseClientHello(absl::MakeConstSpan(message).subspan(4), &hello);
  }
  ByteVec message;
  ClientHello hello;
  ClientHelloResult result;
};

// The HelloRetryRequest's cookie, opaque to the client: its 114 bytes start at offset 56
// (44 bytes to the extensions, key_share's 6, the cookie extension's 4, its 2-byte length).
ByteVec Rfc8448Cookie() {
  const ByteVec hrr = Hex(testing::kRfc8448HelloRetryRequest);
  return ByteVec(hrr.begin() + 56, hrr.begin() + 56 + 114);
}

TEST(HelloRetryRequest, Rfc8448Section5FromClientHello1) {
  const ParsedHello ch1(testing::kRfc8448HrrClientHello1);
  ASSERT_TRUE(ch1.result.ok) << ch1.result.reason;
  EXPECT_TRUE(ch1.hello.cipher_suites.Contains(kAes128GcmSha256));
  ASSERT_EQ(ch1.hello.key_share_count, 1u);
  EXPECT_EQ(ch1.hello.key_shares[0].group, kGroupX25519);
  EXPECT_TRUE(ch1.hello.supported_groups.Contains(kGroupSecp256r1));
  EXPECT_TRUE(ch1.hello.legacy_session_id.empty());

  uint8_t buffer[512];
  MessageWriter out(buffer);
  const absl::Span<const uint8_t> message = WriteHelloRetryRequest(
      ch1.hello.legacy_session_id, kAes128GcmSha256, kGroupSecp256r1, Rfc8448Cookie(), &out);
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(Vec(message), Hex(testing::kRfc8448HelloRetryRequest));
}

TEST(HelloRetryRequest, Rfc8448Section5ServerHelloFromClientHello2) {
  const ParsedHello ch2(testing::kRfc8448HrrClientHello2);
  ASSERT_TRUE(ch2.result.ok) << ch2.result.reason;
  ASSERT_EQ(ch2.message.size(), 512u);
  // The client did what the HelloRetryRequest asked: the cookie back, one P-256 share.
  ASSERT_TRUE(ch2.hello.has_cookie);
  EXPECT_EQ(Vec(ch2.hello.cookie), Rfc8448Cookie());
  ASSERT_EQ(ch2.hello.key_share_count, 1u);
  EXPECT_EQ(ch2.hello.key_shares[0].group, kGroupSecp256r1);
  EXPECT_EQ(Vec(ch2.hello.key_shares[0].key_exchange), Hex(testing::kRfc8448HrrClientPublicKey));

  const ByteVec random = Hex(testing::kRfc8448HrrServerRandom);
  const ByteVec key = Hex(testing::kRfc8448HrrServerPublicKey);
  ASSERT_EQ(key.size(), 65u);
  uint8_t buffer[512];
  MessageWriter out(buffer);
  const absl::Span<const uint8_t> message =
      WriteServerHello({.random = random,
                        .legacy_session_id = ch2.hello.legacy_session_id,
                        .cipher_suite = kAes128GcmSha256,
                        .key_share_group = ch2.hello.key_shares[0].group,
                        .key_share = key},
                       &out);
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(Vec(message), Hex(testing::kRfc8448HrrServerHello));
}

// §5's flight in one writer: EncryptedExtensions (28), Certificate (445), CertificateVerify
// (136), Finished (36).
TEST(HelloRetryRequest, Rfc8448Section5Flight) {
  const ByteVec flight = Hex(testing::kRfc8448HrrServerFlight);
  ASSERT_EQ(flight.size(), 645u);
  const ByteVec der(flight.begin() + 28 + 11, flight.begin() + 28 + 11 + 432);
  const ByteVec signature(flight.begin() + 473 + 8, flight.begin() + 473 + 8 + 128);
  const ByteVec verify_data(flight.begin() + 609 + 4, flight.end());
  const std::vector<ByteVec> chain = {der};
  const ByteVec certificate = EncodeCertificateMessage(chain);

  constexpr uint16_t kGroups[] = {0x0017, 0x0018, 0x001d};
  EncryptedExtensionsFields fields;
  fields.supported_groups = kGroups;
  fields.record_size_limit = 0x4001;
  fields.server_name_acknowledged = true;
  uint8_t buffer[1024];
  MessageWriter out(buffer);
  EXPECT_EQ(WriteEncryptedExtensions(fields, &out).size(), 28u);
  out.Bytes(certificate);
  EXPECT_EQ(WriteCertificateVerify(kRsaPssRsaeSha256, signature, &out).size(), 136u);
  EXPECT_EQ(WriteFinished(verify_data, &out).size(), 36u);
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(Vec(out.written()), flight);
}

}  // namespace
}  // namespace onepass::tls::tls13
