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

// RFC 8448 §3: extract "master", derive "c/s ap traffic" (hash through server Finished),
// "res master" (through client Finished), the server's handshake key/iv and its Finished
// verify_data over the transcript through CertificateVerify.
TEST_F(KeyScheduleTest, Rfc8448SimpleApplicationSecretsKeysAndFinished) {
  ASSERT_TRUE(ks_->SetEarlySecret({}));
  ASSERT_TRUE(ks_->SetHandshakeSecret(Hex(kShared)));
  ASSERT_TRUE(ks_->SetMasterSecret());
  Bytes client(32), server(32), out(32);
  const Bytes finished_hash = Hex(
      "96 08 10 2a 0f 1c cc 6d b6 25 0b 7b 7e 41 7b 1a 00 0e aa da 3d aa e4 77 7a 76 86 c9 ff 83"
      " df 13");
  ASSERT_TRUE(ks_->ApplicationTrafficSecrets(finished_hash, absl::MakeSpan(client),
                                             absl::MakeSpan(server)));
  EXPECT_EQ(client, Hex("9e 40 64 6c e7 9a 7f 9d c0 5a f8 88 9b ce 65 52 87 5a fa 0b 06 df 00 87"
                        " f7 92 eb b7 c1 75 04 a5"));
  EXPECT_EQ(server, Hex("a1 1a f9 f0 55 31 f8 56 ad 47 11 6b 45 a9 50 32 82 04 b4 f4 4b fb 6b 3a"
                        " 4b 4f 1f 3f cb 63 16 43"));
  ASSERT_TRUE(ks_->ResumptionMasterSecret(
      Hex("20 91 45 a9 6e e8 e2 a1 22 ff 81 00 47 cc 95 26 84 65 8d 60 49 e8 64 29 42 6d b8 7c 54"
          " ad 14 3d"),
      absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex("7d f2 35 f2 03 1d 2a 05 12 87 d0 2b 02 41 b0 bf da f8 6c c8 56 23 1f 2d 5a"
                     " ba 46 c4 34 ec 19 6c"));

  Bytes key(16), iv(12);
  ASSERT_TRUE(ks_->TrafficKeys(Hex(kServerHs), absl::MakeSpan(key), absl::MakeSpan(iv)));
  EXPECT_EQ(key, Hex("3f ce 51 60 09 c2 17 27 d0 f2 e4 e8 6e e4 03 bc"));
  EXPECT_EQ(iv, Hex("5d 31 3e b2 67 12 76 ee 13 00 0b 30"));

  const Bytes cv_hash = Hex(
      "ed b7 72 5f a7 a3 47 3b 03 1e c8 ef 65 a2 48 54 93 90 01 38 a2 b9 12 91 40 7d 79 51 a0 61"
      " 10 ed");
  const Bytes verify_data = Hex(
      "9b 9b 14 1d 90 63 37 fb d2 cb dc e7 1d f4 de da 4a b4 2c 30 95 72 cb 7f ff ee 54 54 b7 8f"
      " 07 18");
  ASSERT_TRUE(ks_->FinishedVerifyData(Hex(kServerHs), cv_hash, absl::MakeSpan(out)));
  EXPECT_EQ(out, verify_data);
  EXPECT_TRUE(ks_->VerifyFinished(Hex(kServerHs), cv_hash, verify_data));
  Bytes wrong = verify_data;
  wrong[31] ^= 1;
  EXPECT_FALSE(ks_->VerifyFinished(Hex(kServerHs), cv_hash, wrong));
}

// RFC 8448 §4: the PSK from §3's resumption master secret and ticket nonce 00 00, the early
// secret from it, and the resumption binder key.
TEST_F(KeyScheduleTest, Rfc8448ResumptionPskAndBinderKey) {
  Bytes psk(32), out(32);
  ASSERT_TRUE(ks_->ResumptionPsk(Hex("7d f2 35 f2 03 1d 2a 05 12 87 d0 2b 02 41 b0 bf da f8 6c"
                                     " c8 56 23 1f 2d 5a ba 46 c4 34 ec 19 6c"),
                                 Hex("00 00"), absl::MakeSpan(psk)));
  EXPECT_EQ(psk, Hex("4e cd 0e b6 ec 3b 4d 87 f5 d6 02 8f 92 2c a4 c5 85 1a 27 7f d4 13 11 c9 e6"
                     " 2d 2c 94 92 e1 c4 f3"));
  ASSERT_TRUE(ks_->SetEarlySecret(psk));
  ASSERT_TRUE(ks_->Extract({}, psk, absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex("9b 21 88 e9 b2 fc 6d 64 d7 1d c3 29 90 0e 20 bb 41 91 50 00 f6 78 aa 83 9c"
                     " bb 79 7c b7 d8 33 2c"));
  ASSERT_TRUE(ks_->BinderKey(/*resumption=*/true, absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex("69 fe 13 1a 3b ba d5 d6 3c 64 ee bc c3 0e 39 5b 9d 81 07 72 6a 13 d0 74 e3"
                     " 89 db c8 a4 e4 72 56"));
  // The binder (§4.2.11.2): a Finished computation under the binder key over the hash of
  // the ClientHello truncated before its binders, as RFC 8448 §4 prints both.
  const Bytes truncated_hash = Hex(
      "63 22 4b 2e 45 73 f2 d3 45 4c a8 4b 9d 00 9a 04 f6 be 9e 05 71 1a 83 96 47 3a ef a0 1e 92"
      " 4a 14");
  const Bytes binder = Hex(
      "3a dd 4f b2 d8 fd f8 22 a0 ca 3c f7 67 8e f5 e8 8d ae 99 01 41 c5 92 4d 57 bb 6f a3 1b 9e"
      " 5f 9d");
  const Bytes binder_key = out;
  ASSERT_TRUE(ks_->FinishedVerifyData(binder_key, truncated_hash, absl::MakeSpan(out)));
  EXPECT_EQ(out, binder);
  EXPECT_TRUE(ks_->VerifyFinished(binder_key, truncated_hash, binder));
}

TEST_F(KeyScheduleTest, StagesOutOfOrderRefused) {
  Bytes out(32);
  EXPECT_FALSE(ks_->SetHandshakeSecret(Hex(kShared)));
  EXPECT_FALSE(ks_->SetMasterSecret());
  EXPECT_FALSE(ks_->BinderKey(true, absl::MakeSpan(out)));
}

}  // namespace
}  // namespace onepass::tls::tls13
