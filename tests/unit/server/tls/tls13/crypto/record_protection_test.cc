// Record protection against RFC 8448 §3's client Finished record, and its refusals.
#include "server/tls/tls13/crypto/record_protection.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "tests/unit/server/tls/tls13/crypto/hex.h"
#include "tests/unit/server/tls/tls13/crypto/rfc8448_simple.h"

namespace onepass::tls::tls13 {
namespace {

using testing::Hex;
using Bytes = std::vector<uint8_t>;

// RFC 8448 §3 {client} handshake key/iv, the Finished message and its record.
const char kKey[] = "db fa a6 93 d1 76 2c 5b 66 6a f5 d9 50 25 8d 01";
const char kIv[] = "5b d3 c7 1b 83 6e 0b 76 bb 73 26 5f";
const char kFinished[] =
    "14 00 00 20 a8 ec 43 6d 67 76 34 ae 52 5a c1 fc eb e1 1a 03 9e c1 76"
    " 94 fa c6 e9 85 27 b6 42 f2 ed d5 ce 61";
const char kRecord[] =
    "17 03 03 00 35 75 ec 4d c2 38 cc e6 0b 29 80 44 a7 1e 21 9c 56 cc 77 b0"
    " 51 7f e9 b9 3c 7a 4b fc 44 d8 7f 38 f8 03 38 ac 98 fc 46 de b3 84 bd 1c"
    " ae ac ab 68 67 d7 26 c4 05 46";

class RecordProtectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    algorithms_ = SuiteAlgorithms::Create();
    ASSERT_NE(algorithms_, nullptr);
    ASSERT_TRUE(seal_.Init(*algorithms_, CipherSuite::kAes128GcmSha256,
                           RecordProtection::Direction::kSeal, Hex(kKey), Hex(kIv)));
    ASSERT_TRUE(open_.Init(*algorithms_, CipherSuite::kAes128GcmSha256,
                           RecordProtection::Direction::kOpen, Hex(kKey), Hex(kIv)));
  }
  std::unique_ptr<SuiteAlgorithms> algorithms_;
  RecordProtection seal_;
  RecordProtection open_;
};

TEST_F(RecordProtectionTest, SealsRfc8448ClientFinishedByteForByte) {
  Bytes out;
  ASSERT_TRUE(seal_.Seal(/*handshake=*/22, Hex(kFinished), 0, out));
  EXPECT_EQ(out, Hex(kRecord));
  EXPECT_EQ(seal_.sequence_number(), 1u);
}

TEST_F(RecordProtectionTest, SealsRfc8448ServerFlightByteForByte) {
  RecordProtection server;
  ASSERT_TRUE(server.Init(*algorithms_, CipherSuite::kAes128GcmSha256,
                          RecordProtection::Direction::kSeal,
                          Hex("3f ce 51 60 09 c2 17 27 d0 f2 e4 e8 6e e4 03 bc"),
                          Hex("5d 31 3e b2 67 12 76 ee 13 00 0b 30")));
  Bytes out;
  ASSERT_TRUE(server.Seal(/*handshake=*/22, Hex(testing::kRfc8448ServerFlight), 0, out));
  EXPECT_EQ(out, Hex(testing::kRfc8448ServerFlightRecord));
}

TEST_F(RecordProtectionTest, OpensRfc8448ClientFinished) {
  Bytes out;
  OpenResult r = open_.Open(Hex(kRecord), out);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.content_type, 22);
  EXPECT_EQ(out, Hex(kFinished));
}

TEST_F(RecordProtectionTest, PaddingIsStripped) {
  Bytes record, out;
  ASSERT_TRUE(seal_.Seal(23, Hex("01 02 03"), 40, record));
  OpenResult r = open_.Open(record, out);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.content_type, 23);
  EXPECT_EQ(out, Hex("01 02 03"));
}

TEST_F(RecordProtectionTest, FlippedTagIsBadRecordMac) {
  Bytes record = Hex(kRecord), out;
  record.back() ^= 0x01;
  OpenResult r = open_.Open(record, out);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.alert, kAlertBadRecordMac);
  EXPECT_TRUE(out.empty());
}

TEST_F(RecordProtectionTest, OversizeRecordIsRecordOverflow) {
  const size_t body = kMaxCiphertext + 1;
  Bytes record(kRecordHeaderLength + body, 0);
  record[0] = 23;
  record[1] = 3;
  record[2] = 3;
  record[3] = static_cast<uint8_t>(body >> 8);
  record[4] = static_cast<uint8_t>(body);
  Bytes out;
  EXPECT_EQ(open_.Open(record, out).alert, kAlertRecordOverflow);
  // And the sealing side refuses more than 2^14 bytes of content.
  EXPECT_FALSE(seal_.Seal(23, Bytes(kMaxPlaintext + 1, 0), 0, out));
}

TEST_F(RecordProtectionTest, AllZeroInnerIsUnexpectedMessage) {
  // Content type 0 with no content: the inner plaintext is a single zero byte.
  Bytes record, out;
  ASSERT_TRUE(seal_.Seal(0, {}, 3, record));
  OpenResult r = open_.Open(record, out);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.alert, kAlertUnexpectedMessage);
}

TEST_F(RecordProtectionTest, SequenceNumbersMustAgree) {
  Bytes first, second, out;
  ASSERT_TRUE(seal_.Seal(23, Hex("aa"), 0, first));
  ASSERT_TRUE(seal_.Seal(23, Hex("bb"), 0, second));
  // Out of order: the second record under sequence number 0 fails authentication.
  EXPECT_EQ(open_.Open(second, out).alert, kAlertBadRecordMac);
}

// Every suite seals and opens with its own key length (§B.4), and a KeyUpdate's re-Init
// restarts the sequence number (§5.3).
TEST(RecordProtectionSuitesTest, EverySuiteRoundTrips) {
  auto algorithms = SuiteAlgorithms::Create();
  ASSERT_NE(algorithms, nullptr);
  for (CipherSuite suite : {CipherSuite::kAes128GcmSha256, CipherSuite::kAes256GcmSha384,
                            CipherSuite::kChaCha20Poly1305Sha256}) {
    const Bytes key(KeyLength(suite), 0x42), iv(kIvLength, 0x24);
    RecordProtection seal, open;
    ASSERT_TRUE(seal.Init(*algorithms, suite, RecordProtection::Direction::kSeal, key, iv));
    ASSERT_TRUE(open.Init(*algorithms, suite, RecordProtection::Direction::kOpen, key, iv));
    EXPECT_FALSE(seal.Init(*algorithms, suite, RecordProtection::Direction::kSeal,
                           Bytes(KeyLength(suite) + 1, 0), iv));
    ASSERT_TRUE(seal.Init(*algorithms, suite, RecordProtection::Direction::kSeal, key, iv));
    Bytes record, out;
    ASSERT_TRUE(seal.Seal(23, Bytes(kMaxPlaintext, 0x5a), 0, record));
    OpenResult r = open.Open(record, out);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(out, Bytes(kMaxPlaintext, 0x5a));
  }
}

}  // namespace
}  // namespace onepass::tls::tls13
