#include "loadtest/ocsp_request.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/unit/loadtest/feed.h"

namespace onepass::load {
namespace {

std::string ReadTestdata(const std::string& name) {
  std::ifstream file(std::string(LOADTEST_TESTDATA_DIR) + "/" + name, std::ios::binary);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

std::unique_ptr<OcspClient> MakeClient(bool use_get = false, int expect_status = 0) {
  OcspClientConfig config;
  config.der_request = ReadTestdata("request.der");
  config.use_get = use_get;
  config.host = "127.0.0.1:8080";
  config.expect_status = expect_status;
  auto client = OcspClient::Create(config);
  EXPECT_TRUE(client.ok()) << client.status();
  return std::move(*client);
}

std::string HttpResponse(const std::string& body, const std::string& status = "200 OK",
                         const std::string& type = "application/ocsp-response",
                         bool with_length = true) {
  std::string head = absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", type, "\r\n");
  if (with_length) absl::StrAppend(&head, "Content-Length: ", body.size(), "\r\n");
  return absl::StrCat(head, "Connection: close\r\n\r\n", body);
}

std::string Request(const OcspClient& client) {
  std::string request;
  client.BuildRequest(0, 0, &request);
  return request;
}

TEST(OcspRequestTest, BuildsAPostWithTheDerBody) {
  auto client = MakeClient();
  std::string der = ReadTestdata("request.der");
  ASSERT_FALSE(der.empty()) << "missing testdata";
  EXPECT_EQ(Request(*client),
            absl::StrCat("POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: "
                         "application/ocsp-request\r\nContent-Length: ",
                         der.size(), "\r\nConnection: close\r\n\r\n", der));
}

TEST(OcspRequestTest, BuildsAGetWithTheUrlEncodedBase64Request) {
  EXPECT_EQ(OcspGetPathSegment(std::string("\xfb\xff\xfe", 3)), "%2B%2F%2F%2B");  // "+//+"
  EXPECT_EQ(OcspGetPathSegment("a"), "YQ%3D%3D");
  std::string request = Request(*MakeClient(/*use_get=*/true));
  EXPECT_EQ(request.rfind("GET /", 0), 0u);
  EXPECT_NE(request.find(OcspGetPathSegment(ReadTestdata("request.der"))), std::string::npos);
  EXPECT_EQ(request.find("Content-Length"), std::string::npos);
}

TEST(OcspRequestTest, RejectsARequestThatIsNotDer) {
  OcspClientConfig config;
  config.der_request = "not der";
  EXPECT_FALSE(OcspClient::Create(config).ok());
  config.der_request = ReadTestdata("request.der") + "x";  // trailing garbage
  EXPECT_FALSE(OcspClient::Create(config).ok());
  EXPECT_FALSE(ParseOcspStatus("bogus").ok());
  EXPECT_EQ(*ParseOcspStatus("unauthorized"), 6);
  EXPECT_EQ(*ParseOcspStatus("any"), -1);
}

TEST(OcspRequestTest, AcceptsTheMatchingResponse) {
  auto client = MakeClient();
  std::string request = Request(*client);
  std::string good = HttpResponse(ReadTestdata("response.der"));
  EXPECT_EQ(FeedWhole(*client, request, good, false).verdict, Verdict::kOk);
  EXPECT_EQ(SplitDisagreement(*client, request, good, true), "");
  // Without Content-Length the body ends at the close (RFC 9112 §6.3).
  std::string unframed =
      HttpResponse(ReadTestdata("response.der"), "200 OK", "application/ocsp-response", false);
  EXPECT_EQ(FeedWhole(*client, request, unframed, false).verdict, Verdict::kIncomplete);
  EXPECT_EQ(FeedWhole(*client, request, unframed, true).verdict, Verdict::kOk);
  // Media type parameters and header case do not matter.
  std::string with_params = HttpResponse(ReadTestdata("response.der"), "200 OK",
                                         "Application/OCSP-Response; charset=binary");
  EXPECT_EQ(FeedWhole(*client, request, with_params, true).verdict, Verdict::kOk);
}

struct BadResponse {
  const char* name;
  std::string response;
  Verdict verdict;
  const char* reason;
};

TEST(OcspRequestTest, RejectsEachWrongResponse) {
  auto client = MakeClient();
  std::string request = Request(*client);
  std::string der = ReadTestdata("response.der");
  const std::string unauthorized("\x30\x03\x0a\x01\x06", 5);  // OCSPResponse, status 6
  const BadResponse cases[] = {
      {"HTTP 500", HttpResponse(der, "500 Internal Server Error"), Verdict::kWrong,
       "HTTP status not 200"},
      {"wrong content type", HttpResponse(der, "200 OK", "text/html"), Verdict::kWrong,
       "wrong Content-Type"},
      {"no content type", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", Verdict::kWrong,
       "wrong Content-Type"},
      {"non-DER body", HttpResponse("hello, world"), Verdict::kWrong,
       "body not a DER OCSPResponse"},
      {"DER plus garbage", HttpResponse(der + "x"), Verdict::kWrong, "body not a DER OCSPResponse"},
      {"other certificate", HttpResponse(ReadTestdata("other_response.der")), Verdict::kWrong,
       "requested certificate not in the response"},
      {"unauthorized", HttpResponse(unauthorized), Verdict::kWrong, "unexpected OCSP status"},
      {"truncated body", HttpResponse(der).substr(0, HttpResponse(der).size() - 10),
       Verdict::kShort, "closed inside the body"},
      {"truncated header", "HTTP/1.1 200 OK\r\nContent-Ty", Verdict::kShort,
       "closed inside the HTTP header"},
      {"nothing", "", Verdict::kShort, "closed without a reply"},
      {"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", Verdict::kWrong, "bad HTTP status line"},
      {"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", Verdict::kWrong,
       "unexpected Transfer-Encoding"},
      {"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", Verdict::kWrong,
       "bad Content-Length"},
      {"header line without colon", "HTTP/1.1 200 OK\r\nbogus\r\n\r\n", Verdict::kWrong,
       "bad HTTP header line"},
      {"huge header", "HTTP/1.1 200 OK\r\nX: " + std::string(20000, 'a') + "\r\n\r\n",
       Verdict::kWrong, "HTTP header too long"},
  };
  for (const BadResponse& bad : cases) {
    CheckResult result = FeedWhole(*client, request, bad.response, true);
    EXPECT_EQ(result.verdict, bad.verdict) << bad.name << ": " << result.reason;
    EXPECT_STREQ(result.reason, bad.reason) << bad.name << ": " << result.detail;
    if (bad.response.size() < 4000) {
      EXPECT_EQ(SplitDisagreement(*client, request, bad.response, true), "") << bad.name;
    }
  }
  // The unauthorized answer is fine when any status is accepted.
  EXPECT_EQ(FeedWhole(*MakeClient(false, -1), request, HttpResponse(unauthorized), true).verdict,
            Verdict::kOk);
}

TEST(OcspRequestTest, RepeatedBodiesGetTheSameVerdictPerClient) {
  // The last good body is remembered per thread and per client: a second client with other
  // expectations must still judge the same bytes on its own.
  std::string request = Request(*MakeClient());
  std::string good = HttpResponse(ReadTestdata("response.der"));
  auto successful = MakeClient(false, 0);
  auto unauthorized = MakeClient(false, 6);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(FeedWhole(*successful, request, good, true).verdict, Verdict::kOk);
    EXPECT_STREQ(FeedWhole(*unauthorized, request, good, true).reason, "unexpected OCSP status");
    EXPECT_STREQ(
        FeedWhole(*successful, request, HttpResponse(ReadTestdata("other_response.der")), true)
            .reason,
        "requested certificate not in the response");
  }
}

}  // namespace
}  // namespace onepass::load
