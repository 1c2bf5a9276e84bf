// The RDAP session through the Handler interface, as the server drives it: HTTP bytes in,
// verdict and response out (RFC 7480 behaviours), and split invariance of the request.
#include "handlers/rdap/rdap_handler.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "handlers/rdap/rdap_counters.h"
#include "handlers/whois/whois_db.h"
#include "handlers/whois/whois_embedded_db.h"

namespace onepass::rdap {
namespace {

class RdapHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override { Make(RdapConfig()); }

  void Make(RdapConfig config) {
    config.base_url = "https://rdap.test/";
    RdapSnapshotBuilder builder(config.base_url);
    ASSERT_TRUE(whois::LoadWhoisRecordsText(whois::EmbeddedWhoisDb(), "db", builder).ok());
    factory_ = std::make_unique<RdapHandlerFactory>(builder.Build(), config);
    counters_ = std::make_unique<HandlerCounters>(factory_->Counters().size());
    handler_ = factory_->CreateHandler(*counters_);
  }

  struct Result {
    Verdict verdict;
    std::string response;
    std::string head;
    std::string body;
    int status = 0;
  };

  Result Run(absl::string_view input, bool peer_closed = false, uint8_t peer_last = 0) {
    OutputBuffer out(factory_->OutputBufferBytes());
    RequestContext context;
    context.peer_closed = peer_closed;
    context.now = absl::FromUnixSeconds(1800000000);
    context.peer[10] = context.peer[11] = 0xff;  // v4-mapped 192.0.2.x, not exempt
    context.peer[12] = 192;
    context.peer[14] = 2;
    context.peer[15] = peer_last;
    Result r;
    r.verdict = handler_->Process(
        absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(input.data()), input.size()),
        context, out);
    r.response.assign(reinterpret_cast<const char*>(out.data()), out.size());
    const size_t end = r.response.find("\r\n\r\n");
    if (end != std::string::npos) {
      r.head = r.response.substr(0, end + 2);
      r.body = r.response.substr(end + 4);
      absl::SimpleAtoi(r.response.substr(9, 3), &r.status);
    }
    return r;
  }

  static std::string Get(absl::string_view target, absl::string_view extra = "",
                         absl::string_view method = "GET") {
    return absl::StrCat(method, " ", target, " HTTP/1.1\r\nHost: rdap.test\r\n", extra, "\r\n");
  }

  static std::string Field(const std::string& head, absl::string_view name) {
    const std::string key = absl::StrCat("\r\n", name, ": ");
    const size_t at = head.find(key);
    if (at == std::string::npos) return "";
    const size_t start = at + key.size();
    return head.substr(start, head.find("\r\n", start) - start);
  }

  uint64_t Counted(RdapCounter c) const { return counters_->Read(static_cast<size_t>(c)); }

  std::unique_ptr<RdapHandlerFactory> factory_;
  std::unique_ptr<HandlerCounters> counters_;
  std::unique_ptr<Handler> handler_;
};

TEST_F(RdapHandlerTest, DomainAnswerHasRdapHeaders) {
  const Result r = Run(Get("/domain/example.com"));
  EXPECT_EQ(r.verdict.action, Action::kWriteThenClose);
  ASSERT_EQ(r.status, 200) << r.response;
  EXPECT_EQ(Field(r.head, "Content-Type"), "application/rdap+json");
  EXPECT_EQ(Field(r.head, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(Field(r.head, "Connection"), "close");
  EXPECT_EQ(Field(r.head, "Cache-Control"), "public, max-age=300");
  EXPECT_EQ(Field(r.head, "Content-Length"), std::to_string(r.body.size()));
  EXPECT_EQ(Field(r.head, "ETag").size(), 18u);
  EXPECT_FALSE(Field(r.head, "Date").empty());
  EXPECT_TRUE(absl::StartsWith(r.body, "{\"rdapConformance\":[\"rdap_level_0\""));
  EXPECT_TRUE(absl::StrContains(r.body, "\"ldhName\":\"example.com\""));
  EXPECT_TRUE(absl::StrContains(r.body, "\"client delete prohibited\""));
  EXPECT_TRUE(absl::StrContains(r.body, "\"keyTag\":370,\"algorithm\":13,\"digestType\":2"));
  EXPECT_TRUE(absl::StrContains(r.body, "\"v6\":[\"2001:500:8f::53\"]"));
  EXPECT_EQ(Counted(RdapCounter::kRequestDomain), 1u);
  EXPECT_EQ(Counted(RdapCounter::kOk), 1u);
}

TEST_F(RdapHandlerTest, ULabelAndALabelGiveTheSameAnswer) {
  const Result a = Run(Get("/domain/xn--bcher-kva.example"));
  const Result u = Run(Get("/domain/B%C3%BCcher.EXAMPLE"));
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.body, u.body);
  EXPECT_TRUE(absl::StrContains(a.body, "\"unicodeName\":\"bücher.example\""));
  EXPECT_TRUE(absl::StrContains(a.body, "\"redacted\":["));
}

TEST_F(RdapHandlerTest, HeadIsGetWithoutBody) {
  const Result get = Run(Get("/domain/example.org"));
  const Result head = Run(Get("/domain/example.org", "", "HEAD"));
  ASSERT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  EXPECT_EQ(Field(head.head, "Content-Length"), std::to_string(get.body.size()));
  EXPECT_EQ(Field(head.head, "ETag"), Field(get.head, "ETag"));
}

TEST_F(RdapHandlerTest, IfNoneMatchGets304) {
  const Result first = Run(Get("/domain/example.com"));
  const std::string etag = Field(first.head, "ETag");
  const Result again =
      Run(Get("/domain/example.com", absl::StrCat("If-None-Match: ", etag, "\r\n")));
  EXPECT_EQ(again.status, 304) << again.response;
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(Field(again.head, "ETag"), etag);
  EXPECT_EQ(Field(again.head, "Cache-Control"), "public, max-age=300");
  const Result weak =
      Run(Get("/domain/example.com", absl::StrCat("If-None-Match: \"x\", W/", etag, "\r\n")));
  EXPECT_EQ(weak.status, 304);
  const Result other =
      Run(Get("/domain/example.net", absl::StrCat("If-None-Match: ", etag, "\r\n")));
  EXPECT_EQ(other.status, 200);
  EXPECT_NE(Field(other.head, "ETag"), etag);
}

TEST_F(RdapHandlerTest, NotFoundHasAnRdapErrorBody) {
  const Result r = Run(Get("/domain/nosuch.example"));
  ASSERT_EQ(r.status, 404);
  EXPECT_EQ(Field(r.head, "Content-Type"), "application/rdap+json");
  EXPECT_TRUE(absl::StrContains(r.body, "\"errorCode\":404,\"title\":\"Not Found\""));
  EXPECT_EQ(Run(Get("/nameserver/ns9.example")).status, 404);
  EXPECT_EQ(Run(Get("/entity/NOSUCH")).status, 404);
}

TEST_F(RdapHandlerTest, OtherLookups) {
  const Result ns = Run(Get("/nameserver/ns1.registrar.example"));
  ASSERT_EQ(ns.status, 200);
  EXPECT_TRUE(absl::StrContains(ns.body, "\"objectClassName\":\"nameserver\""));
  EXPECT_TRUE(absl::StrContains(ns.body, "\"v4\":[\"192.0.2.53\"]"));
  const Result registrar = Run(Get("/entity/9999"));
  ASSERT_EQ(registrar.status, 200);
  EXPECT_TRUE(absl::StrContains(registrar.body, "\"IANA Registrar ID\",\"identifier\":\"9999\""));
  const Result contact = Run(Get("/entity/exr-1001"));
  ASSERT_EQ(contact.status, 200);
  EXPECT_FALSE(absl::StrContains(contact.body, "Jane")) << "registrant name must be redacted";
  EXPECT_FALSE(absl::StrContains(contact.body, "jane@example.org"));
  const Result help = Run(Get("/help"));
  ASSERT_EQ(help.status, 200);
  EXPECT_TRUE(absl::StrContains(help.body, "\"title\":\"Help\""));
}

TEST_F(RdapHandlerTest, SearchIsCappedAndSaysSo) {
  RdapConfig config;
  config.search_max_results = 2;
  Make(config);
  const Result r = Run(Get("/domains?name=example.*"));
  ASSERT_EQ(r.status, 200) << r.response;
  EXPECT_EQ(Field(r.head, "Content-Length"), std::to_string(r.body.size()));
  EXPECT_TRUE(
      absl::StrContains(r.body, "\"domainSearchResults\":[{\"objectClassName\":\"domain\""));
  EXPECT_TRUE(absl::StrContains(r.body, "result set truncated due to excessive load"));
  EXPECT_TRUE(absl::StrContains(r.body, "\"ldhName\":\"example.com\""));
  EXPECT_TRUE(absl::StrContains(r.body, "\"ldhName\":\"example.net\""));
  EXPECT_FALSE(absl::StrContains(r.body, "\"ldhName\":\"example.org\""));
  const Result exact = Run(Get("/domains?name=onepass.test"));
  EXPECT_FALSE(absl::StrContains(exact.body, "truncated"));
  EXPECT_EQ(Run(Get("/domains?name=*")).status, 422);
  EXPECT_EQ(Run(Get("/domains?nsIp=192.0.2.1")).status, 501);
}

TEST_F(RdapHandlerTest, ErrorsAreProtocolCorrect) {
  const Result post =
      Run("POST /domain/example.com HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(Field(post.head, "Allow"), "GET, HEAD, OPTIONS");
  EXPECT_EQ(Run(Get("/ip/192.0.2.1")).status, 501);
  EXPECT_EQ(Run(Get("/autnum/64496")).status, 501);
  EXPECT_EQ(Run(Get("/domain/a..b")).status, 400);
  EXPECT_EQ(Run("GET /domain/example.com HTTP/1.1\r\n\r\n").status, 400);       // no Host
  EXPECT_EQ(Run("GET /domain/example.com HTTP/1.1\nHost: x\n\n").status, 400);  // bare LF
  EXPECT_EQ(Run(absl::StrCat("GET /", std::string(5000, 'a'), " HTTP/1.1\r\n")).status, 414);
  // A client that closes mid-request gets 400; one that sent nothing gets a silent close.
  EXPECT_EQ(Run("GET /help HTTP/1.1\r\nHost: x\r\n", /*peer_closed=*/true).status, 400);
  EXPECT_EQ(Run("", /*peer_closed=*/true).verdict.action, Action::kClose);
  EXPECT_EQ(Run("GET /help HTTP/1.1\r\n").verdict.action, Action::kReadMore);
}

TEST_F(RdapHandlerTest, RateLimitGets429WithRetryAfter) {
  RdapConfig config;
  config.rate_limit.queries_per_second = 0.5;
  config.rate_limit.burst = 2;
  Make(config);
  EXPECT_EQ(Run(Get("/help"), false, 7).status, 200);
  EXPECT_EQ(Run(Get("/help"), false, 7).status, 200);
  const Result limited = Run(Get("/help"), false, 7);
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(Field(limited.head, "Retry-After"), "2");
  EXPECT_TRUE(absl::StrContains(limited.body, "\"errorCode\":429"));
  EXPECT_EQ(Run(Get("/help"), false, 8).status, 200);  // another client is not limited
  EXPECT_EQ(Counted(RdapCounter::kRateLimited), 1u);
}

// A browser's CORS preflight (Fetch standard): OPTIONS with Origin and
// Access-Control-Request-Method gets 204 with the CORS fields and no content, for any path
// (the policy is the server's); a plain OPTIONS the same (RFC 9110 §9.3.7). Counted apart.
TEST_F(RdapHandlerTest, OptionsPreflightGets204WithCorsFields) {
  const std::string preflight =
      "Origin: https://client.example\r\nAccess-Control-Request-Method: GET\r\n"
      "Access-Control-Request-Headers: if-none-match\r\n";
  int asked = 0;
  for (const char* target :
       {"/domain/example.com", "/domain/no-such.example", "/help", "/domains?name=exa*",
        "/entity/376", "/ip/192.0.2.1", "/whatever", "*"}) {
    SCOPED_TRACE(target);
    for (const std::string& fields : {preflight, std::string()}) {
      const Result r = Run(Get(target, fields, "OPTIONS"));
      ++asked;
      EXPECT_EQ(r.verdict.action, Action::kWriteThenClose);
      ASSERT_EQ(r.status, 204) << r.response;
      EXPECT_TRUE(absl::StartsWith(r.response, "HTTP/1.1 204 No Content\r\n"));
      EXPECT_EQ(Field(r.head, "Access-Control-Allow-Origin"), "*");
      EXPECT_EQ(Field(r.head, "Access-Control-Allow-Methods"), "GET, HEAD, OPTIONS");
      EXPECT_EQ(Field(r.head, "Access-Control-Allow-Headers"), "Accept, If-None-Match");
      EXPECT_EQ(Field(r.head, "Access-Control-Max-Age"), "86400");
      EXPECT_EQ(Field(r.head, "Allow"), "GET, HEAD, OPTIONS");
      EXPECT_EQ(Field(r.head, "Connection"), "close");
      EXPECT_FALSE(Field(r.head, "Date").empty());
      EXPECT_EQ(Field(r.head, "Content-Length"), "");  // RFC 9110 §8.6: none on a 204
      EXPECT_TRUE(r.body.empty());
    }
  }
  EXPECT_EQ(Counted(RdapCounter::kRequestOptions), static_cast<uint64_t>(asked));
  EXPECT_EQ(Counted(RdapCounter::kNoContent), static_cast<uint64_t>(asked));
  EXPECT_EQ(Counted(RdapCounter::kRequestInvalid), 0u);
  // Methods are case-sensitive (RFC 9110 §9.1): "options" is no OPTIONS.
  EXPECT_EQ(Run(Get("/help", "", "options")).status, 405);
}

// RFC 9112 framing: the request whole, byte by byte, and split at every point in two gives
// the same response (kReadMore until it is complete).
TEST_F(RdapHandlerTest, SplitInvariance) {
  for (const std::string& request :
       {Get("/domain/b%C3%BCcher.example"), Get("/domains?name=exa*"), Get("/domain/../x"),
        Get("/entity/376", "If-None-Match: *\r\n"),
        Get("/domain/example.com",
            "Origin: https://a.example\r\nAccess-Control-Request-Method: GET\r\n", "OPTIONS")}) {
    const Result whole = Run(request);
    ASSERT_NE(whole.verdict.action, Action::kReadMore) << request;
    for (size_t split = 0; split < request.size(); ++split) {
      const Result prefix = Run(request.substr(0, split));
      if (prefix.verdict.action != Action::kReadMore) {
        // Decided before the end (an error): the same answer as on the whole.
        EXPECT_EQ(prefix.response, whole.response) << split;
        continue;
      }
      EXPECT_TRUE(prefix.response.empty());
      EXPECT_EQ(Run(request).response, whole.response) << split;  // the rest arrives
    }
  }
}

TEST_F(RdapHandlerTest, SummaryReportsProfileGaps) {
  const std::string summary = factory_->Summary();
  EXPECT_TRUE(absl::StrContains(summary, "rdap: 5 domains")) << summary;
  EXPECT_TRUE(absl::StrContains(summary, "1 registrars lack an abuse email or phone")) << summary;
}

}  // namespace
}  // namespace onepass::rdap
