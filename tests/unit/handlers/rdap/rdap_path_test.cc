// The RDAP query path parser (rdap_path.h), table-driven: lookups, search patterns and the
// hostile inputs (traversal, overlong labels, invalid IDNA, percent-encoding tricks).
#include "handlers/rdap/rdap_path.h"

#include <string>

#include "gtest/gtest.h"

namespace onepass::rdap {
namespace {

struct Case {
  const char* target = "";
  int status = 0;                             // 0: a query
  RdapQueryKind kind = RdapQueryKind::kHelp;  // when status is 0
  const char* key = "";                       // when status is 0
  bool prefix = false;
};

class RdapPathTest : public ::testing::TestWithParam<Case> {};

TEST_P(RdapPathTest, Parses) {
  const Case& c = GetParam();
  RdapPathConfig config;
  config.base_path = "/rdap";
  RdapScratch scratch;
  const RdapPathResult result = ParseRdapTarget(c.target, config, &scratch);
  EXPECT_EQ(result.status, c.status) << c.target << ": " << result.reason;
  if (c.status != 0) {
    EXPECT_FALSE(result.reason.empty()) << c.target;
    return;
  }
  EXPECT_EQ(result.query.kind, c.kind) << c.target;
  EXPECT_EQ(result.query.key, c.key) << c.target;
  EXPECT_EQ(result.query.prefix, c.prefix) << c.target;
}

using K = RdapQueryKind;
const std::string kLongLabel = "/domain/" + std::string(64, 'a') + ".example";
const std::string kLongName = "/domain/" + std::string(60, 'a') + "." + std::string(60, 'b') + "." +
                              std::string(60, 'c') + "." + std::string(60, 'd') + "." +
                              std::string(60, 'e') + ".example";  // 312 octets
const std::string kHugeQuery = "/domains?name=" + std::string(300, 'a') + "*";

INSTANTIATE_TEST_SUITE_P(
    Table, RdapPathTest,
    ::testing::Values(
        Case{"/domain/example.com", 0, K::kDomain, "EXAMPLE.COM"},
        Case{"/domain/EXAMPLE.com.", 0, K::kDomain, "EXAMPLE.COM"},
        Case{"/rdap/domain/example.com", 0, K::kDomain, "EXAMPLE.COM"},
        Case{"http://rdap.example/domain/example.com", 0, K::kDomain, "EXAMPLE.COM"},
        Case{"/domain/xn--bcher-kva.example", 0, K::kDomain, "XN--BCHER-KVA.EXAMPLE"},
        Case{"/domain/b%C3%BCcher.example", 0, K::kDomain, "XN--BCHER-KVA.EXAMPLE"},
        Case{"/domain/B%C3%BCCHER.example", 0, K::kDomain, "XN--BCHER-KVA.EXAMPLE"},
        Case{"/domain/ex%61mple.com", 0, K::kDomain, "EXAMPLE.COM"},
        Case{"/nameserver/A.iana-servers.net", 0, K::kNameserver, "A.IANA-SERVERS.NET"},
        Case{"/entity/exr-1001", 0, K::kEntity, "EXR-1001"},
        Case{"/entity/376", 0, K::kEntity, "376"}, Case{"/help", 0, K::kHelp, ""},
        Case{"/rdap/help", 0, K::kHelp, ""},
        Case{"/domains?name=exa*", 0, K::kDomainSearch, "EXA", true},
        Case{"/domains?name=example.c*", 0, K::kDomainSearch, "EXAMPLE.C", true},
        Case{"/domains?name=example.com", 0, K::kDomainSearch, "EXAMPLE.COM", false},
        Case{"/domains?name=b%C3%BCcher.example", 0, K::kDomainSearch, "XN--BCHER-KVA.EXAMPLE"},
        // Malformed and hostile: 400.
        Case{"/", 400}, Case{"*", 400}, Case{"domain/example.com", 400}, Case{"/domain/", 400},
        Case{"/domain", 400}, Case{"/domain/example.com/", 400}, Case{"/domain/example.com/x", 400},
        Case{"/domain//example.com", 400}, Case{"/domain/../entity/x", 400},
        Case{"/domain/..", 400}, Case{"/../help", 400},
        Case{"/domain/%2e%2e", 400},  // ".." decoded is no domain name
        Case{"/domain/example.com%2Fentity", 400}, Case{"/domain/example%00.com", 400},
        Case{"/domain/example%0a.com", 400}, Case{"/domain/example%.com", 400},
        Case{"/domain/example%4.com", 400}, Case{"/domain/example%zz.com", 400},
        Case{"/domain/%ff%fe.example", 400},     // not UTF-8
        Case{"/domain/xn--zz-.example", 400},    // label ends with '-'
        Case{"/domain/%E2%80%8B.example", 400},  // U+200B: IDNA refuses
        Case{"/domain/a_b.example", 400}, Case{kLongLabel.c_str(), 400},
        Case{kLongName.c_str(), 400}, Case{"/entity/bad%20handle", 400},
        Case{"/entity/"
             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
             400},
        Case{"/domain/example.com#frag", 400}, Case{"/whatever", 400}, Case{"/help/x", 400},
        Case{"/domains", 400}, Case{"/domains?name=", 400}, Case{"/domains?x=1", 400},
        Case{"/domains?name=ab*&name=cd*", 400}, Case{"/domains?name=a%2Fb*", 400},
        Case{"/domains?name=a_b*", 400}, Case{kHugeQuery.c_str(), 400},
        // Searches this server does not run: 422; query types it does not offer: 501.
        Case{"/domains?name=*", 422}, Case{"/domains?name=e*", 422},
        Case{"/domains?name=*ample.com", 422}, Case{"/domains?name=ex*le*", 422},
        Case{"/domains?name=exa*.com", 422}, Case{"/domains?name=b%C3%BC*", 422},
        Case{"/domains?nsLdhName=ns1.example", 501}, Case{"/nameservers?ip=192.0.2.1", 501},
        Case{"/entities?fn=x*", 501}, Case{"/ip", 501}, Case{"/autnum", 501},
        // Number resources (RFC 9082 §3.1.1, §3.1.2), whatever their arguments: 501, as
        // README says (these used to be 400, a segment count check running first).
        Case{"/ip/192.0.2.0", 501}, Case{"/ip/192.0.2.0/24", 501},
        Case{"/ip/2001%3Adb8%3A%3A/32", 501}, Case{"/rdap/ip/2001:db8::1", 501},
        Case{"http://rdap.example/ip/192.0.2.1", 501}, Case{"/autnum/64496", 501},
        Case{"/autnum/64496/", 501}, Case{"/rdap/autnum/4200000000", 501}));

TEST(RdapPathSearchOff, Is501) {
  RdapPathConfig config;
  config.search_enabled = false;
  RdapScratch scratch;
  EXPECT_EQ(ParseRdapTarget("/domains?name=exa*", config, &scratch).status, 501);
}

TEST(PercentDecode, DecodesOnceOnly) {
  std::string out;
  ASSERT_TRUE(PercentDecode("%2541", &out));
  EXPECT_EQ(out, "%41");  // decoded once: no double decoding
  ASSERT_TRUE(PercentDecode("a+b", &out));
  EXPECT_EQ(out, "a+b");
  EXPECT_FALSE(PercentDecode("%7F", &out));
  EXPECT_FALSE(PercentDecode("%", &out));
  EXPECT_FALSE(PercentDecode("%a", &out));
}

}  // namespace
}  // namespace onepass::rdap
