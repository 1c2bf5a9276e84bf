#include "loadtest/rdap_request.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/unit/loadtest/feed.h"

namespace onepass::load {
namespace {

const std::string kOk =
    "HTTP/1.1 200 OK\r\nContent-Type: application/rdap+json\r\nContent-Length: 2\r\n"
    "Connection: close\r\n\r\n{}";

TEST(RdapRequestTest, SendsOneGet) {
  RdapClient client("/domain/example.com", "rdap.test", "");
  std::string request;
  client.BuildRequest(0, 0, &request);
  EXPECT_EQ(request,
            "GET /domain/example.com HTTP/1.1\r\nHost: rdap.test\r\n"
            "Accept: application/rdap+json\r\n\r\n");
}

TEST(RdapRequestTest, AnswerIsJudgedAtTheClose) {
  RdapClient client("/help", "h", "");
  EXPECT_EQ(FeedWhole(client, "", kOk, false).verdict, Verdict::kIncomplete);
  EXPECT_EQ(FeedWhole(client, "", kOk, true).verdict, Verdict::kOk);
  EXPECT_EQ(SplitDisagreement(client, "", kOk, true), "");
}

TEST(RdapRequestTest, WrongAnswers) {
  RdapClient client("/help", "h", "needle");
  EXPECT_EQ(FeedWhole(client, "", "", true).verdict, Verdict::kShort);
  EXPECT_EQ(FeedWhole(client, "", "HTTP/1.1 200 OK\r\n", true).verdict, Verdict::kShort);
  EXPECT_EQ(FeedWhole(client, "", kOk, true).verdict, Verdict::kWrong);  // no needle
  RdapClient plain("/help", "h", "");
  EXPECT_EQ(FeedWhole(plain, "",
                      "HTTP/1.1 404 Not Found\r\nContent-Type: application/rdap+json\r\n"
                      "Content-Length: 2\r\n\r\n{}",
                      true)
                .verdict,
            Verdict::kWrong);
  EXPECT_EQ(
      FeedWhole(plain, "",
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}", true)
          .verdict,
      Verdict::kWrong);
  EXPECT_EQ(FeedWhole(plain, "",
                      "HTTP/1.1 200 OK\r\nContent-Type: application/rdap+json\r\n"
                      "Content-Length: 9\r\n\r\n{}",
                      true)
                .verdict,
            Verdict::kWrong);
}

}  // namespace
}  // namespace onepass::load
