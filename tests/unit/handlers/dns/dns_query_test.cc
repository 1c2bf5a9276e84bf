// Protocol errors decided by the query parser and responder, table-driven over raw messages.
#include "handlers/dns/dns_query.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "handlers/dns/dns_responder.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::MakeQuery;

std::vector<uint8_t> Header(uint16_t flags, uint16_t qd, uint16_t an, uint16_t ns, uint16_t ar) {
  return {0x12,
          0x34,
          static_cast<uint8_t>(flags >> 8),
          static_cast<uint8_t>(flags),
          0,
          static_cast<uint8_t>(qd),
          0,
          static_cast<uint8_t>(an),
          0,
          static_cast<uint8_t>(ns),
          0,
          static_cast<uint8_t>(ar)};
}

std::vector<uint8_t> Cat(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<uint8_t> kQuestion = {3,   'w', 'w', 'w', 7,   'e', 'x', 'a', 'm', 'p', 'l',
                                        'e', 3,   'c', 'o', 'm', 0,   0,   1,   0,   1};
// OPT: root, type 41, class 4096, ttl 0, rdlength 0.
const std::vector<uint8_t> kOpt = {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0};

struct Case {
  std::string name;
  std::vector<uint8_t> message;
  QueryStatus status;
};

TEST(QueryParserTest, Table) {
  const std::vector<Case> cases = {
      {"plain", Cat(Header(0x0100, 1, 0, 0, 0), kQuestion), QueryStatus::kOk},
      {"with opt", Cat(Cat(Header(0, 1, 0, 0, 1), kQuestion), kOpt), QueryStatus::kOk},
      {"trailing garbage ignored", Cat(Cat(Header(0, 1, 0, 0, 0), kQuestion), {1, 2, 3}),
       QueryStatus::kOk},
      {"qr set", Cat(Header(0x8000, 1, 0, 0, 0), kQuestion), QueryStatus::kDrop},
      {"opcode status", Cat(Header(0x1000, 1, 0, 0, 0), kQuestion), QueryStatus::kNotImp},
      {"opcode notify", Cat(Header(0x2000, 1, 0, 0, 0), kQuestion), QueryStatus::kNotImp},
      {"opcode update", Cat(Header(0x2800, 1, 0, 0, 0), kQuestion), QueryStatus::kNotImp},
      {"rcode set", Cat(Header(0x0001, 1, 0, 0, 0), kQuestion), QueryStatus::kFormErr},
      {"qdcount 0", Header(0, 0, 0, 0, 0), QueryStatus::kFormErr},
      {"qdcount 2", Cat(Cat(Header(0, 2, 0, 0, 0), kQuestion), kQuestion), QueryStatus::kFormErr},
      {"truncated question", Cat(Header(0, 1, 0, 0, 0), {3, 'w', 'w'}), QueryStatus::kFormErr},
      {"no qtype", Cat(Header(0, 1, 0, 0, 0), {0, 0, 1}), QueryStatus::kFormErr},
      {"pointer in question", Cat(Header(0, 1, 0, 0, 0), {0xc0, 12, 0, 1, 0, 1}),
       QueryStatus::kFormErr},
      {"label type 0x40", Cat(Header(0, 1, 0, 0, 0), {0x41, 0, 0, 1, 0, 1}), QueryStatus::kFormErr},
      {"ancount", Cat(Header(0, 1, 1, 0, 0), kQuestion), QueryStatus::kFormErr},
      {"nscount", Cat(Header(0, 1, 0, 1, 0), kQuestion), QueryStatus::kFormErr},
      {"two opts", Cat(Cat(Cat(Header(0, 1, 0, 0, 2), kQuestion), kOpt), kOpt),
       QueryStatus::kFormErr},
      {"arcount without record", Cat(Header(0, 1, 0, 0, 1), kQuestion), QueryStatus::kFormErr},
      {"opt rdlength overruns",
       Cat(Cat(Header(0, 1, 0, 0, 1), kQuestion), {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 9, 1}),
       QueryStatus::kFormErr},
      {"opt option overruns",
       Cat(Cat(Header(0, 1, 0, 0, 1), kQuestion),
           {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 4, 0, 11, 0, 9}),
       QueryStatus::kFormErr},
      {"keepalive with timeout in query",
       Cat(Cat(Header(0, 1, 0, 0, 1), kQuestion),
           {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 6, 0, 11, 0, 2, 0, 5}),
       QueryStatus::kFormErr},
      {"non-opt additional",
       Cat(Cat(Header(0, 1, 0, 0, 1), kQuestion), {0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4}),
       QueryStatus::kFormErr},
      {"tsig", Cat(Cat(Header(0, 1, 0, 0, 1), kQuestion), {0, 0, 250, 0, 255, 0, 0, 0, 0, 0, 0}),
       QueryStatus::kNotAuth},
  };
  for (const Case& c : cases) {
    ParsedQuery query;
    ParseQuery(c.message, query);
    EXPECT_EQ(query.status, c.status) << c.name;
  }
}

// RFC 7830 §3: a Padding option of any length and content, anywhere among the options, is
// recorded; one that overruns the OPT is FORMERR like any other option.
TEST(QueryParserTest, PaddingOption) {
  struct PaddingCase {
    std::string name;
    std::vector<uint8_t> options;  // the OPT's RDATA
    QueryStatus status;
    bool padding;
    bool keepalive;
  };
  const std::vector<PaddingCase> cases = {
      {"none", {}, QueryStatus::kOk, false, false},
      {"empty", {0, 12, 0, 0}, QueryStatus::kOk, true, false},
      {"zeros", {0, 12, 0, 3, 0, 0, 0}, QueryStatus::kOk, true, false},
      {"non-zero octets accepted", {0, 12, 0, 2, 0xff, 0x01}, QueryStatus::kOk, true, false},
      {"after keepalive", {0, 11, 0, 0, 0, 12, 0, 1, 0}, QueryStatus::kOk, true, true},
      {"before keepalive", {0, 12, 0, 1, 0, 0, 11, 0, 0}, QueryStatus::kOk, true, true},
      {"other option only", {0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8}, QueryStatus::kOk, false, false},
      {"overruns", {0, 12, 0, 9, 0, 0}, QueryStatus::kFormErr, false, false},
      {"half a header", {0, 12, 0, 0, 0, 12}, QueryStatus::kFormErr, false, false},
  };
  for (const PaddingCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<uint8_t> opt = {0, 0, 41, 0x10, 0, 0, 0, 0, 0};
    opt.push_back(static_cast<uint8_t>(c.options.size() >> 8));
    opt.push_back(static_cast<uint8_t>(c.options.size()));
    opt.insert(opt.end(), c.options.begin(), c.options.end());
    ParsedQuery query;
    ParseQuery(Cat(Cat(Header(0, 1, 0, 0, 1), kQuestion), opt), query);
    EXPECT_EQ(query.status, c.status);
    EXPECT_EQ(query.edns.padding, c.padding);
    EXPECT_EQ(query.edns.keepalive, c.keepalive);
  }
  // The parser's scratch is reset between queries.
  ParsedQuery query;
  ParseQuery(Cat(Cat(Header(0, 1, 0, 0, 1), kQuestion),
                 {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 4, 0, 12, 0, 0}),
             query);
  ASSERT_TRUE(query.edns.padding);
  ParseQuery(Cat(Cat(Header(0, 1, 0, 0, 1), kQuestion), kOpt), query);
  EXPECT_FALSE(query.edns.padding);
}

TEST(QueryParserTest, LongestNameAccepted) {
  // 255 bytes: three 63-byte labels, one 61-byte label, the root.
  std::vector<uint8_t> name;
  for (int len : {63, 63, 63, 61}) {
    name.push_back(static_cast<uint8_t>(len));
    name.insert(name.end(), len, 'a');
  }
  name.push_back(0);
  ASSERT_EQ(name.size(), 255u);
  ParsedQuery query;
  ParseQuery(Cat(Cat(Header(0, 1, 0, 0, 0), name), {0, 1, 0, 1}), query);
  EXPECT_EQ(query.status, QueryStatus::kOk);
  name.insert(name.begin() + 1, 'a');  // 256 bytes
  name[0] = 64;                        // and a label too long
  ParseQuery(Cat(Cat(Header(0, 1, 0, 0, 0), name), {0, 1, 0, 1}), query);
  EXPECT_EQ(query.status, QueryStatus::kFormErr);
}

TEST(ErrorResponseTest, RcodeFlagsAndQuestion) {
  DnsResponder responder(testing::DefaultSnapshot(), ResponderConfig{}, nullptr);
  struct Expect {
    std::vector<uint8_t> message;
    int rcode;
    int opcode;
    size_t questions;
  };
  const std::vector<Expect> cases = {
      {Cat(Header(0x0100, 2, 0, 0, 0), kQuestion), 1, 0, 0},
      {Cat(Header(0x2100, 1, 0, 0, 0), kQuestion), 4, 4, 0},
      {Cat(Cat(Header(0, 1, 0, 0, 1), kQuestion), {0, 0, 250, 0, 255, 0, 0, 0, 0, 0, 0}), 9, 0, 0},
  };
  for (const Expect& c : cases) {
    std::vector<uint8_t> out(512);
    const Response response = responder.Respond(c.message, absl::MakeSpan(out), {});
    ASSERT_EQ(response.kind, Response::Kind::kAnswer);
    auto r = testing::DecodeResponse(out.data(), response.size);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->id, 0x1234);
    EXPECT_EQ(r->rcode, c.rcode);
    EXPECT_EQ(r->opcode, c.opcode);
    EXPECT_EQ(r->question.size(), c.questions);
    EXPECT_TRUE(r->qr);
    EXPECT_FALSE(r->aa);
    EXPECT_EQ(r->rd, (c.message[2] & 1) != 0);
  }
}

}  // namespace
}  // namespace onepass::dns
