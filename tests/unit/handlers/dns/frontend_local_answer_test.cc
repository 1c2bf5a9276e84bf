// The frontend's own answers on the byte level: header, question, and the OPT with an EDE
// (RFC 8914) only for a query that carried EDNS.
#include "handlers/dns/frontend_local_answer.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "handlers/dns/dns_wire.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::MakeQuery;

std::vector<uint8_t> Contents(const OutputBuffer& out) {
  return std::vector<uint8_t>(out.data(), out.data() + out.size());
}

// The question section of `query` (one question, uncompressed).
absl::Span<const uint8_t> QuestionOf(const std::vector<uint8_t>& query) {
  size_t at = kHeaderBytes;
  while (query[at] != 0) at += 1 + query[at];
  return absl::MakeConstSpan(query).subspan(kHeaderBytes, at + 1 + 4 - kHeaderBytes);
}

TEST(FrontendLocalAnswer, EdnsQueryGetsOptWithEdeAndItsDoBitByteForByte) {
  const std::vector<uint8_t> query = MakeQuery(
      "a.example", "AAAA", {.id = 0xabcd, .rd = true, .cd = true, .edns = true, .do_bit = true});
  OutputBuffer out(1024);
  ASSERT_TRUE(AppendLocalAnswer({.id = 0xabcd,
                                 .query_flags = ReadU16(query.data() + 2),
                                 .question = QuestionOf(query),
                                 .rcode = kRcodeServFail,
                                 .ede = kEdeNoReachableAuthority,
                                 .query = query},
                                out));
  std::vector<uint8_t> expected = {0, 0, 0xab, 0xcd, 0x81, 0x12, 0, 1, 0, 0, 0, 0, 0, 1};
  const absl::Span<const uint8_t> question = QuestionOf(query);
  expected.insert(expected.end(), question.begin(), question.end());
  const std::vector<uint8_t> opt = {0, 0,  41, 0x04, 0xd0, 0, 0, 0x80, 0,  // root OPT 1232, DO
                                    0, 6,                                  // RDLENGTH
                                    0, 15, 0,  2,                          // EDE, 2 bytes
                                    0, 22};                                // INFO-CODE 22
  expected.insert(expected.end(), opt.begin(), opt.end());
  WriteU16(expected.data(), static_cast<uint16_t>(expected.size() - 2));
  EXPECT_EQ(Contents(out), expected);
}

TEST(FrontendLocalAnswer, NoEdnsOrNoEdeNoOpt) {
  const std::vector<uint8_t> plain = MakeQuery("a.example", "A", {.id = 7});
  const std::vector<uint8_t> edns = MakeQuery("a.example", "A", {.id = 7, .edns = true});
  const size_t bare = 2 + kHeaderBytes + QuestionOf(plain).size();
  OutputBuffer out(1024);
  ASSERT_TRUE(AppendLocalAnswer({.id = 7,
                                 .question = QuestionOf(plain),
                                 .rcode = kRcodeServFail,
                                 .ede = kEdeNoReachableAuthority,
                                 .query = plain},
                                out));
  EXPECT_EQ(out.size(), bare) << "the query had no OPT: the answer has none";
  EXPECT_EQ(ReadU16(out.data() + 2 + 10), 0) << "ARCOUNT";
  out.Clear();
  ASSERT_TRUE(AppendLocalAnswer({.id = 7,
                                 .question = QuestionOf(edns),
                                 .rcode = kRcodeRefused,
                                 .ede = std::nullopt,
                                 .query = edns},
                                out));
  EXPECT_EQ(out.size(), bare) << "no EDE asked for: no OPT";
  auto decoded = testing::DecodeResponse(out.data() + 2, out.size() - 2);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->rcode, kRcodeRefused);
  EXPECT_EQ(decoded->id, 7);
}

// RFC 8467 §4.1 as the zone mode does it: over an encrypted connection, a query with a Padding
// option gets our OPT padded with zeros to a multiple of 468 bytes, or to the room there is;
// over plain TCP, or without the option, or without an OPT, nothing is padded.
TEST(FrontendLocalAnswer, PaddedOverTlsWhenTheQueryIsPadded) {
  const std::vector<uint8_t> padded =
      MakeQuery("a.example", "A", {.id = 7, .edns = true, .padding = 40});
  const std::vector<uint8_t> unpadded_query = MakeQuery("a.example", "A", {.id = 7, .edns = true});
  const size_t unpadded = kHeaderBytes + QuestionOf(padded).size() + 11 + 6;
  struct Case {
    std::string name;
    const std::vector<uint8_t>* query;
    bool encrypted;
    std::optional<uint16_t> ede;
    size_t buffer;
    size_t size;  // the message, without its length prefix
  };
  const std::vector<Case> cases = {
      {"padded", &padded, true, kEdeNoReachableAuthority, 1024, 468},
      {"plain TCP", &padded, false, kEdeNoReachableAuthority, 1024, unpadded},
      {"no padding asked", &unpadded_query, true, kEdeNoReachableAuthority, 1024, unpadded},
      {"no OPT (no EDE)", &padded, true, std::nullopt, 1024,
       kHeaderBytes + QuestionOf(padded).size()},
      {"to the room there is", &padded, true, kEdeNoReachableAuthority, 2 + 300, 300},
      {"no room for the option", &padded, true, kEdeNoReachableAuthority, 2 + unpadded + 3,
       unpadded},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    OutputBuffer out(c.buffer);
    ASSERT_TRUE(AppendLocalAnswer({.id = 7,
                                   .question = QuestionOf(*c.query),
                                   .rcode = kRcodeServFail,
                                   .ede = c.ede,
                                   .query = *c.query,
                                   .encrypted = c.encrypted},
                                  out));
    ASSERT_EQ(out.size(), 2 + c.size);
    EXPECT_EQ(ReadU16(out.data()), c.size);
    auto decoded = testing::DecodeResponse(out.data() + 2, out.size() - 2);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->rcode, kRcodeServFail);
    if (c.size > unpadded) {
      EXPECT_EQ(decoded->opt_options,
                (std::vector<std::string>{"15:0016",
                                          "12:" + std::string(2 * (c.size - unpadded - 4), '0')}));
    } else if (c.ede.has_value()) {
      EXPECT_EQ(decoded->opt_options, std::vector<std::string>{"15:0016"});
    }
  }
}

TEST(FrontendLocalAnswer, WithoutRoomNothingIsWritten) {
  const std::vector<uint8_t> query = MakeQuery("a.example", "A", {.edns = true});
  OutputBuffer out(2 + kHeaderBytes + QuestionOf(query).size() + 16);  // one byte short
  EXPECT_FALSE(AppendLocalAnswer({.question = QuestionOf(query),
                                  .rcode = kRcodeServFail,
                                  .ede = kEdeNoReachableAuthority,
                                  .query = query},
                                 out));
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace onepass::dns
