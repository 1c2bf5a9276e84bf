#include "loadtest/whois_request.h"

#include "gtest/gtest.h"
#include "tests/unit/loadtest/feed.h"

namespace onepass::load {
namespace {

TEST(WhoisRequestTest, SendsOneCrlfTerminatedLine) {
  WhoisClient client("example.com\n", "");
  std::string request;
  client.BuildRequest(0, 0, &request);
  EXPECT_EQ(request, "example.com\r\n");  // RFC 3912 §2
}

TEST(WhoisRequestTest, ReplyIsJudgedAtTheClose) {
  WhoisClient client("example.com", "");
  std::string reply = "Domain Name: EXAMPLE.COM\r\nRegistrar: x\r\n";
  EXPECT_EQ(FeedWhole(client, "", reply, false).verdict, Verdict::kIncomplete);
  EXPECT_EQ(FeedWhole(client, "", reply, true).verdict, Verdict::kOk);
  EXPECT_EQ(SplitDisagreement(client, "", reply, true), "");
}

TEST(WhoisRequestTest, EmptyReplyIsShort) {
  WhoisClient client("example.com", "");
  CheckResult result = FeedWhole(client, "", "", true);
  EXPECT_EQ(result.verdict, Verdict::kShort);
  EXPECT_STREQ(result.reason, "closed without a reply");
}

TEST(WhoisRequestTest, ExpectedTextMustAppear) {
  WhoisClient client("example.com", "EXAMPLE.COM");
  EXPECT_EQ(FeedWhole(client, "", "Domain Name: EXAMPLE.COM\r\n", true).verdict, Verdict::kOk);
  CheckResult result = FeedWhole(client, "", "No match for \"x\".\r\n", true);
  EXPECT_EQ(result.verdict, Verdict::kWrong);
  EXPECT_STREQ(result.reason, "reply lacks the expected text");
}

TEST(RawRequestTest, SendsTheBytesAndWantsAnyReply) {
  RawClient client(std::string("\x00\x01\x02", 3), "");
  std::string request;
  client.BuildRequest(7, 9, &request);
  EXPECT_EQ(request, std::string("\x00\x01\x02", 3));
  EXPECT_EQ(FeedWhole(client, request, "x", true).verdict, Verdict::kOk);
  EXPECT_EQ(FeedWhole(client, request, "", true).verdict, Verdict::kShort);
  EXPECT_EQ(FeedWhole(client, request, "x", false).verdict, Verdict::kIncomplete);
}

}  // namespace
}  // namespace onepass::load
