// TicketKeyring and TicketSealer: round trips of every suite and ALPN, the key file's rotation,
// and every way a ticket must be refused (bit flips, truncations, time, lengths).
#include "server/tls/tls13/ticket/session_ticket.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/server/tls/tls13/ticket/test_keys.h"

namespace onepass::tls::tls13 {
namespace {

using testing::kNowMs;
using testing::MakeKey;
using testing::MakeState;
using testing::SameState;

constexpr CipherSuite kSuites[] = {CipherSuite::kAes128GcmSha256, CipherSuite::kAes256GcmSha384,
                                   CipherSuite::kChaCha20Poly1305Sha256};

std::vector<uint8_t> SealOrDie(TicketSealer& sealer, const TicketState& state) {
  std::vector<uint8_t> out(kMaxTicketLength);
  const size_t n = sealer.Seal(state, absl::MakeSpan(out));
  EXPECT_EQ(n, kTicketLength);
  out.resize(n);
  return out;
}

std::unique_ptr<TicketKeyring> Ring(std::vector<TicketKey> keys) {
  auto ring = TicketKeyring::Create(keys);
  EXPECT_NE(ring, nullptr);
  return ring;
}

TEST(SessionTicketTest, EverySuiteAndAlpnRoundTrips) {
  auto ring = Ring({MakeKey(1)});
  TicketSealer sealer(*ring);
  for (CipherSuite suite : kSuites) {
    for (const std::string& alpn :
         std::vector<std::string>{"", "dot", "h2", std::string(32, 'x')}) {
      const TicketState state = MakeState(suite, alpn);
      const std::vector<uint8_t> ticket = SealOrDie(sealer, state);
      TicketState opened;
      ASSERT_TRUE(sealer.Open(ticket, kNowMs + 1000, &opened))
          << static_cast<int>(suite) << " " << alpn;
      EXPECT_TRUE(SameState(opened, state));
    }
  }
}

TEST(SessionTicketTest, EveryTicketHasOneLengthAndItsOwnIv) {
  auto ring = Ring({MakeKey(1)});
  TicketSealer sealer(*ring);
  const auto a = SealOrDie(sealer, MakeState(CipherSuite::kAes128GcmSha256, ""));
  const auto b = SealOrDie(sealer, MakeState(CipherSuite::kAes256GcmSha384, std::string(32, 'x')));
  const auto c = SealOrDie(sealer, MakeState(CipherSuite::kAes128GcmSha256, ""));
  EXPECT_EQ(a.size(), b.size());  // the length says nothing of suite or ALPN
  EXPECT_NE(a, c);                // a random IV each time, even for one state
  EXPECT_FALSE(std::equal(a.begin() + 16, a.begin() + 28, c.begin() + 16));
}

TEST(SessionTicketTest, BytesPastTheLengthsAreNotSealedAndOpenAsZero) {
  auto ring = Ring({MakeKey(1)});
  TicketSealer sealer(*ring);
  TicketState state = MakeState(CipherSuite::kAes128GcmSha256, "dot");
  state.psk[40] = 0xff;   // past psk_length 32
  state.alpn[10] = 0xff;  // past alpn_length 3
  TicketState opened;
  ASSERT_TRUE(sealer.Open(SealOrDie(sealer, state), kNowMs, &opened));
  EXPECT_EQ(opened.psk[40], 0);
  EXPECT_EQ(opened.alpn[10], 0);
}

TEST(SessionTicketTest, NewestKeySealsOlderListedKeyOpensRetiredKeyDoesNot) {
  auto old_ring = Ring({MakeKey(1)});
  TicketSealer old_sealer(*old_ring);
  const auto old_ticket = SealOrDie(old_sealer, MakeState(CipherSuite::kAes128GcmSha256, "dot"));

  auto rotated = Ring({MakeKey(2), MakeKey(1)});  // 2 in front, 1 still decrypts
  TicketSealer sealer(*rotated);
  TicketState opened;
  EXPECT_TRUE(sealer.Open(old_ticket, kNowMs, &opened));
  const auto new_ticket = SealOrDie(sealer, MakeState(CipherSuite::kAes128GcmSha256, "dot"));
  const TicketKey newest = MakeKey(2);
  EXPECT_TRUE(std::equal(newest.name.begin(), newest.name.end(), new_ticket.begin()));
  EXPECT_FALSE(old_sealer.Open(new_ticket, kNowMs, &opened));  // 2 is not in the old file

  auto retired = Ring({MakeKey(3), MakeKey(2)});  // 1 dropped
  TicketSealer later(*retired);
  EXPECT_FALSE(later.Open(old_ticket, kNowMs, &opened));
  EXPECT_TRUE(later.Open(new_ticket, kNowMs, &opened));
}

TEST(SessionTicketTest, SameNameOtherSecretsDoesNotOpen) {
  TicketKey impostor = MakeKey(9);
  impostor.name = MakeKey(1).name;
  auto ring = Ring({MakeKey(1)});
  auto other = Ring({impostor});
  TicketSealer sealer(*ring), other_sealer(*other);
  TicketState opened;
  EXPECT_FALSE(other_sealer.Open(SealOrDie(sealer, MakeState(CipherSuite::kAes128GcmSha256, "")),
                                 kNowMs, &opened));
  // Each half of the file key's secret counts.
  TicketKey hmac_differs = MakeKey(1), aes_differs = MakeKey(1);
  hmac_differs.hmac_key[31] ^= 1;
  aes_differs.aes_key[0] ^= 1;
  for (const TicketKey& key : {hmac_differs, aes_differs}) {
    auto near = Ring({key});
    TicketSealer near_sealer(*near);
    EXPECT_FALSE(near_sealer.Open(SealOrDie(sealer, MakeState(CipherSuite::kAes128GcmSha256, "")),
                                  kNowMs, &opened));
  }
}

TEST(SessionTicketTest, EverySingleBitFlipIsRefused) {
  auto ring = Ring({MakeKey(1)});
  TicketSealer sealer(*ring);
  const auto ticket = SealOrDie(sealer, MakeState(CipherSuite::kAes256GcmSha384, "dot"));
  TicketState opened = MakeState(CipherSuite::kAes128GcmSha256, "untouched");
  const TicketState before = opened;
  for (size_t bit = 0; bit < ticket.size() * 8; ++bit) {
    std::vector<uint8_t> flipped = ticket;
    flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    ASSERT_FALSE(sealer.Open(flipped, kNowMs, &opened)) << "bit " << bit;
  }
  EXPECT_TRUE(SameState(opened, before));             // never written on a refusal
  EXPECT_TRUE(sealer.Open(ticket, kNowMs, &opened));  // the context is still good after them
}

TEST(SessionTicketTest, TruncationsAndExtensionsAreRefused) {
  auto ring = Ring({MakeKey(1)});
  TicketSealer sealer(*ring);
  const auto ticket = SealOrDie(sealer, MakeState(CipherSuite::kAes128GcmSha256, "dot"));
  TicketState opened;
  for (size_t n = 0; n < ticket.size(); ++n) {
    EXPECT_FALSE(sealer.Open(absl::MakeConstSpan(ticket).first(n), kNowMs, &opened)) << n;
    EXPECT_FALSE(sealer.Open(absl::MakeConstSpan(ticket).subspan(n + 1), kNowMs, &opened)) << n;
  }
  std::vector<uint8_t> longer = ticket;
  longer.push_back(0);
  EXPECT_FALSE(sealer.Open(longer, kNowMs, &opened));
  EXPECT_FALSE(sealer.Open({}, kNowMs, &opened));
}

TEST(SessionTicketTest, ExpiredAndFutureTicketsAreRefused) {
  auto ring = Ring({MakeKey(1)});
  TicketSealer sealer(*ring);
  const auto ticket =
      SealOrDie(sealer, MakeState(CipherSuite::kAes128GcmSha256, "dot", kNowMs, 3600));
  TicketState opened;
  EXPECT_TRUE(sealer.Open(ticket, kNowMs + 3600 * 1000, &opened));  // as old as its lifetime
  EXPECT_FALSE(sealer.Open(ticket, kNowMs + 3600 * 1000 + 1, &opened));
  EXPECT_FALSE(sealer.Open(ticket, UINT64_MAX, &opened));
  EXPECT_TRUE(sealer.Open(ticket, kNowMs - kMaxIssueSkewMs, &opened));  // a clock a bit behind
  EXPECT_FALSE(sealer.Open(ticket, kNowMs - kMaxIssueSkewMs - 1, &opened));
  EXPECT_FALSE(sealer.Open(ticket, 0, &opened));

  const auto far_future =
      SealOrDie(sealer, MakeState(CipherSuite::kAes128GcmSha256, "", UINT64_MAX, 3600));
  EXPECT_FALSE(sealer.Open(far_future, kNowMs, &opened));
  EXPECT_TRUE(sealer.Open(far_future, UINT64_MAX, &opened));  // no overflow either way

  const auto week = SealOrDie(
      sealer, MakeState(CipherSuite::kAes128GcmSha256, "", kNowMs, kMaxTicketLifetimeSeconds));
  EXPECT_TRUE(sealer.Open(week, kNowMs + uint64_t{kMaxTicketLifetimeSeconds} * 1000, &opened));
  EXPECT_FALSE(sealer.Open(week, kNowMs + uint64_t{kMaxTicketLifetimeSeconds} * 1000 + 1, &opened));
}

TEST(SessionTicketTest, SealRefusesStatesThatBreakTheRules) {
  auto ring = Ring({MakeKey(1)});
  TicketSealer sealer(*ring);
  uint8_t out[kMaxTicketLength];
  const TicketState good = MakeState(CipherSuite::kAes256GcmSha384, "dot");
  EXPECT_EQ(sealer.Seal(good, out), kTicketLength);
  EXPECT_EQ(sealer.Seal(good, absl::MakeSpan(out, kTicketLength)), kTicketLength);
  EXPECT_EQ(sealer.Seal(good, absl::MakeSpan(out, kTicketLength - 1)), 0u);

  TicketState s = good;
  s.psk_length = 32;  // SHA-384's PSK is 48 bytes
  EXPECT_EQ(sealer.Seal(s, out), 0u);
  s = good;
  s.psk_length = 49;
  EXPECT_EQ(sealer.Seal(s, out), 0u);
  s = good;
  s.alpn_length = 33;
  EXPECT_EQ(sealer.Seal(s, out), 0u);
  s = good;
  s.lifetime_seconds = kMaxTicketLifetimeSeconds + 1;  // RFC 8446 §4.6.1
  EXPECT_EQ(sealer.Seal(s, out), 0u);
  s = good;
  s.suite = static_cast<CipherSuite>(0x1304);
  EXPECT_EQ(sealer.Seal(s, out), 0u);
}

// The IV a caller drew (the handshake, with its other randoms) is the one the ticket carries
// after the key name, and it opens; any other length is refused. Without one, each Seal draws
// its own: two seals of one state differ.
TEST(SessionTicketTest, SealWithTheCallersIv) {
  auto ring = Ring({MakeKey(1)});
  TicketSealer sealer(*ring);
  const TicketState state = MakeState(CipherSuite::kAes128GcmSha256, "dot");
  uint8_t iv[kTicketIvLength];
  for (size_t i = 0; i < sizeof(iv); ++i) iv[i] = static_cast<uint8_t>(0xa0 + i);
  uint8_t out[kMaxTicketLength];
  ASSERT_EQ(sealer.Seal(state, iv, out), kTicketLength);
  EXPECT_EQ(std::vector<uint8_t>(out + kTicketNameLength, out + kTicketNameLength + sizeof(iv)),
            std::vector<uint8_t>(iv, iv + sizeof(iv)));
  TicketState opened;
  ASSERT_TRUE(sealer.Open({out, kTicketLength}, kNowMs, &opened));
  EXPECT_TRUE(SameState(opened, state));
  EXPECT_EQ(sealer.Seal(state, absl::MakeConstSpan(iv, sizeof(iv) - 1), out), 0u);
  uint8_t longer[kTicketIvLength + 1] = {};
  EXPECT_EQ(sealer.Seal(state, longer, out), 0u);
  EXPECT_NE(SealOrDie(sealer, state), SealOrDie(sealer, state));
}

TEST(SessionTicketTest, KeyringRefusesNoKeysTooManyKeysAndTwoOfOneName) {
  EXPECT_EQ(TicketKeyring::Create({}), nullptr);
  std::vector<TicketKey> keys;
  for (size_t i = 0; i < kMaxTicketKeys; ++i) keys.push_back(MakeKey(static_cast<uint8_t>(3 * i)));
  auto full = TicketKeyring::Create(keys);
  ASSERT_NE(full, nullptr);
  EXPECT_EQ(full->size(), kMaxTicketKeys);
  // The last (oldest) of sixteen still opens.
  std::vector<TicketKey> oldest_only = {keys.back()};
  auto old = Ring(oldest_only);
  TicketSealer old_sealer(*old), sealer(*full);
  TicketState opened;
  EXPECT_TRUE(sealer.Open(SealOrDie(old_sealer, MakeState(CipherSuite::kAes128GcmSha256, "")),
                          kNowMs, &opened));

  keys.push_back(MakeKey(200));
  EXPECT_EQ(TicketKeyring::Create(keys), nullptr);
  std::vector<TicketKey> twins = {MakeKey(1), MakeKey(2), MakeKey(1)};
  EXPECT_EQ(TicketKeyring::Create(twins), nullptr);
}

TEST(SessionTicketTest, ProcessTicketKeyMakesAKeyring) {
  auto ring = TicketKeyring::Create(absl::MakeConstSpan(&ProcessTicketKey(), 1));
  ASSERT_NE(ring, nullptr);
  TicketSealer sealer(*ring);
  TicketState opened;
  EXPECT_TRUE(sealer.Open(SealOrDie(sealer, MakeState(CipherSuite::kAes128GcmSha256, "dot")),
                          kNowMs, &opened));
}

}  // namespace
}  // namespace onepass::tls::tls13
