// The query line parser (handlers/whois/whois_query.h), table-driven; the framer has
// whois_framer_test.
#include "handlers/whois/whois_query.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onepass::whois {
namespace {

struct ParseCase {
  std::string line;
  QueryKind kind;
  std::string key;
  QueryError error;
};

TEST(ParseQueryTest, Table) {
  const std::string long_label(64, 'a');
  const std::string max_label(63, 'a');
  const std::vector<ParseCase> cases = {
      {"example.com", QueryKind::kAny, "EXAMPLE.COM", QueryError::kNone},
      {"EXAMPLE.COM.", QueryKind::kAny, "EXAMPLE.COM", QueryError::kNone},
      {"  example.com \t", QueryKind::kAny, "EXAMPLE.COM", QueryError::kNone},
      {"=example.com", QueryKind::kAny, "EXAMPLE.COM", QueryError::kNone},
      {"xn--bcher-kva.example", QueryKind::kAny, "XN--BCHER-KVA.EXAMPLE", QueryError::kNone},
      {"b\xc3\xbc"
       "cher.example",
       QueryKind::kAny, "XN--BCHER-KVA.EXAMPLE", QueryError::kNone},
      {"B\xc3\x9c"
       "CHER.example",
       QueryKind::kAny, "XN--BCHER-KVA.EXAMPLE", QueryError::kNone},
      // UTS#46 non-transitional: sharp s stays (transitional would give "strasse").
      {"stra\xc3\x9f"
       "e.example",
       QueryKind::kAny, "XN--STRAE-OQA.EXAMPLE", QueryError::kNone},
      {"domain example.com", QueryKind::kDomain, "EXAMPLE.COM", QueryError::kNone},
      {"DOMAIN\tExample.Com", QueryKind::kDomain, "EXAMPLE.COM", QueryError::kNone},
      {"nameserver a.iana-servers.net", QueryKind::kNameserver, "A.IANA-SERVERS.NET",
       QueryError::kNone},
      {"registrar Example  Registrar,\tInc.", QueryKind::kRegistrar, "EXAMPLE REGISTRAR, INC.",
       QueryError::kNone},
      {"registrar 376", QueryKind::kRegistrar, "376", QueryError::kNone},
      {"contact exr-1001", QueryKind::kContact, "EXR-1001", QueryError::kNone},
      {"entity EXR-1001", QueryKind::kContact, "EXR-1001", QueryError::kNone},
      {"EXR_1001", QueryKind::kAny, "EXR_1001", QueryError::kNone},  // a handle, not a name
      {max_label + ".com", QueryKind::kAny, "", QueryError::kNone},
      {"", QueryKind::kAny, "", QueryError::kEmpty},
      {" \t ", QueryKind::kAny, "", QueryError::kEmpty},
      {"domain", QueryKind::kAny, "", QueryError::kNone},  // a bare one-label name
      {"domain  ", QueryKind::kAny, "", QueryError::kNone},
      {"domain x y", QueryKind::kDomain, "", QueryError::kBadDomainName},
      {"whatever example.com", QueryKind::kAny, "", QueryError::kUnknownQueryForm},
      {"registrar ", QueryKind::kAny, "", QueryError::kNone},  // trimmed: a bare name
      {"contact", QueryKind::kAny, "", QueryError::kNone},
      {"contact a b", QueryKind::kContact, "", QueryError::kBadHandle},
      {long_label + ".com", QueryKind::kAny, "", QueryError::kBadDomainName},
      {"-bad.com", QueryKind::kAny, "", QueryError::kBadDomainName},
      {"bad-.com", QueryKind::kAny, "", QueryError::kBadDomainName},
      {"a..com", QueryKind::kAny, "", QueryError::kBadDomainName},
      {".", QueryKind::kAny, "", QueryError::kBadDomainName},
      {"example.com..", QueryKind::kAny, "", QueryError::kBadDomainName},
      {"exa_mple.com", QueryKind::kAny, "", QueryError::kBadDomainName},
      {"\xff\xfe.com", QueryKind::kAny, "", QueryError::kBadUtf8},
      {"\xc3.com", QueryKind::kAny, "", QueryError::kBadUtf8},              // cut sequence
      {"\xc0\xaf.com", QueryKind::kAny, "", QueryError::kBadUtf8},          // overlong '/'
      {"\xed\xa0\x80.com", QueryKind::kAny, "", QueryError::kBadUtf8},      // surrogate
      {"\xf4\x90\x80\x80.com", QueryKind::kAny, "", QueryError::kBadUtf8},  // > U+10FFFF
      {"registrar \xff", QueryKind::kRegistrar, "", QueryError::kBadUtf8},
      {"\xe2\x98\x83\xe2\x80\x8d.example", QueryKind::kAny, "", QueryError::kBadIdn},  // ZWJ
      {"a\xd7\x90"
       ".example",
       QueryKind::kAny, "", QueryError::kBadIdn},  // mixed LTR/RTL
  };
  std::string scratch;
  for (const ParseCase& c : cases) {
    const Query query = ParseQuery(c.line, &scratch);
    EXPECT_EQ(query.error, c.error) << "'" << c.line << "': " << QueryErrorMessage(query.error);
    if (c.error != QueryError::kNone) {
      EXPECT_FALSE(QueryErrorMessage(query.error).empty());
      continue;
    }
    if (c.key.empty()) continue;  // only that it parses
    EXPECT_EQ(query.kind, c.kind) << c.line;
    EXPECT_EQ(query.key, c.key) << c.line;
  }
}

TEST(ParseQueryTest, BadIdnCarriesLibidn2Reason) {
  std::string scratch;
  const Query query = ParseQuery("\xe2\x98\x83\xe2\x80\x8d.example", &scratch);
  ASSERT_EQ(query.error, QueryError::kBadIdn);
  EXPECT_FALSE(query.error_detail.empty());
}

TEST(ParseQueryTest, BareNameIsFlaggedAsDomainName) {
  std::string scratch;
  EXPECT_TRUE(ParseQuery("example.com", &scratch).key_is_domain_name);
  EXPECT_FALSE(ParseQuery("EXR_1001", &scratch).key_is_domain_name);
}

TEST(IsValidDomainNameTest, Lengths) {
  const std::string label63(63, 'a');
  const std::string name253 = label63 + "." + label63 + "." + label63 + "." + std::string(61, 'b');
  ASSERT_EQ(name253.size(), 253u);
  EXPECT_TRUE(IsValidDomainName(name253));
  EXPECT_FALSE(IsValidDomainName(name253 + "b"));
  EXPECT_FALSE(IsValidDomainName(""));
  EXPECT_TRUE(IsValidDomainName("com"));
  EXPECT_TRUE(IsValidDomainName("1-2.example"));
}

TEST(IsValidUtf8Test, Boundaries) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("\xc2\x80"));           // U+0080
  EXPECT_TRUE(IsValidUtf8("\xef\xbf\xbf"));       // U+FFFF
  EXPECT_TRUE(IsValidUtf8("\xf4\x8f\xbf\xbf"));   // U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xc1\xbf"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xe0\x9f\xbf"));      // overlong 3-byte
  EXPECT_FALSE(IsValidUtf8("\xf0\x8f\xbf\xbf"));  // overlong 4-byte
  EXPECT_FALSE(IsValidUtf8("\x80"));              // continuation first
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // cut at the end
}

}  // namespace
}  // namespace onepass::whois
