// The query line framer and parser: table-driven, plus split invariance of the framer.
#include "handlers/whois/whois_query.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "handlers/whois/whois_framer.h"

namespace onepass::whois {
namespace {

using Kind = QueryFrame::Kind;

constexpr size_t kMax = 32;  // a small limit keeps the overlong cases short

struct FrameCase {
  std::string name;
  std::string input;
  bool peer_closed;
  Kind kind;
  std::string line;  // kLine
  size_t consumed;   // kLine
  QueryError error;  // kError
};

std::vector<FrameCase> FrameCases() {
  const std::string at_limit(kMax, 'a');
  const std::string over_limit(kMax + 1, 'a');
  return {
      {"crlf", "example.com\r\n", false, Kind::kLine, "example.com", 13, QueryError::kNone},
      {"bare_lf", "example.com\n", false, Kind::kLine, "example.com", 12, QueryError::kNone},
      {"extra_after_line", "a.com\r\nb.com\r\n", false, Kind::kLine, "a.com", 7, QueryError::kNone},
      {"empty_line", "\r\n", false, Kind::kLine, "", 2, QueryError::kNone},
      {"no_line_end_yet", "example.com", false, Kind::kIncomplete, "", 0, QueryError::kNone},
      {"cr_waiting_for_lf", "example.com\r", false, Kind::kIncomplete, "", 0, QueryError::kNone},
      {"nothing", "", false, Kind::kIncomplete, "", 0, QueryError::kNone},
      {"nothing_then_closed", "", true, Kind::kIncomplete, "", 0, QueryError::kNone},
      {"closed_without_line_end", "example.com", true, Kind::kLine, "example.com", 11,
       QueryError::kNone},
      {"closed_after_cr", "example.com\r", true, Kind::kLine, "example.com", 12, QueryError::kNone},
      {"at_limit", at_limit + "\r\n", false, Kind::kLine, at_limit, kMax + 2, QueryError::kNone},
      {"at_limit_bare_lf", at_limit + "\n", false, Kind::kLine, at_limit, kMax + 1,
       QueryError::kNone},
      {"at_limit_waiting", at_limit + "\r", false, Kind::kIncomplete, "", 0, QueryError::kNone},
      {"over_limit_with_crlf", over_limit + "\r\n", false, Kind::kError, "", 0,
       QueryError::kTooLong},
      {"over_limit_with_lf", over_limit + "\n", false, Kind::kError, "", 0, QueryError::kTooLong},
      {"over_limit_no_line_end", over_limit + "a", false, Kind::kError, "", 0,
       QueryError::kTooLong},
      {"over_limit_closed", over_limit, true, Kind::kError, "", 0, QueryError::kTooLong},
      {"nul", std::string("exa\0mple.com\r\n", 14), false, Kind::kError, "", 0,
       QueryError::kNulByte},
      {"nul_before_line_end_arrives", std::string("exa\0", 4), false, Kind::kError, "", 0,
       QueryError::kNulByte},
      {"bell", "exa\ample.com\r\n", false, Kind::kError, "", 0, QueryError::kControlByte},
      {"escape", "\x1b[31mred\r\n", false, Kind::kError, "", 0, QueryError::kControlByte},
      {"del", "exa\x7fmple.com\r\n", false, Kind::kError, "", 0, QueryError::kControlByte},
      {"lone_cr", "exa\rmple.com\r\n", false, Kind::kError, "", 0, QueryError::kControlByte},
      {"tab_is_allowed", "domain\texample.com\r\n", false, Kind::kLine, "domain\texample.com", 20,
       QueryError::kNone},
      {"utf8_passes_framing",
       "b\xc3\xbc"
       "cher.example\r\n",
       false, Kind::kLine,
       "b\xc3\xbc"
       "cher.example",
       17, QueryError::kNone},
      {"nul_after_line_is_ignored", std::string("a.com\r\n\0", 8), false, Kind::kLine, "a.com", 7,
       QueryError::kNone},
  };
}

void ExpectFrame(const FrameCase& c, const QueryFrame& frame, const std::string& context) {
  ASSERT_EQ(frame.kind, c.kind) << c.name << context;
  if (c.kind == Kind::kLine) {
    EXPECT_EQ(frame.line, c.line) << c.name << context;
    EXPECT_EQ(frame.consumed, c.consumed) << c.name << context;
  }
  if (c.kind == Kind::kError) {
    EXPECT_EQ(frame.error, c.error) << c.name << context;
  }
}

TEST(FrameQueryTest, Table) {
  for (const FrameCase& c : FrameCases()) {
    ExpectFrame(c, FrameQuery(c.input, c.peer_closed, kMax), "");
  }
}

// The server hands the handler every byte received so far. Every prefix must give kIncomplete
// or the final answer, and the final answer must not depend on how the bytes arrived.
TEST(FrameQueryTest, SplitInvariance) {
  for (const FrameCase& c : FrameCases()) {
    const QueryFrame whole = FrameQuery(c.input, c.peer_closed, kMax);
    bool decided = false;
    for (size_t n = 0; n <= c.input.size(); ++n) {
      const bool last = n == c.input.size();
      const QueryFrame prefix =
          FrameQuery(absl::string_view(c.input).substr(0, n), last && c.peer_closed, kMax);
      if (prefix.kind == Kind::kIncomplete) {
        EXPECT_FALSE(decided) << c.name << ": undecided again after " << n << " bytes";
        continue;
      }
      if (!decided) {
        // The first decision (byte by byte) is the whole input's decision.
        ExpectFrame(c, prefix, " (byte by byte, decided at " + std::to_string(n) + ")");
        decided = true;
      }
    }
    if (whole.kind != Kind::kIncomplete) {
      EXPECT_TRUE(decided) << c.name;
    }
    // Every two-way split: the first part's verdict, if any, is the final one.
    for (size_t split = 0; split <= c.input.size(); ++split) {
      const QueryFrame first = FrameQuery(absl::string_view(c.input).substr(0, split),
                                          split == c.input.size() && c.peer_closed, kMax);
      if (first.kind != Kind::kIncomplete) {
        ExpectFrame(c, first, " (first part of split at " + std::to_string(split) + ")");
      } else {
        ExpectFrame(c, FrameQuery(c.input, c.peer_closed, kMax),
                    " (whole after split at " + std::to_string(split) + ")");
      }
    }
  }
}

TEST(FrameQueryTest, NeverAsksForMoreThanMaxBufferedBytes) {
  // The handler answers kReadMore only below MaxBufferedBytes, so the server's buffer limit
  // (MaxRequestBytes) is never what cuts an overlong query: the error reply is.
  std::string input;
  for (size_t n = 0; n < MaxBufferedBytes(kMax) + 4; ++n) {
    const QueryFrame frame = FrameQuery(input, false, kMax);
    if (input.size() >= MaxBufferedBytes(kMax)) {
      EXPECT_EQ(frame.kind, Kind::kError) << n;
      EXPECT_EQ(frame.error, QueryError::kTooLong) << n;
    } else {
      EXPECT_EQ(frame.kind, Kind::kIncomplete) << n;
    }
    input.push_back('x');
  }
}

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
