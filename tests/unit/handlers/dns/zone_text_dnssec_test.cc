// The DNSSEC fast paths of the zone reader (handlers/dns/zone_text_dnssec.h) by themselves:
// what they take is byte for byte what ldns makes of it; hex and base64 give the same bytes
// however they are split over tokens, and a type bitmap the same in any order; what they
// decline is left to ldns (zone_text_test.cc checks that through the reader).
#include "handlers/dns/zone_text_dnssec.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using onepass::dns::testing::FastDnssecRdata;
using onepass::dns::testing::LdnsRdata;

constexpr char kOrigin[] = "example.";
const std::string kSig = "MEUCIQDdNx3K7h0kZ6f2nQ0bq8Zb1hX3b5pGg1y8r0o7sY3dRwIgYc7m0P2vPj5u9xw+/AaZ";
const std::string kRrsigHead = "A 13 2 3600 20261231000000 20261201000000 4242 example.com. ";
const std::string kHash = "2T7B4G4VSA5SMI47K61MV5BV1A22BOJR";  // RFC 5155 Appendix A

struct Case {
  std::string type;
  std::string text;
};

std::string Hex(const std::string& bytes) {
  std::string out;
  for (const unsigned char c : bytes)
    absl::StrAppend(&out, absl::Hex(static_cast<unsigned>(c), absl::kZeroPad2));
  return out;
}

// The fast path takes it, and its bytes are ldns's.
void ExpectSameAsLdns(const Case& c) {
  SCOPED_TRACE(c.type + " " + c.text);
  std::string fast;
  ASSERT_TRUE(FastDnssecRdata(c.type, c.text, kOrigin, fast));
  const absl::StatusOr<std::string> reference = LdnsRdata(c.type, c.text, kOrigin);
  ASSERT_TRUE(reference.ok()) << reference.status();
  EXPECT_EQ(Hex(fast), Hex(*reference));
}

TEST(ZoneTextDnssecTest, FastFormsAreLdnsBytes) {
  const std::vector<Case> cases = {
      {"DS", "12345 13 2 " + std::string(64, 'a')},
      {"DS", "0 8 1 0123456789ABCDEFabcdef0123456789ABCDEF"},
      {"DS", "65535 255 255 ab cd ef"},
      {"RRSIG", kRrsigHead + kSig},
      {"RRSIG", "TYPE65280 13 2 3600 20370101000000 19700101000000 65535 a " + kSig},
      {"RRSIG", "NSEC3 8 3 0 20261231000000 20000229235959 0 . " + kSig.substr(0, 8)},
      {"RRSIG", kRrsigHead + "AAA="},
      {"RRSIG", kRrsigHead + "AA=="},
      // RFC 5155 Appendix A, upper and lower case.
      {"NSEC3", "1 1 12 aabbccdd " + kHash + " MX DNSKEY NS SOA NSEC3PARAM RRSIG"},
      {"NSEC3", "1 1 12 AABBCCDD 2t7b4g4vsa5smi47k61mv5bv1a22bojr A RRSIG"},
      // As dnssec-signzone writes opt-out delegations: no salt, 0 iterations.
      {"NSEC3", "1 1 0 - " + kHash + " NS DS RRSIG"},
      {"NSEC3", "1 0 65535 - " + kHash + " NS"},
      {"NSEC3", "255 255 0 00 " + kHash + " TYPE65535"},
      {"NSEC3", "1 0 0 - " + kHash + " A TYPE1234 CAA TYPE300 AAAA"},    // windows 0, 1, 4
      {"NSEC3", "1 0 0 - " + kHash + " A A RRSIG A"},                    // duplicates
      {"NSEC3", "1 0 0 " + std::string(510, 'f') + " " + kHash + " A"},  // 255-byte salt
      {"NSEC3", "1 0 0 - 00000000 A"},                                   // 5-byte hash
  };
  for (const Case& c : cases) ExpectSameAsLdns(c);
}

// RFC 5155 §3.2 and RFC 4034 §4.1.2 written out for Appendix A's first NSEC3: the bytes do
// not only agree with ldns, they are the RFC's.
TEST(ZoneTextDnssecTest, Nsec3BytesAreTheRfcs) {
  std::string rdata;
  ASSERT_TRUE(FastDnssecRdata(
      "NSEC3", "1 1 12 aabbccdd " + kHash + " MX DNSKEY NS SOA NSEC3PARAM RRSIG", kOrigin, rdata));
  const std::string hex = Hex(rdata);
  EXPECT_EQ(hex.substr(0, 18), "0101000c04aabbccdd");  // alg, flags, iterations, salt
  EXPECT_EQ(rdata[9], 20);                             // SHA-1's hash length
  EXPECT_EQ(rdata.size(), 9u + 1 + 20 + 9);
  // Window 0, 7 bytes: NS (2), SOA (6), MX (15), RRSIG (46), DNSKEY (48), NSEC3PARAM (51).
  EXPECT_EQ(hex.substr(hex.size() - 18), "000722010000000290");
}

// Declined: the reader hands these to ldns, which accepts some and rejects others.
TEST(ZoneTextDnssecTest, OddFormsAreLeftToLdns) {
  const std::vector<Case> cases = {
      {"DS", "12345 13 2 abc"},            // odd digit count
      {"DS", "70000 13 2 abcd"},           // key tag over 65535
      {"DS", "0 ECDSAP256SHA256 2 abcd"},  // mnemonic
      {"DS", "1 2 3"},                     // no digest
      {"RRSIG", "A 13 2 1h 20261231000000 20261201000000 4242 example.com. " + kSig},
      {"RRSIG", "A 13 2 3600 1798675200 1796083200 4242 example.com. " + kSig},
      {"RRSIG", "A 13 2 3600 20261331000000 20261201000000 4242 example.com. " + kSig},
      {"RRSIG", kRrsigHead + "!!" + kSig},
      {"RRSIG", kRrsigHead + "AAA"},   // not whole quanta
      {"RRSIG", kRrsigHead + "AB=="},  // stray bits
      {"RRSIG", "BOGUS 13 2 3600 20261231000000 20261201000000 4242 example.com. " + kSig},
      {"RRSIG", "TYPE1x 13 2 3600 20261231000000 20261201000000 4242 example.com. " + kSig},
      {"RRSIG", "TYPE1\\ 13 2 3600 20261231000000 20261201000000 4242 example.com. " + kSig},
      {"NSEC3", "SHA-1 1 0 - " + kHash + " A"},                          // mnemonic algorithm
      {"NSEC3", "1 1 65536 - " + kHash + " A"},                          // iterations over 16 bits
      {"NSEC3", "1 1 0 abc " + kHash + " A"},                            // odd salt digits
      {"NSEC3", "1 1 0 " + std::string(512, 'f') + " " + kHash + " A"},  // 256-byte salt
      {"NSEC3", "1 1 0 - " + kHash.substr(0, 31) + " A"},                // partial quantum
      {"NSEC3", "1 1 0 - " + kHash.substr(0, 30) + "== A"},              // padding
      {"NSEC3", "1 1 0 - " + kHash.substr(0, 31) + "W A"},               // not base32hex
      {"NSEC3", "1 1 0 - " + kHash},                                     // no types
      {"NSEC3", "1 1 0 - " + kHash + " A BOGUS"},                        // unknown type
      {"NSEC3", "1 1 0 - " + kHash + " TYPE0"},
      // ldns would read these as TYPE1234 (atoi), its tokenizer "TYPE1234\ CAA" as one token:
      // a fuzzer's find, the fast path's CAA bit against ldns's none.
      {"NSEC3", "1 1 0 - " + kHash + " A TYPE1234\\ CAA"},
      {"NSEC3", "1 1 0 - " + kHash + " TYPE12x"},
      {"NSEC3", "1 1 0 - " + kHash + " A\\065"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type + " " + c.text);
    std::string rdata;
    EXPECT_FALSE(FastDnssecRdata(c.type, c.text, kOrigin, rdata));
  }
}

// `head` then `body` cut into tokens whole, one character each, and at every two-way split:
// the same bytes every time, the whole form's being ldns's.
void ExpectSplitInvariant(const std::string& type, const std::string& head,
                          const std::string& body) {
  SCOPED_TRACE(head + body);
  std::string whole;
  ASSERT_TRUE(FastDnssecRdata(type, head + body, kOrigin, whole));
  ExpectSameAsLdns({type, head + body});
  std::vector<std::string> forms;
  std::vector<std::string> chars;
  for (const char c : body) chars.emplace_back(1, c);
  forms.push_back(head + absl::StrJoin(chars, " "));
  for (size_t cut = 1; cut < body.size(); ++cut) {
    forms.push_back(head + body.substr(0, cut) + " " + body.substr(cut));
  }
  for (const std::string& form : forms) {
    SCOPED_TRACE(form);
    std::string rdata;
    ASSERT_TRUE(FastDnssecRdata(type, form, kOrigin, rdata));
    EXPECT_EQ(Hex(rdata), Hex(whole));
  }
}

TEST(ZoneTextDnssecTest, HexAndBase64AreSplitInvariant) {
  ExpectSplitInvariant("DS", "12345 13 2 ", "0123456789abcdefABCDEF0123456789abcdef0123");
  ExpectSplitInvariant("RRSIG", kRrsigHead, kSig);
  ExpectSplitInvariant("RRSIG", kRrsigHead, kSig.substr(0, 8) + "AQ==");
}

TEST(ZoneTextDnssecTest, TypeBitmapIsTheSameInAnyOrder) {
  std::vector<std::string> types = {"A", "NS", "SOA", "RRSIG", "TYPE1234", "CAA", "TYPE65535"};
  const std::string head = "1 1 0 - " + kHash + " ";
  std::string first;
  ASSERT_TRUE(FastDnssecRdata("NSEC3", head + absl::StrJoin(types, " "), kOrigin, first));
  for (size_t rotation = 1; rotation < types.size(); ++rotation) {
    std::rotate(types.begin(), types.begin() + 1, types.end());
    std::vector<std::string> reversed(types.rbegin(), types.rend());
    for (const std::vector<std::string>* order : {&types, &reversed}) {
      const std::string text = head + absl::StrJoin(*order, " ");
      SCOPED_TRACE(text);
      std::string rdata;
      ASSERT_TRUE(FastDnssecRdata("NSEC3", text, kOrigin, rdata));
      EXPECT_EQ(Hex(rdata), Hex(first));
    }
  }
  ExpectSameAsLdns({"NSEC3", head + absl::StrJoin(types, " ")});
}

}  // namespace
}  // namespace onepass::dns
