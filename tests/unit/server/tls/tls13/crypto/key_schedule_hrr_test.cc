// The transcript and key schedule against RFC 8448 §5 (HelloRetryRequest, P-256 after an
// x25519 first try, TLS_AES_128_GCM_SHA256), byte for byte: ClientHello1 replaced by its
// message_hash (RFC 8446 §4.4.1), then HelloRetryRequest, ClientHello2 and ServerHello; the
// ECDHE, the handshake secret and traffic secrets, their keys and ivs (proved on the RFC's
// own encrypted records), both Finished, the master secret and the application secrets.
//
// Values marked "RFC" are those §5 prints. The few marked "derived" are intermediate values
// computed when this test was written (Python hashlib/hmac, apart from our code) that the
// RFC's records then confirm: the client key/iv open the RFC's client Finished record, and
// the server Finished key and hash give the verify_data the RFC's flight carries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "server/tls/tls13/crypto/cipher_suite.h"
#include "server/tls/tls13/crypto/key_exchange.h"
#include "server/tls/tls13/crypto/key_schedule.h"
#include "server/tls/tls13/crypto/record_protection.h"
#include "server/tls/tls13/crypto/transcript.h"
#include "server/tls/tls13/wire/client_hello.h"
#include "tests/unit/server/tls/tls13/crypto/hex.h"
#include "tests/unit/server/tls/tls13/crypto/rfc8448_hrr.h"
#include "tests/unit/server/tls/tls13/wire/rfc8448_messages.h"

namespace onepass::tls::tls13 {
namespace {

using testing::Hex;
using Bytes = std::vector<uint8_t>;

constexpr uint8_t kContentHandshake = 22;

// RFC: {server} extract secret "handshake": IKM (the P-256 ECDHE) and secret.
const char kShared[] =
    "c1 42 ce 13 ca 11 b5 c2 23 36 52 e6 3a d3 d9 78 44 f1 62 1f bf b9 de 69 d5 47 dc 8f ed ea"
    " be b4";
const char kHandshake[] =
    "ce 02 2e 5e 6e 81 e5 07 36 d7 73 f2 d3 ad fc e8 22 0d 04 9b f5 10 f0 db fa c9 27 ef 42 43"
    " b1 48";
// The salt of that extract, Derive-Secret(early, "derived", ""): §3's, as no PSK is used.
const char kDerivedFromEarly[] =
    "6f 26 15 a1 08 c7 02 c5 67 8f 54 fc 9d ba b6 97 16 c0 76 18 9c 48 25 0c eb ea c3 57 6c"
    " 36 11 ba";
// RFC: {server} derive secret "tls13 c hs traffic": hash (message_hash..ServerHello), and
// the client and server handshake traffic secrets.
const char kHelloHash[] =
    "8a a8 e8 28 ec 2f 8a 88 4f ec 95 a3 13 9d e0 1c 15 a3 da a7 ff 5b fc 3f 4b fc c2 1b 43 8d"
    " 7b f8";
const char kClientHs[] =
    "15 8a a7 ab 88 55 07 35 82 b4 1d 67 4b 40 55 ca bc c5 34 72 8f 65 93 14 86 1b 4e 08 e2 01"
    " 15 66";
const char kServerHs[] =
    "34 03 e7 81 e2 af 7b 65 08 da 28 57 4f 6e 95 a1 ab f1 62 de 83 a9 79 27 c3 76 72 a4 a0 ce"
    " f8 a1";
// RFC: {server} derive write traffic keys for handshake data.
const char kServerHsKey[] = "46 46 bf ac 17 12 c4 26 cd 78 d8 a2 4a 8a 6f 6b";
const char kServerHsIv[] = "c7 d3 95 c0 8d 62 f2 97 d1 37 68 ea";
// Derived: the client's handshake key/iv (they open the RFC's client Finished record).
const char kClientHsKey[] = "2f 1f 91 86 63 d5 90 e7 42 11 49 a2 9d 94 b0 b6";
const char kClientHsIv[] = "41 4d 54 85 23 5e 1a 68 87 93 bd 74";
// Derived: Hash(ClientHello1), the body of the message_hash message.
const char kClientHello1Hash[] =
    "de 74 20 cc 74 26 d2 f6 b2 21 ed cc 9c 4b dc 9b b0 ab 04 8b 3d dd 24 11 da 7e 3a 01 ba ea"
    " 6c 7e";
// Derived: the server's finished key and Transcript-Hash(message_hash..CertificateVerify);
// their HMAC is the verify_data of the Finished the RFC's flight ends with.
const char kServerFinishedKey[] =
    "e7 f8 bb 3e a4 b6 c3 0c 47 10 b3 d0 9c 33 13 65 81 17 e7 0b 09 7e 85 03 68 e2 51 0c a5 63"
    " 1f 74";
const char kCertificateVerifyHash[] =
    "56 14 a0 9d fc e1 0c 45 e7 a5 83 94 bd 6d ab be fa a1 d8 38 e7 f4 b7 49 66 fa da 31 0e f2"
    " e7 7b";
// RFC (inside the flight): the server's Finished verify_data.
const char kServerVerifyData[] =
    "88 63 e6 bf b0 42 0a 92 7f a2 7f 34 33 6a 70 ae 42 6e 96 8e 3e b8 84 94 5b 96 85 6d ba 39"
    " 76 d1";
// Derived: the client's Finished verify_data (inside the RFC's client Finished record).
const char kClientVerifyData[] =
    "23 f5 2f db 07 09 a5 5b d7 f7 9b 99 1f 25 48 40 87 bc fd 4d 43 80 b1 23 26 a5 2a 28 b2 e3"
    " 68 e1";
// Derived: the salt of the master extract, Derive-Secret(handshake, "derived", "").
const char kDerivedFromHandshake[] =
    "ad 1c bc d3 a0 dc 70 53 ee b3 ed 3a 47 90 1d 16 a9 fc 63 a7 3c 64 be b5 67 48 1a 7d fb 3a"
    " 2c b3";
// RFC: {server} extract secret "master"; derive secret "tls13 c ap traffic" (hash through
// the server Finished) and "tls13 s ap traffic".
const char kMaster[] =
    "11 31 54 5d 0b af 79 dd ce 9b 87 f0 69 45 78 1a 57 dd 18 ef 37 8d cd 20 60 f8 f9 a5 69 02"
    " 7e d8";
const char kServerFinishedHash[] =
    "50 f6 3c bf 36 b0 dd 04 9e 7a 0b a2 7d 64 55 74 5e a2 aa ac 54 bb 16 7f 99 50 b2 b7 ce 95"
    " 09 da";
const char kClientAp[] =
    "75 ec f4 b9 72 52 5a a0 dc d0 57 c9 94 4d 4c d5 d8 26 71 d8 84 31 41 d7 dc 2a 4f f1 5a 21"
    " dc 51";
const char kServerAp[] =
    "5c 74 f8 7d f0 42 25 db 0f 82 09 c9 de 64 29 e4 94 35 fd ef a7 ca d6 18 64 87 4d 12 f3 1c"
    " fc 8d";

// The flight's messages by the lengths the RFC gives: EncryptedExtensions 28, Certificate
// 445, CertificateVerify 136, Finished 36.
constexpr size_t kFlightLength = 645;
constexpr size_t kThroughCertificateVerify = 28 + 445 + 136;

class KeyScheduleHrrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    algorithms_ = SuiteAlgorithms::Create();
    ASSERT_NE(algorithms_, nullptr);
    ks_ = std::make_unique<KeySchedule>(*algorithms_);
    ASSERT_TRUE(ks_->Start(CipherSuite::kAes128GcmSha256));
    transcript_ = std::make_unique<Transcript>(*algorithms_);
    ASSERT_TRUE(transcript_->Start(CipherSuite::kAes128GcmSha256));
  }

  // The transcript as the server keeps it through ServerHello, §4.4.1.
  void AddHellos() {
    ASSERT_TRUE(transcript_->Add(Hex(testing::kRfc8448HrrClientHello1)));
    ASSERT_TRUE(transcript_->ReplaceWithMessageHash());
    ASSERT_TRUE(transcript_->Add(Hex(testing::kRfc8448HelloRetryRequest)));
    ASSERT_TRUE(transcript_->Add(Hex(testing::kRfc8448HrrClientHello2)));
    ASSERT_TRUE(transcript_->Add(Hex(testing::kRfc8448HrrServerHello)));
  }
  Bytes Hash() {
    Bytes out(32);
    EXPECT_TRUE(transcript_->CurrentHash(absl::MakeSpan(out)));
    return out;
  }
  // Opens one of the RFC's records under `key`/`iv` (sequence number 0): its content, or
  // empty when it does not authenticate or is not a handshake record.
  Bytes Open(const Bytes& key, const Bytes& iv, const Bytes& record) {
    RecordProtection open;
    EXPECT_TRUE(open.Init(*algorithms_, CipherSuite::kAes128GcmSha256,
                          RecordProtection::Direction::kOpen, key, iv));
    Bytes content;
    const OpenResult r = open.Open(record, content);
    EXPECT_TRUE(r.ok) << "alert " << static_cast<int>(r.alert);
    EXPECT_EQ(r.content_type, kContentHandshake);
    return r.ok && r.content_type == kContentHandshake ? content : Bytes();
  }

  std::unique_ptr<SuiteAlgorithms> algorithms_;
  std::unique_ptr<KeySchedule> ks_;
  std::unique_ptr<Transcript> transcript_;
};

// RFC: {server} create an ephemeral P-256 key pair; the client's share is ClientHello2's;
// the shared secret is the handshake extract's IKM.
TEST_F(KeyScheduleHrrTest, P256ServerShareAndSharedSecret) {
  const Bytes client_share = Hex(testing::kRfc8448HrrClientPublicKey);
  const Bytes hello2 = Hex(testing::kRfc8448HrrClientHello2);
  EXPECT_NE(std::search(hello2.begin(), hello2.end(), client_share.begin(), client_share.end()),
            hello2.end());
  std::unique_ptr<KeyExchange> kx = KeyExchange::Create();
  ASSERT_NE(kx, nullptr);
  Bytes share(kMaxKeyShareLength), secret(kMaxSharedSecretLength);
  const KeyExchange::Result r =
      kx->ExchangeWithPrivateKey(kGroupSecp256r1, Hex(testing::kRfc8448HrrServerPrivateKey),
                                 client_share, absl::MakeSpan(share), absl::MakeSpan(secret));
  ASSERT_TRUE(r.ok) << "alert " << static_cast<int>(r.alert);
  ASSERT_EQ(r.share_length, 65u);
  ASSERT_EQ(r.secret_length, 32u);
  EXPECT_EQ(share, Hex(testing::kRfc8448HrrServerPublicKey));
  EXPECT_EQ(secret, Hex(kShared));
}

// §4.4.1: ClientHello1 becomes fe 00 00 20 | Hash(ClientHello1); the hash through ServerHello
// is the one the RFC derives the handshake traffic secrets over. Without the replacement
// (ClientHello1 hashed as itself) it is not.
TEST_F(KeyScheduleHrrTest, TranscriptThroughServerHello) {
  ASSERT_TRUE(transcript_->Add(Hex(testing::kRfc8448HrrClientHello1)));
  EXPECT_EQ(Hash(), Hex(kClientHello1Hash));
  ASSERT_TRUE(transcript_->Start(CipherSuite::kAes128GcmSha256));
  AddHellos();
  EXPECT_EQ(Hash(), Hex(kHelloHash));

  Transcript plain(*algorithms_);
  ASSERT_TRUE(plain.Start(CipherSuite::kAes128GcmSha256));
  for (const char* m : {testing::kRfc8448HrrClientHello1, testing::kRfc8448HelloRetryRequest,
                        testing::kRfc8448HrrClientHello2, testing::kRfc8448HrrServerHello}) {
    ASSERT_TRUE(plain.Add(Hex(m)));
  }
  Bytes out(32);
  ASSERT_TRUE(plain.CurrentHash(absl::MakeSpan(out)));
  EXPECT_NE(out, Hex(kHelloHash));
}

// RFC: extract "handshake", derive "c hs traffic" / "s hs traffic", the server's write keys;
// the client's keys derived. Both proved on the RFC's records: the server flight record
// opens to exactly the flight, and the client Finished record to the client's Finished.
TEST_F(KeyScheduleHrrTest, HandshakeSecretsKeysAndRecords) {
  Bytes out(32);
  ASSERT_TRUE(ks_->Extract(Hex(kDerivedFromEarly), Hex(kShared), absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex(kHandshake));

  AddHellos();
  ASSERT_TRUE(ks_->SetEarlySecret({}));
  ASSERT_TRUE(ks_->SetHandshakeSecret(Hex(kShared)));
  Bytes client(32), server(32);
  ASSERT_TRUE(ks_->HandshakeTrafficSecrets(Hash(), absl::MakeSpan(client), absl::MakeSpan(server)));
  EXPECT_EQ(client, Hex(kClientHs));
  EXPECT_EQ(server, Hex(kServerHs));

  Bytes server_key(16), server_iv(12), client_key(16), client_iv(12);
  ASSERT_TRUE(ks_->TrafficKeys(server, absl::MakeSpan(server_key), absl::MakeSpan(server_iv)));
  EXPECT_EQ(server_key, Hex(kServerHsKey));
  EXPECT_EQ(server_iv, Hex(kServerHsIv));
  ASSERT_TRUE(ks_->TrafficKeys(client, absl::MakeSpan(client_key), absl::MakeSpan(client_iv)));
  EXPECT_EQ(client_key, Hex(kClientHsKey));
  EXPECT_EQ(client_iv, Hex(kClientHsIv));

  const Bytes flight = Hex(testing::kRfc8448HrrServerFlight);
  ASSERT_EQ(flight.size(), kFlightLength);
  EXPECT_EQ(Open(server_key, server_iv, Hex(testing::kRfc8448HrrServerFlightRecord)), flight);
  Bytes client_finished = {20, 0, 0, 32};  // HandshakeType finished, length 32
  const Bytes client_verify_data = Hex(kClientVerifyData);
  client_finished.insert(client_finished.end(), client_verify_data.begin(),
                         client_verify_data.end());
  EXPECT_EQ(Open(client_key, client_iv, Hex(testing::kRfc8448HrrClientFinishedRecord)),
            client_finished);
}

// The server's Finished over message_hash..CertificateVerify is the one the RFC's flight
// carries; the client's over ..server Finished is the one its record carries. Then extract
// "master" and derive the application traffic secrets over ..server Finished.
TEST_F(KeyScheduleHrrTest, FinishedMasterAndApplicationSecrets) {
  AddHellos();
  const Bytes flight = Hex(testing::kRfc8448HrrServerFlight);
  ASSERT_EQ(flight.size(), kFlightLength);
  const absl::Span<const uint8_t> whole(flight);
  ASSERT_TRUE(transcript_->Add(whole.subspan(0, kThroughCertificateVerify)));
  const Bytes cv_hash = Hash();
  EXPECT_EQ(cv_hash, Hex(kCertificateVerifyHash));
  const Bytes finished(flight.begin() + kThroughCertificateVerify, flight.end());
  ASSERT_EQ(finished.size(), 36u);
  EXPECT_EQ(Bytes(finished.begin() + 4, finished.end()), Hex(kServerVerifyData));

  Bytes out(32);
  ASSERT_TRUE(ks_->ExpandLabel(Hex(kServerHs), "finished", {}, absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex(kServerFinishedKey));
  ASSERT_TRUE(ks_->FinishedVerifyData(Hex(kServerHs), cv_hash, absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex(kServerVerifyData));
  EXPECT_TRUE(ks_->VerifyFinished(Hex(kServerHs), cv_hash, Hex(kServerVerifyData)));

  ASSERT_TRUE(transcript_->Add(finished));
  const Bytes finished_hash = Hash();
  EXPECT_EQ(finished_hash, Hex(kServerFinishedHash));
  ASSERT_TRUE(ks_->FinishedVerifyData(Hex(kClientHs), finished_hash, absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex(kClientVerifyData));
  EXPECT_TRUE(ks_->VerifyFinished(Hex(kClientHs), finished_hash, Hex(kClientVerifyData)));

  ASSERT_TRUE(ks_->Extract(Hex(kDerivedFromHandshake), Bytes(32, 0), absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex(kMaster));
  ASSERT_TRUE(ks_->SetEarlySecret({}));
  ASSERT_TRUE(ks_->SetHandshakeSecret(Hex(kShared)));
  ASSERT_TRUE(ks_->SetMasterSecret());
  Bytes client(32), server(32);
  ASSERT_TRUE(ks_->ApplicationTrafficSecrets(finished_hash, absl::MakeSpan(client),
                                             absl::MakeSpan(server)));
  EXPECT_EQ(client, Hex(kClientAp));
  EXPECT_EQ(server, Hex(kServerAp));
}

}  // namespace
}  // namespace onepass::tls::tls13
