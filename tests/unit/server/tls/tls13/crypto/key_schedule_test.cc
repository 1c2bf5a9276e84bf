// The key schedule against RFC 8448 §3 (simple 1-RTT, TLS_AES_128_GCM_SHA256).
#include "server/tls/tls13/crypto/key_schedule.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "server/tls/tls13/crypto/cipher_suite.h"
#include "tests/unit/server/tls/tls13/crypto/hex.h"

namespace onepass::tls::tls13 {
namespace {

using testing::Hex;
using Bytes = std::vector<uint8_t>;

class KeyScheduleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    algorithms_ = SuiteAlgorithms::Create();
    ASSERT_NE(algorithms_, nullptr);
    ks_ = std::make_unique<KeySchedule>(*algorithms_);
    ASSERT_TRUE(ks_->Start(CipherSuite::kAes128GcmSha256));
  }
  std::unique_ptr<SuiteAlgorithms> algorithms_;
  std::unique_ptr<KeySchedule> ks_;
};

// RFC 8448 §3 {server} extract secret "early" / "handshake", derive "c hs traffic" and
// "s hs traffic", calculate finished "tls13 finished".
const char kEarly[] =
    "33 ad 0a 1c 60 7e c0 3b 09 e6 cd 98 93 68 0c e2 10 ad f3 00 aa 1f 26 60"
    " e1 b2 2e 10 f1 70 f9 2a";
const char kDerivedFromEarly[] =
    "6f 26 15 a1 08 c7 02 c5 67 8f 54 fc 9d ba b6 97 16 c0 76 18 9c 48 25 0c eb ea c3 57 6c"
    " 36 11 ba";
const char kShared[] =
    "8b d4 05 4f b5 5b 9d 63 fd fb ac f9 f0 4b 9f 0d 35 e6 d6 3f 53 75 63 ef"
    " d4 62 72 90 0f 89 49 2d";
const char kHandshake[] =
    "1d c8 26 e9 36 06 aa 6f dc 0a ad c1 2f 74 1b 01 04 6a a6 b9 9f 69 1e"
    " d2 21 a9 f0 ca 04 3f be ac";
const char kHelloHash[] =
    "86 0c 06 ed c0 78 58 ee 8e 78 f0 e7 42 8c 58 ed d6 b4 3f 2c a3 e6 e9"
    " 5f 02 ed 06 3c f0 e1 ca d8";
const char kClientHs[] =
    "b3 ed db 12 6e 06 7f 35 a7 80 b3 ab f4 5e 2d 8f 3b 1a 95 07 38 f5 2e"
    " 96 00 74 6a 0e 27 a5 5a 21";
const char kServerHs[] =
    "b6 7b 7d 69 0c c1 6c 4e 75 e5 42 13 cb 2d 37 b4 e9 c9 12 bc de d9 10"
    " 5d 42 be fd 59 d3 91 ad 38";
const char kServerFinishedKey[] =
    "00 8d 3b 66 f8 16 ea 55 9f 96 b5 37 e8 85 c3 1f c0 68 bf 49 2c 65 2f 01 f2 88 a1 d8 cd"
    " c1 9f c8";

TEST_F(KeyScheduleTest, Rfc8448SimpleHandshakeSecrets) {
  Bytes out(32);
  ASSERT_TRUE(ks_->Extract({}, Bytes(32, 0), absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex(kEarly));
  ASSERT_TRUE(ks_->Extract(Hex(kDerivedFromEarly), Hex(kShared), absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex(kHandshake));

  ASSERT_TRUE(ks_->SetEarlySecret({}));
  ASSERT_TRUE(ks_->SetHandshakeSecret(Hex(kShared)));
  Bytes client(32), server(32);
  ASSERT_TRUE(ks_->HandshakeTrafficSecrets(Hex(kHelloHash), absl::MakeSpan(client),
                                           absl::MakeSpan(server)));
  EXPECT_EQ(client, Hex(kClientHs));
  EXPECT_EQ(server, Hex(kServerHs));

  ASSERT_TRUE(ks_->ExpandLabel(server, "finished", {}, absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex(kServerFinishedKey));
}

TEST_F(KeyScheduleTest, StagesOutOfOrderRefused) {
  Bytes out(32);
  EXPECT_FALSE(ks_->SetHandshakeSecret(Hex(kShared)));
  EXPECT_FALSE(ks_->SetMasterSecret());
  EXPECT_FALSE(ks_->BinderKey(true, absl::MakeSpan(out)));
}

}  // namespace
}  // namespace onepass::tls::tls13
