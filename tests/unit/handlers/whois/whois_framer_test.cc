// The Whois query-line framer (handlers/whois/whois_framer.h): table-driven, split invariance,
// and the buffering bound.
#include "handlers/whois/whois_framer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

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

}  // namespace
}  // namespace onepass::whois
