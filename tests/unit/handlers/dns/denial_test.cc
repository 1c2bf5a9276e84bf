// Which records prove a denial (RFC 4035 §3.1.3, RFC 5155 §7.2), on small hand-made zones:
// the covering NSEC, the closest encloser, the next closer name, the wildcard. Signatures are
// fake (nothing here validates); NSEC3 owner names are hashed with ldns, independently of the
// handler's own hashing, which is checked against ldns and RFC 5155 Appendix A first.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "handlers/dns/denial_index.h"
#include "handlers/dns/zone_loader.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

// After <optional>: ldns (1.8.3) defines `bool` for C, which breaks C++20 <optional>.
#include <ldns/ldns.h>  // NOLINT(build/include_order)

namespace onepass::dns {
namespace {

using testing::WireName;

TEST(DenialTest, CanonicalOrderOfRfc4034) {
  // RFC 4034 §6.1, in order.
  const std::vector<std::string> names = {
      WireName("example."),         WireName("a.example."),      WireName("yljkjljk.a.example."),
      WireName("Z.a.example."),     WireName("zABC.a.EXAMPLE."), WireName("z.example."),
      WireName("\\001.z.example."), WireName("*.z.example."),    WireName("\\200.z.example.")};
  for (size_t i = 0; i < names.size(); ++i) {
    for (size_t j = 0; j < names.size(); ++j) {
      EXPECT_EQ(CanonicalLess(names[i], names[j]), i < j) << i << " " << j;
    }
  }
}

std::string LdnsHash(const std::string& name, const std::string& salt, uint16_t iterations) {
  ldns_rdf* rdf = ldns_dname_new_frm_str(name.c_str());
  ldns_rdf* hashed =
      ldns_nsec3_hash_name(rdf, 1, iterations, static_cast<uint8_t>(salt.size()),
                           reinterpret_cast<uint8_t*>(const_cast<char*>(salt.data())));
  char* text = ldns_rdf2str(hashed);
  std::string out = absl::AsciiStrToLower(text);
  free(text);
  ldns_rdf_deep_free(hashed);
  ldns_rdf_deep_free(rdf);
  return out.substr(0, out.find('.'));  // the first label
}

std::string OurHash(const std::string& name, const std::string& salt, uint16_t iterations) {
  Nsec3Params params;
  params.iterations = iterations;
  params.salt = salt;
  uint8_t hash[kNsec3HashBytes];
  Nsec3Hash(params, WireName(name), hash);
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuv";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (const uint8_t byte : hash) {
    bits = (bits << 8) | byte;
    count += 8;
    while (count >= 5) {
      count -= 5;
      out.push_back(kDigits[(bits >> count) & 31]);
    }
  }
  return out;
}

TEST(DenialTest, Nsec3HashAgreesWithRfc5155AndLdns) {
  // RFC 5155 Appendix A: H(example) with salt aabbccdd and 12 iterations.
  EXPECT_EQ(OurHash("example.", "\xaa\xbb\xcc\xdd", 12), "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom");
  for (const char* name : {"example.org.", "*.example.org.", "a.b.c.example.org.", "Www.X."}) {
    for (const std::string& salt : {std::string(), std::string("\xbe\xef"), std::string(40, 'x')}) {
      for (const uint16_t iterations : {0, 1, 5, 100}) {
        EXPECT_EQ(OurHash(name, salt, iterations), LdnsHash(name, salt, iterations))
            << name << " " << iterations;
      }
    }
  }
  const std::string raw = *DecodeBase32Hex("0P9MHAVEQVM6T7VBL5LOP2U3T2RP3TOM");
  EXPECT_EQ(raw.size(), kNsec3HashBytes);
  EXPECT_FALSE(DecodeBase32Hex("0p9w").has_value());  // 'w' is not base32hex
}

std::string Rrsig(const std::string& owner, const std::string& type) {
  return absl::StrCat(owner, " 300 IN RRSIG ", type, " 13 2 300 20300101000000 ",
                      "20200101000000 1 example.org. AAECAwQFBgcICQ==\n");
}

// Owners of the records of `type` in a section ("owner ttl class type rdata").
std::set<std::string> Owners(const std::vector<std::string>& section, const std::string& type) {
  std::set<std::string> owners;
  for (const std::string& rr : section) {
    std::vector<std::string> f = absl::StrSplit(rr, ' ', absl::SkipEmpty());
    if (f.size() > 3 && f[3] == type) owners.insert(f[0]);
  }
  return owners;
}

std::shared_ptr<const ZoneSnapshot> Load(const std::string& text) {
  auto snapshot = BuildSnapshot({ZoneSource{"hand-made", text}});
  EXPECT_TRUE(snapshot.ok()) << snapshot.status();
  return snapshot.ok() ? *snapshot : nullptr;
}

testing::QueryOptions Do() {
  testing::QueryOptions options;
  options.edns = options.do_bit = true;
  return options;
}

// Canonical order: example.org < a < c (ENT) < b.c < w (ENT) < *.w < x.
std::string NsecZone() {
  std::string z;
  auto add = [&z](const std::string& owner, const std::string& next, const std::string& types) {
    z += absl::StrCat(owner, " 300 IN NSEC ", next, " ", types, "\n", Rrsig(owner, "NSEC"));
  };
  z += "example.org. 300 IN SOA ns.example.net. h.example.org. 1 2 3 4 300\n";
  z += Rrsig("example.org.", "SOA");
  z += "example.org. 300 IN NS ns.example.net.\n";
  add("example.org.", "a.example.org.", "NS SOA RRSIG NSEC");
  z += "a.example.org. 300 IN A 192.0.2.1\n" + Rrsig("a.example.org.", "A");
  add("a.example.org.", "b.c.example.org.", "A RRSIG NSEC");
  z += "b.c.example.org. 300 IN A 192.0.2.2\n" + Rrsig("b.c.example.org.", "A");
  add("b.c.example.org.", "*.w.example.org.", "A RRSIG NSEC");
  z += "*.w.example.org. 300 IN TXT \"w\"\n" + Rrsig("*.w.example.org.", "TXT");
  add("*.w.example.org.", "x.example.org.", "TXT RRSIG NSEC");
  z += "x.example.org. 300 IN A 192.0.2.3\n" + Rrsig("x.example.org.", "A");
  add("x.example.org.", "example.org.", "A RRSIG NSEC");
  return z;
}

struct ProofCase {
  const char* name;
  const char* type;
  int rcode;
  std::set<std::string> proof;  // owners of the NSEC (or NSEC3) records in authority
};

TEST(DenialTest, NsecProofs) {
  auto snapshot = Load(NsecZone());
  ASSERT_NE(snapshot, nullptr);
  const std::vector<ProofCase> cases = {
      // RFC 4035 §3.1.3.2: the NSEC covering the name and the one covering *.<encloser>.
      {"nx.example.org.", "A", 3, {"b.c.example.org.", "example.org."}},
      {"zz.example.org.", "A", 3, {"x.example.org.", "example.org."}},  // last, wraps around
      {"q.b.c.example.org.", "A", 3, {"b.c.example.org."}},             // covers both
      // §3.1.3.1 NODATA: the NSEC at the name; an ENT: the NSEC covering it.
      {"a.example.org.", "MX", 0, {"a.example.org."}},
      {"c.example.org.", "A", 0, {"a.example.org."}},
      // §3.1.3.3: a wildcard answer proves that the name itself does not exist.
      {"foo.w.example.org.", "TXT", 0, {"*.w.example.org."}},
      // §3.1.3.4: wildcard NODATA, the NSEC at the wildcard.
      {"foo.w.example.org.", "A", 0, {"*.w.example.org."}},
      {"a.example.org.", "A", 0, {}},
  };
  for (const ProofCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.name, " ", c.type));
    auto with_do = testing::Ask(snapshot, c.name, c.type, Do());
    ASSERT_TRUE(with_do.ok()) << with_do.status();
    EXPECT_EQ(with_do->rcode, c.rcode);
    EXPECT_EQ(Owners(with_do->authority, "nsec"), c.proof) << with_do->ToString();
    // Signed: every NSEC comes with its RRSIG.
    const std::set<std::string> signed_owners = Owners(with_do->authority, "rrsig");
    for (const std::string& owner : c.proof) EXPECT_EQ(signed_owners.count(owner), 1u) << owner;
    // Without DO: no DNSSEC records at all.
    auto plain = testing::Ask(snapshot, c.name, c.type);
    ASSERT_TRUE(plain.ok());
    EXPECT_TRUE(Owners(plain->authority, "nsec").empty());
    EXPECT_TRUE(Owners(plain->authority, "rrsig").empty());
    EXPECT_TRUE(Owners(plain->answer, "rrsig").empty());
  }
}

// A zone with an NSEC3 chain (no salt, 0 iterations) over: the apex, a, c (ENT), b.c, w (ENT),
// *.w, sub (an unsigned delegation with an NSEC3), opt (one without: opt-out).
class Nsec3Zone {
 public:
  Nsec3Zone() {
    const std::vector<std::string> names = {
        "example.org.",   "a.example.org.",   "c.example.org.",  "b.c.example.org.",
        "w.example.org.", "*.w.example.org.", "sub.example.org."};
    for (const std::string& name : names) hashes_.push_back(LdnsHash(name, "", 0));
    std::sort(hashes_.begin(), hashes_.end());
    text_ = "example.org. 300 IN SOA ns.example.net. h.example.org. 1 2 3 4 300\n";
    text_ += Rrsig("example.org.", "SOA");
    text_ += "example.org. 300 IN NS ns.example.net.\n";
    text_ += "example.org. 300 IN NSEC3PARAM 1 0 0 -\n";
    text_ += "a.example.org. 300 IN A 192.0.2.1\n" + Rrsig("a.example.org.", "A");
    text_ += "b.c.example.org. 300 IN A 192.0.2.2\n" + Rrsig("b.c.example.org.", "A");
    text_ += "*.w.example.org. 300 IN TXT \"w\"\n" + Rrsig("*.w.example.org.", "TXT");
    text_ += "sub.example.org. 300 IN NS ns.example.net.\n";
    text_ += "opt.example.org. 300 IN NS ns.example.net.\n";
    for (size_t i = 0; i < hashes_.size(); ++i) {
      const std::string owner = hashes_[i] + ".example.org.";
      text_ += absl::StrCat(owner, " 300 IN NSEC3 1 1 0 - ", hashes_[(i + 1) % hashes_.size()],
                            " A RRSIG\n", Rrsig(owner, "NSEC3"));
    }
  }
  const std::string& text() const { return text_; }
  // The owner of the NSEC3 matching H(name).
  std::string Match(const std::string& name) const { return Owner(LdnsHash(name, "", 0), true); }
  // The owner of the NSEC3 covering H(name) (the last hash below it, wrapping around).
  std::string Cover(const std::string& name) const { return Owner(LdnsHash(name, "", 0), false); }

 private:
  std::string Owner(const std::string& hash, bool exact) const {
    auto it = std::upper_bound(hashes_.begin(), hashes_.end(), hash);
    std::string found = it == hashes_.begin() ? hashes_.back() : *std::prev(it);
    if (exact && found != hash) return "(no match for " + hash + ")";
    return found + ".example.org.";
  }
  std::vector<std::string> hashes_;
  std::string text_;
};

TEST(DenialTest, Nsec3Proofs) {
  const Nsec3Zone zone;
  auto snapshot = Load(zone.text());
  ASSERT_NE(snapshot, nullptr);
  ASSERT_TRUE(snapshot->zones()[0]->denial().has_nsec3());
  const std::vector<ProofCase> cases = {
      // RFC 5155 §7.2.2: closest encloser (match), next closer (cover), wildcard (cover).
      {"nx.example.org.",
       "A",
       3,
       {zone.Match("example.org."), zone.Cover("nx.example.org."), zone.Cover("*.example.org.")}},
      {"x.y.b.c.example.org.",
       "A",
       3,
       {zone.Match("b.c.example.org."), zone.Cover("y.b.c.example.org."),
        zone.Cover("*.b.c.example.org.")}},
      // §7.2.3 NODATA, also at an empty non-terminal.
      {"a.example.org.", "MX", 0, {zone.Match("a.example.org.")}},
      {"c.example.org.", "A", 0, {zone.Match("c.example.org.")}},
      // §7.2.6 wildcard answer: the next closer name is covered.
      {"foo.w.example.org.", "TXT", 0, {zone.Cover("foo.w.example.org.")}},
      // §7.2.5 wildcard NODATA: encloser, wildcard, and the next closer cover.
      {"foo.w.example.org.",
       "A",
       0,
       {zone.Match("w.example.org."), zone.Match("*.w.example.org."),
        zone.Cover("foo.w.example.org.")}},
      // §7.2.7 referrals without DS: the delegation's NSEC3, or with opt-out the closest
      // provable encloser and the opt-out span covering the delegation.
      {"host.sub.example.org.", "A", 0, {zone.Match("sub.example.org.")}},
      {"host.opt.example.org.",
       "A",
       0,
       {zone.Match("example.org."), zone.Cover("opt.example.org.")}},
      // §7.2.4 DS NODATA at a delegation.
      {"sub.example.org.", "DS", 0, {zone.Match("sub.example.org.")}},
  };
  for (const ProofCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.name, " ", c.type));
    auto with_do = testing::Ask(snapshot, c.name, c.type, Do());
    ASSERT_TRUE(with_do.ok()) << with_do.status();
    EXPECT_EQ(with_do->rcode, c.rcode);
    EXPECT_EQ(Owners(with_do->authority, "nsec3"), c.proof) << with_do->ToString();
    auto plain = testing::Ask(snapshot, c.name, c.type);
    ASSERT_TRUE(plain.ok());
    EXPECT_TRUE(Owners(plain->authority, "nsec3").empty());
  }
  // NSEC3 owners are not names of the zone (RFC 5155 §7.2.8): NXDOMAIN, and a query of type
  // NSEC3 at a real name is NODATA.
  auto hashed = testing::Ask(snapshot, zone.Match("a.example.org."), "NSEC3");
  ASSERT_TRUE(hashed.ok());
  EXPECT_EQ(hashed->rcode, 3);
  auto nsec3_type = testing::Ask(snapshot, "a.example.org.", "NSEC3");
  ASSERT_TRUE(nsec3_type.ok());
  EXPECT_EQ(nsec3_type->rcode, 0);
  EXPECT_TRUE(nsec3_type->answer.empty());
}

// FindNsec3 (a start where a uniform hash would sit, then a widening bracket) against a
// plain search over the chain: one chain of real hashes (uniform) and one bunched at both ends
// of the hash space (every start far off); each query matched or covered as upper_bound says.
TEST(DenialTest, FindNsec3AgreesWithAPlainSearch) {
  std::vector<std::string> real;
  std::vector<std::string> bunched;
  const char kBase32Hex[] = "0123456789abcdefghijklmnopqrstuv";
  for (int i = 0; i < 300; ++i) {
    real.push_back(LdnsHash(absl::StrCat("n", i, ".example.org."), "", 0));
    std::string hash = i % 2 == 0 ? "0000" : "vvvv";
    for (int j = 4; j < 32; ++j) hash.push_back(kBase32Hex[(i * 7 + j * 13 + i / 32) % 32]);
    bunched.push_back(hash);
  }
  for (std::vector<std::string>* chain : {&real, &bunched}) {
    std::sort(chain->begin(), chain->end());
    chain->erase(std::unique(chain->begin(), chain->end()), chain->end());
    std::string text = "example.org. 300 IN SOA ns.example.net. h.example.org. 1 2 3 4 300\n";
    text += "example.org. 300 IN NS ns.example.net.\n";
    text += "example.org. 300 IN NSEC3PARAM 1 0 0 -\n";
    for (size_t i = 0; i < chain->size(); ++i) {
      text += absl::StrCat((*chain)[i], ".example.org. 300 IN NSEC3 1 1 0 - ",
                           (*chain)[(i + 1) % chain->size()], " A RRSIG\n");
    }
    auto snapshot = Load(text);
    ASSERT_NE(snapshot, nullptr);
    const DenialIndex& denial = snapshot->zones()[0]->denial();
    ASSERT_EQ(denial.nsec3_count(), chain->size());
    for (int i = 0; i < 600; ++i) {  // n0..n299 are the real chain's names
      const std::string name = absl::StrCat("n", i, ".example.org.");
      SCOPED_TRACE(name);
      const std::string hash = LdnsHash(name, "", 0);
      auto it = std::upper_bound(chain->begin(), chain->end(), hash);
      const std::string expected = it == chain->begin() ? chain->back() : *std::prev(it);
      bool exact = false;
      const int32_t index = denial.FindNsec3(WireName(name), exact);
      ASSERT_GE(index, 0);
      EXPECT_EQ(denial.nsec3(index).owner, WireName(expected + ".example.org."));
      EXPECT_EQ(exact, expected == hash);
    }
  }
}

}  // namespace
}  // namespace onepass::dns
