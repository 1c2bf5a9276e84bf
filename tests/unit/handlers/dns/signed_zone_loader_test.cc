// Loading signed zones: what signing adds must load (RRSIG and NSEC beside a CNAME,
// RFC 4035 §2.5), RRSIGs are indexed by the type they cover, NSEC3 owners leave the namespace,
// the NSEC3 iteration cap refuses a zone, and the earliest expiry is found.
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/zone_loader.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using ::testing::HasSubstr;

// A fake signature: loading never verifies signatures (the signer did), so any bytes do.
std::string Rrsig(absl::string_view owner, absl::string_view type, int labels,
                  absl::string_view expiration = "20300101000000") {
  return absl::StrCat(owner, " 3600 IN RRSIG ", type, " 13 ", labels, " 3600 ", expiration,
                      " 20200101000000 12345 example.org. AAECAwQFBgcICQ==\n");
}

constexpr absl::string_view kHead =
    "example.org. 3600 IN SOA ns1.example.org. h.example.org. 1 7200 3600 1209600 300\n"
    "example.org. 3600 IN NS ns1.example.org.\n";

TEST(SignedZoneLoaderTest, CnameWithRrsigAndNsecLoads) {
  // The SOA's RRSIG with a TTL of its own: answers use the SOA's (NSD).
  std::string soa_rrsig = Rrsig("example.org.", "SOA", 2);
  soa_rrsig.replace(soa_rrsig.find(" 3600 "), 6, " 7200 ");
  const std::string text = absl::StrCat(
      kHead, soa_rrsig, Rrsig("example.org.", "NS", 2),
      "ftp.example.org. 3600 IN CNAME www.example.org.\n", Rrsig("ftp.example.org.", "CNAME", 3),
      "ftp.example.org. 300 IN NSEC www.example.org. CNAME RRSIG NSEC\n",
      Rrsig("ftp.example.org.", "NSEC", 3, "20290101000000"));
  auto zone = ParseZone(ZoneSource{"signed.zone", text});
  ASSERT_TRUE(zone.ok()) << zone.status();
  EXPECT_TRUE((*zone)->secure());
  const Node* ftp = (*zone)->FindNode(testing::WireName("ftp.example.org."));
  ASSERT_NE(ftp, nullptr);
  ASSERT_NE(ftp->Find(kTypeCname), nullptr);
  EXPECT_EQ(ftp->Find(kTypeCname)->signatures.size(), 1u);
  EXPECT_EQ(ftp->Find(kTypeNsec)->signatures.size(), 1u);
  // The RRSIG RRset stays for queries of type RRSIG.
  EXPECT_EQ(ftp->Find(kTypeRrsig)->records.size(), 2u);
  // The SOA's signature follows the SOA's TTL in negative answers (NSD, bug #542).
  ASSERT_EQ((*zone)->negative_soa().signatures.size(), 1u);
  EXPECT_EQ((*zone)->negative_soa().signatures[0]->ttl, 300u);
  // The positive SOA's RRSIG has the SOA's TTL too.
  EXPECT_EQ((*zone)->apex().Find(kTypeSoa)->signatures[0]->ttl, 3600u);
  ASSERT_TRUE((*zone)->earliest_expiry().has_value());
  EXPECT_EQ((*zone)->earliest_expiry()->owner, testing::WireName("ftp.example.org."));
  EXPECT_EQ((*zone)->earliest_expiry()->type_covered, kTypeNsec);
  EXPECT_EQ((*zone)->earliest_expiry()->expiration, 1861920000u);  // 2029-01-01
}

TEST(SignedZoneLoaderTest, CnameWithOtherDataStillRefused) {
  const std::string text =
      absl::StrCat(kHead, "ftp.example.org. 3600 IN CNAME www.example.org.\n",
                   Rrsig("ftp.example.org.", "CNAME", 3), "ftp.example.org. 3600 IN A 192.0.2.1\n");
  auto zone = ParseZone(ZoneSource{"bad.zone", text});
  ASSERT_FALSE(zone.ok());
  EXPECT_THAT(zone.status().message(), HasSubstr("CNAME and other data at ftp.example.org."));
}

TEST(SignedZoneLoaderTest, UnsignedZoneIsNotSecure) {
  auto zone = ParseZone(ZoneSource{"plain.zone", std::string(kHead)});
  ASSERT_TRUE(zone.ok()) << zone.status();
  EXPECT_FALSE((*zone)->secure());
  EXPECT_FALSE((*zone)->earliest_expiry().has_value());
}

std::string Nsec3Zone(int iterations) {
  return absl::StrCat(kHead, Rrsig("example.org.", "SOA", 2),
                      "example.org. 3600 IN NSEC3PARAM 1 0 ", iterations, " ab\n",
                      "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom.example.org. 300 IN NSEC3 1 0 ", iterations,
                      " ab 0p9mhaveqvm6t7vbl5lop2u3t2rp3tom NS SOA RRSIG NSEC3PARAM\n",
                      Rrsig("0p9mhaveqvm6t7vbl5lop2u3t2rp3tom.example.org.", "NSEC3", 3));
}

TEST(SignedZoneLoaderTest, Nsec3OwnersLeaveTheNamespace) {
  auto zone = ParseZone(ZoneSource{"nsec3.zone", Nsec3Zone(0)});
  ASSERT_TRUE(zone.ok()) << zone.status();
  const std::string hashed = testing::WireName("0p9mhaveqvm6t7vbl5lop2u3t2rp3tom.example.org.");
  EXPECT_EQ((*zone)->FindNode(hashed), nullptr);
  ASSERT_EQ((*zone)->nsec3_nodes().count(hashed), 1u);
  EXPECT_EQ((*zone)->nsec3_nodes().at(hashed).Find(kTypeNsec3)->signatures.size(), 1u);
  EXPECT_TRUE((*zone)->denial().has_nsec3());
  EXPECT_EQ((*zone)->denial().nsec3_params().salt, "\xab");
}

TEST(SignedZoneLoaderTest, Nsec3IterationCap) {
  EXPECT_TRUE(ParseZone(ZoneSource{"z", Nsec3Zone(100)}).ok());
  auto refused = ParseZone(ZoneSource{"z", Nsec3Zone(101)});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("z:4: NSEC3 iterations 101 above the limit"));
  ZoneLoadOptions strict;
  strict.max_nsec3_iterations = 0;
  auto zero = ParseZone(ZoneSource{"z", Nsec3Zone(1)}, strict);
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(), HasSubstr("RFC 9276"));
  EXPECT_TRUE(ParseZone(ZoneSource{"z", Nsec3Zone(0)}, strict).ok());
}

}  // namespace
}  // namespace onepass::dns
