#include "loadtest/dns_request.h"

#include <functional>
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/loadtest/feed.h"

namespace onepass::load {
namespace {

std::unique_ptr<DnsClient> MakeClient(int expect_rcode = 0, bool expect_answers = true) {
  DnsCheckConfig config;
  config.expect_rcode = expect_rcode;
  config.expect_answers = expect_answers;
  auto client = DnsClient::Create({{"www.Example.com.", "A"}, {"example.com", "aaaa"}}, config);
  EXPECT_TRUE(client.ok()) << client.status();
  return std::move(*client);
}

// A correct answer to `request` (with its prefix): the question echoed and one A record.
std::string Answer(const std::string& request, int rcode = 0, int answers = 1) {
  std::string message = request.substr(2);
  message[2] = static_cast<char>(0x84);  // QR, AA
  message[3] = static_cast<char>(rcode);
  message[7] = static_cast<char>(answers);
  for (int i = 0; i < answers; ++i) {
    message += std::string("\xC0\x0C\x00\x01\x00\x01\x00\x00\x0E\x10\x00\x04\xC0\x00\x02\x01", 16);
  }
  std::string framed;
  framed.push_back(static_cast<char>(message.size() >> 8));
  framed.push_back(static_cast<char>(message.size() & 0xFF));
  return framed + message;
}

std::string Request(const DnsClient& client, uint64_t sequence = 0, uint32_t id = 0xBEEF) {
  std::string request;
  client.BuildRequest(sequence, id, &request);
  return request;
}

TEST(DnsRequestTest, BuildsALengthPrefixedQueryWithTheIdAndQuestion) {
  auto client = MakeClient();
  std::string request = Request(*client, 0, 0x1234);
  const std::string expected =
      std::string("\x00\x21\x12\x34\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00", 14) +
      "\x03www\x07"
      "Example\x03"
      "com" +
      std::string("\x00\x00\x01\x00\x01", 5);
  EXPECT_EQ(request, expected);
  // Queries are cycled; the type is parsed case-insensitively.
  std::string second = Request(*client, 1);
  EXPECT_EQ(second.substr(second.size() - 4, 2), std::string("\x00\x1c", 2));  // AAAA
  EXPECT_EQ(Request(*client, 2).substr(4), Request(*client, 0).substr(4));
}

TEST(DnsRequestTest, RejectsBadQueriesAtStartup) {
  EXPECT_FALSE(DnsClient::Create({{"example.com.", "NOSUCHTYPE"}}, {}).ok());
  EXPECT_FALSE(DnsClient::Create({{std::string(64, 'a') + ".com.", "A"}}, {}).ok());
  EXPECT_FALSE(DnsClient::Create({}, {}).ok());
}

TEST(DnsRequestTest, ParsesQueryListsAndRcodes) {
  auto list = ParseDnsQueryList("# comment\nexample.com. A\n\n  www.example.com\tAAAA # x\n");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[1].name, "www.example.com");
  EXPECT_EQ((*list)[1].type, "AAAA");
  EXPECT_FALSE(ParseDnsQueryList("example.com.\n").ok());
  EXPECT_FALSE(ParseDnsQueryList("# nothing\n").ok());
  EXPECT_EQ(*ParseRcode("NXDOMAIN"), 3);
  EXPECT_EQ(*ParseRcode("servfail"), 2);
  EXPECT_EQ(*ParseRcode("any"), -1);
  EXPECT_EQ(*ParseRcode("5"), 5);
  EXPECT_EQ(*ParseRcode("16"), 16);
  EXPECT_FALSE(ParseRcode("4096").ok());
  EXPECT_FALSE(ParseRcode("BOGUS").ok());
  EXPECT_EQ(RcodeName(2), "SERVFAIL");
}

struct BadAnswer {
  const char* name;
  std::function<void(std::string*)> mutate;  // applied to a correct framed answer
  Verdict verdict;
  const char* reason;
};

TEST(DnsRequestTest, AcceptsACorrectAnswerAndRejectsEachWrongOne) {
  auto client = MakeClient();
  std::string request = Request(*client);
  std::string good = Answer(request);
  EXPECT_EQ(FeedWhole(*client, request, good, false).verdict, Verdict::kOk);
  EXPECT_EQ(FeedWhole(*client, request, good, true).verdict, Verdict::kOk);

  const BadAnswer cases[] = {
      {"wrong ID", [](std::string* a) { (*a)[3] ^= 1; }, Verdict::kWrong, "wrong ID"},
      {"QR=0", [](std::string* a) { (*a)[4] &= 0x7F; }, Verdict::kWrong, "QR bit not set"},
      {"opcode", [](std::string* a) { (*a)[4] |= 0x10; }, Verdict::kWrong, "wrong opcode"},
      {"TC", [](std::string* a) { (*a)[4] |= 0x02; }, Verdict::kWrong, "TC set over TCP"},
      {"SERVFAIL", [](std::string* a) { (*a)[5] = 2; }, Verdict::kWrong, "unexpected rcode"},
      {"question case", [](std::string* a) { (*a)[15] = 'W'; }, Verdict::kWrong,
       "question not echoed"},
      {"question type", [](std::string* a) { (*a)[a->size() - 20] = 28; }, Verdict::kWrong,
       "question not echoed"},
      {"QDCOUNT 2", [](std::string* a) { (*a)[7] = 2; }, Verdict::kWrong, "question count not 1"},
      {"no answers", [](std::string* a) { (*a)[9] = 0; }, Verdict::kWrong, "malformed record"},
      {"ANCOUNT too big", [](std::string* a) { (*a)[9] = 2; }, Verdict::kWrong, "malformed record"},
      {"RDLENGTH too big", [](std::string* a) { (*a)[a->size() - 5] = 9; }, Verdict::kWrong,
       "malformed record"},
      {"bad pointer", [](std::string* a) { (*a)[a->size() - 15] = 0x7F; }, Verdict::kWrong,
       "malformed record"},
      {"length below header",
       [](std::string* a) { *a = std::string("\x00\x05\x00\x00\x00\x00\x00", 7); }, Verdict::kWrong,
       "length prefix below header size"},
      {"length prefix too big: closed inside",
       [](std::string* a) { (*a)[1] = static_cast<char>((*a)[1] + 1); }, Verdict::kShort,
       "closed inside the message"},
      {"truncated message", [](std::string* a) { a->resize(a->size() - 3); }, Verdict::kShort,
       "closed inside the message"},
      {"one byte", [](std::string* a) { a->resize(1); }, Verdict::kShort,
       "closed inside the length prefix"},
      {"nothing", [](std::string* a) { a->clear(); }, Verdict::kShort, "closed without a reply"},
  };
  for (const BadAnswer& bad : cases) {
    std::string answer = good;
    bad.mutate(&answer);
    CheckResult result = FeedWhole(*client, request, answer, /*closed=*/true);
    EXPECT_EQ(result.verdict, bad.verdict) << bad.name << ": " << result.reason;
    EXPECT_STREQ(result.reason, bad.reason) << bad.name << ": " << result.detail;
    EXPECT_EQ(SplitDisagreement(*client, request, answer, true), "") << bad.name;
  }
}

TEST(DnsRequestTest, NoAnswerRecordsIsWrongOnlyWhenAnswersAreExpected) {
  std::string request = Request(*MakeClient());
  std::string nodata = Answer(request, 0, 0);
  CheckResult strict = FeedWhole(*MakeClient(), request, nodata, true);
  EXPECT_STREQ(strict.reason, "no answer records");
  EXPECT_EQ(FeedWhole(*MakeClient(0, false), request, nodata, true).verdict, Verdict::kOk);
}

TEST(DnsRequestTest, ExpectedRcodeAndAny) {
  std::string request = Request(*MakeClient());
  std::string nxdomain = Answer(request, 3, 0);
  EXPECT_EQ(FeedWhole(*MakeClient(3), request, nxdomain, true).verdict, Verdict::kOk);
  CheckResult mismatch = FeedWhole(*MakeClient(0), request, nxdomain, true);
  EXPECT_EQ(mismatch.detail, "rcode NXDOMAIN, expected NOERROR");
  EXPECT_EQ(FeedWhole(*MakeClient(-1, false), request, nxdomain, true).verdict, Verdict::kOk);
  // FORMERR may come without the question (RFC 6891 §7).
  std::string formerr = std::string("\x00\x0C", 2) + request.substr(2, 12);
  formerr[4] = static_cast<char>(0x80);
  formerr[5] = 1;
  formerr[7] = 0;
  EXPECT_EQ(FeedWhole(*MakeClient(1), request, formerr, true).verdict, Verdict::kOk);
  EXPECT_STREQ(FeedWhole(*MakeClient(0), request, formerr, true).reason, "unexpected rcode");
}

TEST(DnsRequestTest, WholeAnswerIsJudgedBeforeTheCloseAndEverySplitAgrees) {
  auto client = MakeClient();
  std::string request = Request(*client);
  std::string good = Answer(request, 0, 3);
  EXPECT_EQ(FeedWhole(*client, request, good, false).verdict, Verdict::kOk);
  EXPECT_EQ(SplitDisagreement(*client, request, good, false), "");
  EXPECT_EQ(SplitDisagreement(*client, request, good, true), "");
  // Incomplete without the close.
  EXPECT_EQ(FeedWhole(*client, request, good.substr(0, 20), false).verdict, Verdict::kIncomplete);
  // Bytes after the first message are not judged: the client has closed by then.
  EXPECT_EQ(FeedWhole(*client, request, good + "junk", true).verdict, Verdict::kOk);
}

// The header and question of `request` (without its OPT), one A record, then `opts` OPT
// records whose TTL carries `extended_rcode`.
std::string EdnsAnswer(const std::string& request, int opts, uint8_t extended_rcode = 0) {
  std::string query = request.substr(2);
  size_t question_end = 12;
  while (query[question_end] != 0) question_end += 1 + static_cast<uint8_t>(query[question_end]);
  question_end += 1 + 4;
  std::string message = query.substr(0, question_end);
  message[2] = static_cast<char>(0x84);
  message[7] = 1;
  message[11] = static_cast<char>(opts);
  message += std::string("\xC0\x0C\x00\x01\x00\x01\x00\x00\x0E\x10\x00\x04\xC0\x00\x02\x01", 16);
  for (int i = 0; i < opts; ++i) {
    message += std::string("\x00\x00\x29\x04\xD0", 5);
    message.push_back(static_cast<char>(extended_rcode));
    message += std::string("\x00\x00\x00\x00\x00", 5);
  }
  std::string framed;
  framed.push_back(static_cast<char>(message.size() >> 8));
  framed.push_back(static_cast<char>(message.size() & 0xFF));
  return framed + message;
}

TEST(DnsRequestTest, EdnsQueriesCarryAnOptAndRequireOneBack) {
  DnsCheckConfig config;
  config.edns_udp_size = 1232;
  config.dnssec_ok = true;
  auto client = DnsClient::Create({{"www.example.com.", "A"}}, config);
  ASSERT_TRUE(client.ok()) << client.status();
  std::string request = Request(**client);
  EXPECT_EQ(request[13], 1);  // ARCOUNT
  // Root owner, type 41, class 1232, TTL with DO (RFC 3225), RDLENGTH 0.
  EXPECT_EQ(request.substr(request.size() - 11),
            std::string("\x00\x00\x29\x04\xD0\x00\x00\x80\x00\x00\x00", 11));
  EXPECT_EQ(FeedWhole(**client, request, EdnsAnswer(request, 1), true).verdict, Verdict::kOk);
  EXPECT_STREQ(FeedWhole(**client, request, EdnsAnswer(request, 0), true).reason,
               "no OPT in reply to an EDNS query");
  EXPECT_STREQ(FeedWhole(**client, request, EdnsAnswer(request, 2), true).reason,
               "more than one OPT record");
  // Extended RCODE 1 (upper bits) = 16, BADVERS: not the NOERROR asked for (RFC 6891 §6.1.3).
  CheckResult badvers = FeedWhole(**client, request, EdnsAnswer(request, 1, 1), true);
  EXPECT_STREQ(badvers.reason, "unexpected rcode");
  EXPECT_EQ(SplitDisagreement(**client, request, EdnsAnswer(request, 1), true), "");
}

TEST(DnsRequestTest, OptInReplyToAPlainQueryIsWrong) {
  auto client = MakeClient();
  std::string request = Request(*client);
  EXPECT_STREQ(FeedWhole(*client, request, EdnsAnswer(request, 1), true).reason,
               "OPT in reply to a query without EDNS");
}

}  // namespace
}  // namespace onepass::load
