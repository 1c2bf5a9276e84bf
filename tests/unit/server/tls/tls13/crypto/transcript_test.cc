// The transcript hash: running hash read mid-way, and HelloRetryRequest's message_hash
// (RFC 8446 §4.4.1; the construction RFC 8448 §5 traces).
#include "server/tls/tls13/crypto/transcript.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <memory>
#include <vector>

#include "tests/unit/server/tls/tls13/crypto/hex.h"
#include "tests/unit/server/tls/tls13/crypto/rfc8448_simple.h"

namespace onepass::tls::tls13 {
namespace {

using testing::Hex;
using Bytes = std::vector<uint8_t>;

Bytes Sha256(const Bytes& in) {
  Bytes out(32);
  unsigned int len = 0;
  EXPECT_EQ(EVP_Digest(in.data(), in.size(), out.data(), &len, EVP_sha256(), nullptr), 1);
  return out;
}

TEST(TranscriptTest, EmptyHashIsSha256OfNothing) {
  auto algorithms = SuiteAlgorithms::Create();
  ASSERT_NE(algorithms, nullptr);
  Transcript t(*algorithms);
  ASSERT_TRUE(t.Start(CipherSuite::kAes128GcmSha256));
  Bytes out(32);
  ASSERT_TRUE(t.CurrentHash(absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex("e3 b0 c4 42 98 fc 1c 14 9a fb f4 c8 99 6f b9 24 27 ae 41 e4 64 9b 93 4c a4"
                     " 95 99 1b 78 52 b8 55"));
}

TEST(TranscriptTest, CurrentHashDoesNotEndTheTranscript) {
  auto algorithms = SuiteAlgorithms::Create();
  ASSERT_NE(algorithms, nullptr);
  Transcript t(*algorithms);
  ASSERT_TRUE(t.Start(CipherSuite::kAes128GcmSha256));
  const Bytes a = Hex("01 00 00 02 aa bb"), b = Hex("02 00 00 01 cc");
  Bytes out(32);
  ASSERT_TRUE(t.Add(a));
  ASSERT_TRUE(t.CurrentHash(absl::MakeSpan(out)));
  EXPECT_EQ(out, Sha256(a));
  ASSERT_TRUE(t.Add(b));
  ASSERT_TRUE(t.CurrentHash(absl::MakeSpan(out)));
  Bytes ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  EXPECT_EQ(out, Sha256(ab));
}

// RFC 8448 §3: the transcript hashes the key schedule reads (CH..SH and CH..server Finished).
TEST(TranscriptTest, Rfc8448SimpleHandshakeHashes) {
  auto algorithms = SuiteAlgorithms::Create();
  ASSERT_NE(algorithms, nullptr);
  Transcript t(*algorithms);
  ASSERT_TRUE(t.Start(CipherSuite::kAes128GcmSha256));
  Bytes out(32);
  ASSERT_TRUE(t.Add(Hex(testing::kRfc8448ClientHello)));
  ASSERT_TRUE(t.Add(Hex(testing::kRfc8448ServerHello)));
  ASSERT_TRUE(t.CurrentHash(absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex("86 0c 06 ed c0 78 58 ee 8e 78 f0 e7 42 8c 58 ed d6 b4 3f 2c a3 e6 e9 5f 02"
                     " ed 06 3c f0 e1 ca d8"));
  ASSERT_TRUE(t.Add(Hex(testing::kRfc8448ServerFlight)));
  ASSERT_TRUE(t.CurrentHash(absl::MakeSpan(out)));
  EXPECT_EQ(out, Hex("96 08 10 2a 0f 1c cc 6d b6 25 0b 7b 7e 41 7b 1a 00 0e aa da 3d aa e4 77 7a"
                     " 76 86 c9 ff 83 df 13"));
}

TEST(TranscriptTest, HelloRetryRequestMessageHash) {
  auto algorithms = SuiteAlgorithms::Create();
  ASSERT_NE(algorithms, nullptr);
  Transcript t(*algorithms);
  ASSERT_TRUE(t.Start(CipherSuite::kAes128GcmSha256));
  const Bytes client_hello1 = Hex("01 00 00 04 03 03 de ad");
  const Bytes hrr = Hex("02 00 00 02 03 03");
  ASSERT_TRUE(t.Add(client_hello1));
  ASSERT_TRUE(t.ReplaceWithMessageHash());
  ASSERT_TRUE(t.Add(hrr));
  // §4.4.1: Transcript-Hash(ClientHello1, HRR, ...) = Hash(message_hash | HRR | ...), with
  // message_hash = fe 00 00 20 | Hash(ClientHello1).
  Bytes expected = {0xfe, 0x00, 0x00, 0x20};
  const Bytes inner = Sha256(client_hello1);
  expected.insert(expected.end(), inner.begin(), inner.end());
  expected.insert(expected.end(), hrr.begin(), hrr.end());
  Bytes out(32);
  ASSERT_TRUE(t.CurrentHash(absl::MakeSpan(out)));
  EXPECT_EQ(out, Sha256(expected));
}

}  // namespace
}  // namespace onepass::tls::tls13
