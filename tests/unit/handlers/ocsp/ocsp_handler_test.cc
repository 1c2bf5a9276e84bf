#include "handlers/ocsp/ocsp_handler.h"

#include <openssl/evp.h>

#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "handlers/ocsp/ocsp_counters.h"
#include "handlers/ocsp/ocsp_request_reader.h"
#include "tests/unit/handlers/ocsp/ocsp_test_pki.h"

namespace onepass::ocsp {
namespace {

using testing::CertRef;
using testing::CertStatus;
using testing::TestPki;

const absl::Time kNow = absl::FromUnixSeconds(1800000000);  // Fri, 15 Jan 2027 08:00:00 GMT
const absl::Time kThisUpdate = kNow - absl::Hours(1);
const absl::Time kNextUpdate = kNow + absl::Hours(24 * 7);

std::string Sha1Hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha1(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), size));
}

struct Reply {
  Verdict verdict;
  std::string bytes;
};

class OcspHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = TestPki::Create();
    good_ = pki_->SignResponse({{0x1000}}, kThisUpdate, kNextUpdate);
    revoked_ = pki_->SignResponse({{0x1001, CertStatus::kRevoked}}, kThisUpdate, kNextUpdate);
    short_lived_ = pki_->SignResponse({{0x1002}}, kThisUpdate, kNow + absl::Seconds(90));
    snapshot_ = OcspSnapshot::FromResponses(
        {{"good", good_}, {"revoked", revoked_}, {"short", short_lived_}}, kNow);
    ASSERT_EQ(snapshot_->stats().loaded, 3u);
    Rebuild(OcspHandlerConfig{});
  }

  // A new factory as a reload makes it: the handler counts on into the same block.
  void Rebuild(const OcspHandlerConfig& config) {
    factory_ = std::make_unique<OcspHandlerFactory>(config, snapshot_);
    handler_ = factory_->CreateHandler(counters_);
  }

  uint64_t Counted(OcspCounter counter) const {
    return counters_.Read(static_cast<size_t>(counter));
  }

  Reply Send(absl::string_view input, absl::Time now = kNow, bool peer_closed = false) {
    OutputBuffer out(factory_->OutputBufferBytes());
    RequestContext context;
    context.now = now;
    context.peer_closed = peer_closed;
    Reply reply;
    reply.verdict = handler_->Process(
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(input.data()), input.size()), context,
        out);
    reply.bytes.assign(reinterpret_cast<const char*>(out.data()), out.size());
    return reply;
  }

  static std::string Post(absl::string_view der, absl::string_view path = "/",
                          absl::string_view content_type = "application/ocsp-request") {
    return absl::StrCat("POST ", path,
                        " HTTP/1.1\r\nHost: ocsp.test\r\nContent-Type: ", content_type,
                        "\r\nContent-Length: ", der.size(), "\r\n\r\n", der);
  }
  static std::string Get(absl::string_view target) {
    return absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: ocsp.test\r\n\r\n");
  }

  // The exact response for a pre-signed `der` (thisUpdate/nextUpdate as in SetUp).
  static std::string Presigned(const std::string& der, absl::string_view max_age,
                               absl::string_view date = "Fri, 15 Jan 2027 08:00:00 GMT",
                               absl::string_view expires = "Fri, 22 Jan 2027 08:00:00 GMT") {
    return absl::StrCat(
        "HTTP/1.1 200 OK\r\n"
        "Content-Type: application/ocsp-response\r\n"
        "Content-Length: ",
        der.size(),
        "\r\n"
        "Last-Modified: Fri, 15 Jan 2027 07:00:00 GMT\r\n"
        "Expires: ",
        expires,
        "\r\n"
        "ETag: \"",
        Sha1Hex(der),
        "\"\r\n"
        "Connection: close\r\n"
        "Date: ",
        date,
        "\r\n"
        "Cache-Control: max-age=",
        max_age,
        ", public, no-transform, must-revalidate\r\n"
        "\r\n",
        der);
  }
  static std::string StatusOnly(char status) {
    return absl::StrCat(
        "HTTP/1.1 200 OK\r\n"
        "Content-Type: application/ocsp-response\r\n"
        "Content-Length: 5\r\n"
        "Cache-Control: no-store\r\n"
        "Connection: close\r\n"
        "Date: Fri, 15 Jan 2027 08:00:00 GMT\r\n"
        "\r\n",
        std::string("\x30\x03\x0a\x01", 4), std::string(1, status));
  }
  static std::string HttpError(absl::string_view status_line, absl::string_view body,
                               absl::string_view extra = "") {
    return absl::StrCat(
        "HTTP/1.1 ", status_line, "\r\nContent-Type: text/plain\r\nContent-Length: ", body.size(),
        "\r\nConnection: close\r\n", extra, "Date: Fri, 15 Jan 2027 08:00:00 GMT\r\n\r\n", body);
  }

  void ExpectClose(const Reply& reply, size_t consumed) {
    EXPECT_EQ(reply.verdict.action, Action::kWriteThenClose);
    EXPECT_EQ(reply.verdict.consumed, consumed);
  }

  std::unique_ptr<TestPki> pki_;
  std::string good_, revoked_, short_lived_;
  std::shared_ptr<const OcspSnapshot> snapshot_;
  std::unique_ptr<OcspHandlerFactory> factory_;
  HandlerCounters counters_{std::size(kOcspCounters)};
  std::unique_ptr<Handler> handler_;
};

TEST_F(OcspHandlerTest, PostGoodAndRevokedExactResponses) {
  const std::string request = Post(pki_->MakeRequest({{0x1000}}));
  Reply reply = Send(request);
  ExpectClose(reply, request.size());
  EXPECT_EQ(reply.bytes, Presigned(good_, "604800"));

  reply = Send(Post(pki_->MakeRequest({{0x1001}})), kNow + absl::Seconds(100));
  EXPECT_EQ(reply.bytes, Presigned(revoked_, "604700", "Fri, 15 Jan 2027 08:01:40 GMT"));
  EXPECT_EQ(Counted(OcspCounter::kSuccessful), 2u);
}

TEST_F(OcspHandlerTest, GetInEveryEncoding) {
  const std::string der = pki_->MakeRequest({{0x1000}});
  const std::string base64 = absl::Base64Escape(der);
  const std::string escaped =
      absl::StrReplaceAll(base64, {{"/", "%2F"}, {"+", "%2B"}, {"=", "%3D"}});
  for (const std::string& target :
       {"/" + base64, "/" + escaped, "/" + absl::WebSafeBase64Escape(der),
        "http://ocsp.test/" + base64}) {
    SCOPED_TRACE(target);
    const Reply reply = Send(Get(target));
    EXPECT_EQ(reply.verdict.action, Action::kWriteThenClose);
    EXPECT_EQ(reply.bytes, Presigned(good_, "604800"));
  }
}

TEST_F(OcspHandlerTest, ConfiguredPath) {
  OcspHandlerConfig config;
  config.path = "/ocsp/";
  Rebuild(config);
  const std::string der = pki_->MakeRequest({{0x1000}});
  EXPECT_EQ(Send(Post(der, "/ocsp")).bytes, Presigned(good_, "604800"));
  EXPECT_EQ(Send(Post(der, "/ocsp/")).bytes, Presigned(good_, "604800"));
  EXPECT_EQ(Send(Get("/ocsp/" + absl::Base64Escape(der))).bytes, Presigned(good_, "604800"));
  const std::string not_found = HttpError("404 Not Found", "404 Not Found: no such path\n");
  EXPECT_EQ(Send(Post(der, "/")).bytes, not_found);
  EXPECT_EQ(Send(Post(der, "/ocspx")).bytes, not_found);
  EXPECT_EQ(Send(Post(der, "/ocsp/sub")).bytes, not_found);
  EXPECT_EQ(Send(Get("/" + absl::Base64Escape(der))).bytes, not_found);
  EXPECT_EQ(Send(Get("/ocspx/" + absl::Base64Escape(der))).bytes, not_found);
}

TEST_F(OcspHandlerTest, UnknownMalformedNonceAndSeveralCertIds) {
  EXPECT_EQ(Send(Post(pki_->MakeRequest({{0x9999}}))).bytes, StatusOnly(6));
  std::unique_ptr<TestPki> other = TestPki::Create("another CA");
  EXPECT_EQ(Send(Post(other->MakeRequest({{0x1000}}))).bytes, StatusOnly(6));
  // Same certificate asked with a SHA-256 CertID: no response was signed for that CertID.
  EXPECT_EQ(Send(Post(pki_->MakeRequest({{0x1000, {}, EVP_sha256()}}))).bytes, StatusOnly(6));

  EXPECT_EQ(Send(Post("not DER")).bytes, StatusOnly(1));
  EXPECT_EQ(Send(Post("")).bytes, StatusOnly(1));
  EXPECT_EQ(Send(Get("/")).bytes, StatusOnly(1));
  EXPECT_EQ(Send(Get("/" + absl::Base64Escape("\x30\x00"))).bytes, StatusOnly(1));

  // A nonce cannot be echoed by a pre-signed response; RFC 5019 §2.1.2 lets us ignore it.
  EXPECT_EQ(Send(Post(pki_->MakeRequest({{0x1000}}, /*nonce=*/true))).bytes,
            Presigned(good_, "604800"));
  // Several CertIDs in separate responses: no response may leave one out, so unauthorized.
  EXPECT_EQ(Send(Post(pki_->MakeRequest({{0x9999}, {0x1001}, {0x1000}}))).bytes, StatusOnly(6));
  EXPECT_EQ(Send(Post(pki_->MakeRequest({{0x1001}, {0x1000}}))).bytes, StatusOnly(6));

  EXPECT_EQ(Counted(OcspCounter::kUnauthorized), 5u);
  EXPECT_EQ(Counted(OcspCounter::kCertIdsNotCovered), 2u);
  EXPECT_EQ(Counted(OcspCounter::kMalformedRequest), 4u);
  EXPECT_EQ(Counted(OcspCounter::kSuccessful), 1u);
  EXPECT_EQ(Counted(OcspCounter::kExpired), 0u);
}

// RFC 6960 §4.1.1: a request may list several CertIDs. One pre-signed response holding them
// all (in any order, any subset of it) answers; one that misses any does not.
TEST_F(OcspHandlerTest, SeveralCertIdsServedWhenOneResponseHoldsThemAll) {
  const std::string both = pki_->SignResponse({{0x2000}, {0x2001, CertStatus::kRevoked}, {0x2002}},
                                              kThisUpdate, kNextUpdate);
  snapshot_ = OcspSnapshot::FromResponses({{"good", good_}, {"both", both}}, kNow);
  Rebuild(OcspHandlerConfig{});
  EXPECT_EQ(Send(Post(pki_->MakeRequest({{0x2000}, {0x2001}}))).bytes, Presigned(both, "604800"));
  EXPECT_EQ(Send(Post(pki_->MakeRequest({{0x2002}, {0x2000}}))).bytes, Presigned(both, "604800"));
  EXPECT_EQ(Send(Post(pki_->MakeRequest({{0x2001}}))).bytes, Presigned(both, "604800"));
  EXPECT_EQ(Send(Post(pki_->MakeRequest({{0x2000}, {0x1000}}))).bytes, StatusOnly(6));
  EXPECT_EQ(Send(Post(pki_->MakeRequest({{0x2000}, {0x9999}}))).bytes, StatusOnly(6));
  // More CertIDs than the reader looks at cannot all be checked.
  std::vector<CertRef> many(kMaxCertIdsPerRequest + 1, CertRef{0x2000});
  EXPECT_EQ(Send(Post(pki_->MakeRequest(many))).bytes, StatusOnly(6));
  EXPECT_EQ(Counted(OcspCounter::kSuccessful), 3u);
  EXPECT_EQ(Counted(OcspCounter::kUnauthorized), 3u);
  EXPECT_EQ(Counted(OcspCounter::kCertIdsNotCovered), 3u);
}

// RFC 9110 §9.3.2: HEAD gets GET's head without the content; errors too.
TEST_F(OcspHandlerTest, HeadIsGetWithoutContent) {
  const std::string b64 = absl::Base64Escape(pki_->MakeRequest({{0x1000}}));
  const std::string get = Presigned(good_, "604800");
  const Reply head = Send(absl::StrCat("HEAD /", b64, " HTTP/1.1\r\nHost: ocsp.test\r\n\r\n"));
  ExpectClose(head, absl::StrCat("HEAD /", b64, " HTTP/1.1\r\nHost: ocsp.test\r\n\r\n").size());
  EXPECT_EQ(head.bytes, get.substr(0, get.size() - good_.size()));
  EXPECT_EQ(Send("HEAD / HTTP/1.1\r\nHost: h\r\n\r\n").bytes,
            StatusOnly(1).substr(0, StatusOnly(1).size() - 5));
  const std::string body = "400 Bad Request: request path is not base64\n";
  const std::string error = HttpError("400 Bad Request", body);
  EXPECT_EQ(Send("HEAD /MEIw*QDA HTTP/1.1\r\nHost: h\r\n\r\n").bytes,
            error.substr(0, error.size() - body.size()));
  EXPECT_EQ(Counted(OcspCounter::kSuccessful), 1u);
  EXPECT_EQ(Counted(OcspCounter::kHttp405), 0u);
}

// RFC 9110 §13.1.2 / §13.1.3 with RFC 5019 §6.2: caches revalidate with the ETag or the
// Last-Modified they got, and get a 304 while the response is the same.
TEST_F(OcspHandlerTest, ConditionalGetAndHeadGetNotModified) {
  const std::string target = "/" + absl::Base64Escape(pki_->MakeRequest({{0x1000}}));
  const auto conditional = [&](absl::string_view method, absl::string_view field) {
    return absl::StrCat(method, " ", target, " HTTP/1.1\r\nHost: ocsp.test\r\n", field, "\r\n\r\n");
  };
  const std::string etag = absl::StrCat("\"", Sha1Hex(good_), "\"");
  const std::string not_modified = absl::StrCat(
      "HTTP/1.1 304 Not Modified\r\n"
      "Expires: Fri, 22 Jan 2027 08:00:00 GMT\r\n"
      "ETag: ",
      etag,
      "\r\n"
      "Connection: close\r\n"
      "Date: Fri, 15 Jan 2027 08:00:00 GMT\r\n"
      "Cache-Control: max-age=604800, public, no-transform, must-revalidate\r\n\r\n");
  for (const std::string& field : std::vector<std::string>{
           "If-None-Match: " + etag,
           "If-None-Match: W/" + etag,
           "if-none-match: \"x\", " + etag + " ",
           std::string("If-None-Match: *"),
           std::string("If-Modified-Since: Fri, 15 Jan 2027 07:00:00 GMT"),
           std::string("If-Modified-Since: Sat, 16 Jan 2027 00:00:00 GMT"),
       }) {
    SCOPED_TRACE(field);
    const Reply get = Send(conditional("GET", field));
    ExpectClose(get, conditional("GET", field).size());
    EXPECT_EQ(get.bytes, not_modified);
    EXPECT_EQ(Send(conditional("HEAD", field)).bytes, not_modified);
  }
  for (const std::string& field : std::vector<std::string>{
           "If-None-Match: \"other\"",
           std::string("If-Modified-Since: Fri, 15 Jan 2027 06:59:59 GMT"),
           std::string("If-Modified-Since: yesterday"),
           std::string("If-Modified-Since: Sat, 15 Jan 2027 07:00:00 GMT"),  // wrong weekday
           // If-None-Match decides when present (RFC 9110 §13.2.2).
           "If-None-Match: \"other\"\r\nIf-Modified-Since: Sat, 16 Jan 2027 00:00:00 GMT",
       }) {
    SCOPED_TRACE(field);
    EXPECT_EQ(Send(conditional("GET", field)).bytes, Presigned(good_, "604800"));
  }
  // POST answers are not cached by validators; unknown CertIDs are never 304.
  const std::string der = pki_->MakeRequest({{0x1000}});
  EXPECT_EQ(Send(absl::StrCat("POST / HTTP/1.1\r\nHost: h\r\nIf-None-Match: *\r\n",
                              "Content-Type: application/ocsp-request\r\nContent-Length: ",
                              der.size(), "\r\n\r\n", der))
                .bytes,
            Presigned(good_, "604800"));
  const std::string unknown = "/" + absl::Base64Escape(pki_->MakeRequest({{0x9999}}));
  EXPECT_EQ(
      Send(absl::StrCat("GET ", unknown, " HTTP/1.1\r\nHost: h\r\nIf-None-Match: *\r\n\r\n")).bytes,
      StatusOnly(6));
  EXPECT_EQ(Counted(OcspCounter::kNotModified), 12u);
}

// RFC 9110 §10.1.1: a client that sent Expect: 100-continue may wait for the interim 100.
TEST_F(OcspHandlerTest, ExpectContinueGetsOneInterimResponse) {
  const std::string request =
      absl::StrReplaceAll(Post(pki_->MakeRequest({{0x1000}})),
                          {{"Host: ocsp.test\r\n", "Host: h\r\nExpect: 100-Continue\r\n"}});
  const size_t head = request.find("\r\n\r\n") + 4;
  // The head alone: the 100, nothing consumed (the server waits for more before calling again).
  Reply reply = Send(request.substr(0, head));
  EXPECT_EQ(reply.verdict.action, Action::kWriteThenRead);
  EXPECT_EQ(reply.verdict.consumed, 0u);
  EXPECT_EQ(reply.bytes, "HTTP/1.1 100 Continue\r\n\r\n");
  // Part of the body came: the client did not wait, no 100 again.
  reply = Send(request.substr(0, head + 1));
  EXPECT_EQ(reply.verdict.action, Action::kReadMore);
  EXPECT_TRUE(reply.bytes.empty());
  // All of it at once: the final answer only, in one send.
  reply = Send(request);
  ExpectClose(reply, request.size());
  EXPECT_EQ(reply.bytes, Presigned(good_, "604800"));
  // HTTP/1.0 clients never get a 100 (RFC 9110 §15.2).
  std::string old = request.substr(0, head);
  old.replace(old.find("HTTP/1.1"), 8, "HTTP/1.0");
  EXPECT_EQ(Send(old).verdict.action, Action::kReadMore);
  // Closed after the head: an incomplete request.
  reply = Send(request.substr(0, head), kNow, /*peer_closed=*/true);
  EXPECT_TRUE(absl::StartsWith(reply.bytes, "HTTP/1.1 400 ")) << reply.bytes;
  EXPECT_EQ(Counted(OcspCounter::kContinue), 1u);
}

// Only the bytes parsed are consumed, so that the server knows when the client may still be
// sending (handler.h: consumed < input.size() asks for a lingering close).
TEST_F(OcspHandlerTest, ErrorsConsumeOnlyWhatWasParsed) {
  // 413 is decided at the head's end: the body (here 3 bytes of it) is not consumed.
  const std::string head = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 16385\r\n\r\n";
  Reply reply = Send(head + "abc");
  EXPECT_EQ(reply.verdict.action, Action::kWriteThenClose);
  EXPECT_EQ(reply.verdict.consumed, head.size() - 1);
  // A bad byte: consumed up to it.
  reply = Send("GET / HTTP/1.1\r\nHost: h\rx\r\n\r\n");
  EXPECT_EQ(reply.verdict.consumed, std::string("GET / HTTP/1.1\r\nHost: h").size());
  // 431: decided by the last byte the limit lets the parser see.
  reply = Send("GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(9000, 'a'));
  EXPECT_EQ(reply.verdict.consumed, 8191u);
  // The peer closed: all of it was read.
  reply = Send("POST / HTTP/1.1\r\nHost: h\r\n", kNow, /*peer_closed=*/true);
  EXPECT_EQ(reply.verdict.consumed, std::string("POST / HTTP/1.1\r\nHost: h\r\n").size());
}

TEST_F(OcspHandlerTest, MaxAgeShrinksAndExpiredResponsesAreNotServed) {
  const std::string request = Post(pki_->MakeRequest({{0x1002}}));
  const std::string expires = "Fri, 15 Jan 2027 08:01:30 GMT";
  EXPECT_EQ(Send(request).bytes,
            Presigned(short_lived_, "90", "Fri, 15 Jan 2027 08:00:00 GMT", expires));
  EXPECT_EQ(Send(request, kNow + absl::Milliseconds(89999)).bytes,
            Presigned(short_lived_, "0", "Fri, 15 Jan 2027 08:01:29 GMT", expires));
  // At nextUpdate the response is stale (RFC 6960 §3.2 item 6): unauthorized, counted.
  const Reply reply = Send(request, kNow + absl::Seconds(90));
  EXPECT_TRUE(absl::StartsWith(reply.bytes, "HTTP/1.1 200 OK\r\n")) << reply.bytes;
  EXPECT_TRUE(absl::EndsWith(reply.bytes, std::string("\x30\x03\x0a\x01\x06", 5)));
  EXPECT_EQ(Counted(OcspCounter::kExpired), 1u);
  EXPECT_EQ(Counted(OcspCounter::kUnauthorized), 1u);
  EXPECT_EQ(Counted(OcspCounter::kSuccessful), 2u);
}

TEST_F(OcspHandlerTest, NotOcspRequests) {
  const std::string der = pki_->MakeRequest({{0x1000}});
  EXPECT_EQ(Send("PUT / HTTP/1.1\r\nHost: h\r\n\r\n").bytes,
            HttpError("405 Method Not Allowed", "405 Method Not Allowed: only GET, HEAD and POST\n",
                      "Allow: GET, HEAD, POST\r\n"));
  EXPECT_TRUE(absl::StartsWith(Send("DELETE / HTTP/1.1\r\nHost: h\r\n\r\n").bytes,
                               "HTTP/1.1 405 Method Not Allowed\r\n"));
  EXPECT_EQ(Send(Post(der, "/", "application/octet-stream")).bytes,
            HttpError("415 Unsupported Media Type",
                      "415 Unsupported Media Type: Content-Type must be "
                      "application/ocsp-request\n"));
  EXPECT_EQ(Send("POST / HTTP/1.1\r\nHost: h\r\n\r\n").bytes.substr(0, 30),
            "HTTP/1.1 415 Unsupported Media");
  // Media types are case-insensitive and may carry parameters.
  EXPECT_EQ(Send(Post(der, "/", "Application/OCSP-Request; charset=x")).bytes,
            Presigned(good_, "604800"));
  EXPECT_EQ(
      Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Type: application/ocsp-request\r\n\r\n").bytes,
      HttpError("411 Length Required", "411 Length Required: Content-Length required\n"));
  EXPECT_EQ(Send(Get("/MEIw*QDA")).bytes,
            HttpError("400 Bad Request", "400 Bad Request: request path is not base64\n"));
  EXPECT_EQ(Counted(OcspCounter::kHttp405), 2u);
  EXPECT_EQ(Counted(OcspCounter::kHttp415), 2u);
  EXPECT_EQ(Counted(OcspCounter::kHttp411), 1u);
  EXPECT_EQ(Counted(OcspCounter::kHttp400), 1u);
  EXPECT_EQ(Counted(OcspCounter::kSuccessful), 1u);
}

TEST_F(OcspHandlerTest, HttpErrorsCarryTheirStatus) {
  const struct {
    std::string input;
    std::string status_line;
  } cases[] = {
      {"GET / HTTP/1.1\r\nHost : h\r\n\r\n", "400 Bad Request"},
      {"GET / HTTP/1.1\r\nHost: h\r\n x\r\n\r\n", "400 Bad Request"},
      {"GET / HTTP/1.1\r\nHost: h\rx\r\n\r\n", "400 Bad Request"},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
       "400 Bad Request"},
      {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       "501 Not Implemented"},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 16385\r\n\r\n", "413 Content Too Large"},
      {"GET /" + std::string(9000, 'A') + " HTTP/1.1\r\n", "414 URI Too Long"},
      {"GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(9000, 'a'),
       "431 Request Header Fields Too Large"},
      {"GET / HTTP/2.0\r\n\r\n", "505 HTTP Version Not Supported"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input.substr(0, 60));
    const Reply reply = Send(c.input);
    // Errors consume only up to the byte that decided them: the client may still be sending.
    EXPECT_EQ(reply.verdict.action, Action::kWriteThenClose);
    EXPECT_LT(reply.verdict.consumed, c.input.size());
    EXPECT_TRUE(absl::StartsWith(reply.bytes, "HTTP/1.1 " + c.status_line + "\r\n")) << reply.bytes;
    EXPECT_TRUE(absl::StrContains(reply.bytes, "\r\nConnection: close\r\n"));
  }
  // Each answer counted once, under its status.
  EXPECT_EQ(Counted(OcspCounter::kHttp400), 4u);
  for (OcspCounter counter : {OcspCounter::kHttp501, OcspCounter::kHttp413, OcspCounter::kHttp414,
                              OcspCounter::kHttp431, OcspCounter::kHttp505}) {
    EXPECT_EQ(Counted(counter), 1u) << CounterName(kOcspCounters[static_cast<size_t>(counter)]);
  }
  EXPECT_EQ(Counted(OcspCounter::kHttpOther), 0u);
  EXPECT_EQ(Counted(OcspCounter::kSuccessful), 0u);
}

// The block belongs to the worker: a handler from a reloaded factory counts on where the old
// one stopped; and a response that does not fit is counted as such.
TEST_F(OcspHandlerTest, CountsSurviveANewHandlerAndOutputFullIsCounted) {
  const std::string request = Post(pki_->MakeRequest({{0x1000}}));
  Send(request);
  Rebuild(OcspHandlerConfig{});
  Send(request);
  EXPECT_EQ(Counted(OcspCounter::kSuccessful), 2u);

  OutputBuffer tiny(16);
  RequestContext context;
  context.now = kNow;
  const Verdict verdict = handler_->Process(
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(request.data()), request.size()),
      context, tiny);
  EXPECT_EQ(verdict.action, Action::kClose);
  EXPECT_EQ(Counted(OcspCounter::kOutputFull), 1u);
}

TEST_F(OcspHandlerTest, IncompleteRequestsAndPeerClose) {
  const std::string request = Post(pki_->MakeRequest({{0x1000}}));
  Reply reply = Send(request.substr(0, request.size() - 1));
  EXPECT_EQ(reply.verdict.action, Action::kReadMore);
  EXPECT_EQ(reply.verdict.consumed, 0u);
  EXPECT_TRUE(reply.bytes.empty());
  EXPECT_EQ(Send("").verdict.action, Action::kReadMore);

  reply = Send(request.substr(0, 10), kNow, /*peer_closed=*/true);
  EXPECT_EQ(reply.bytes, HttpError("400 Bad Request", "400 Bad Request: incomplete request\n"));
  ExpectClose(reply, 10);
  reply = Send("", kNow, /*peer_closed=*/true);
  EXPECT_EQ(reply.verdict.action, Action::kClose);
  EXPECT_TRUE(reply.bytes.empty());
  EXPECT_EQ(Counted(OcspCounter::kHttp400), 1u);  // the silent close answers nothing
}

TEST_F(OcspHandlerTest, PipelinedBytesAreIgnored) {
  const std::string request = Post(pki_->MakeRequest({{0x1000}}));
  const std::string input = request + Post(pki_->MakeRequest({{0x1001}})) + "garbage";
  const Reply reply = Send(input);
  // Only the first request is consumed: the rest tells the server the client sent more.
  ExpectClose(reply, request.size());
  EXPECT_EQ(reply.bytes, Presigned(good_, "604800"));
}

TEST_F(OcspHandlerTest, SplitInvariance) {
  const std::string der = pki_->MakeRequest({{0x1000}});
  for (const std::string& input : {Post(der), Get("/" + absl::Base64Escape(der)), Post("junk"),
                                   std::string("GET / HTTP/1.1\r\nHost: h\r\n x\r\n\r\n")}) {
    const Reply whole = Send(input);
    for (size_t k = 0; k < input.size(); ++k) {
      const Reply part = Send(input.substr(0, k));
      if (part.verdict.action == Action::kReadMore) {
        ASSERT_TRUE(part.bytes.empty());
        continue;
      }
      ASSERT_EQ(part.bytes, whole.bytes) << "prefix of " << k << " bytes";
    }
  }
}

TEST_F(OcspHandlerTest, OutputBufferTooSmallClosesWithoutWriting) {
  OutputBuffer out(100);
  RequestContext context;
  context.now = kNow;
  const std::string request = Post(pki_->MakeRequest({{0x1000}}));
  const Verdict verdict = handler_->Process(
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(request.data()), request.size()),
      context, out);
  EXPECT_EQ(verdict.action, Action::kClose);
  EXPECT_TRUE(out.empty());
}

TEST_F(OcspHandlerTest, FactoryContract) {
  EXPECT_EQ(factory_->Name(), "ocsp");
  EXPECT_GE(factory_->OutputBufferBytes(), snapshot_->max_presigned_bytes() + kMaxDynamicHeadBytes);
  EXPECT_GE(factory_->OutputBufferBytes(), OcspHandlerConfig{}.max_response_bytes);
  EXPECT_EQ(factory_->MaxRequestBytes(), 8192u + 16384u);
  EXPECT_NE(factory_->CreateHandler(counters_), nullptr);
  // The counter list: fixed, one per index, each a distinct sample.
  ASSERT_EQ(factory_->Counters().size(), static_cast<size_t>(OcspCounter::kCount));
  std::set<std::string> names;
  for (const CounterSpec& spec : factory_->Counters()) names.insert(CounterName(spec));
  EXPECT_EQ(names.size(), factory_->Counters().size());
  EXPECT_EQ(CounterName(factory_->Counters()[0]), "ocsp_responses{status=\"successful\"}");
}

// The fuzzer's set-up: a response signed for the CertIDs of a request made elsewhere.
TEST_F(OcspHandlerTest, ResponseSignedForAnotherRequestsCertIds) {
  std::unique_ptr<TestPki> elsewhere = TestPki::Create("elsewhere");
  const std::string request = elsewhere->MakeRequest({{77}});
  const std::string response =
      pki_->SignResponseForRequest(request, CertStatus::kGood, kThisUpdate, kNextUpdate);
  ASSERT_FALSE(response.empty());
  snapshot_ = OcspSnapshot::FromResponses({{"r", response}}, kNow);
  Rebuild(OcspHandlerConfig{});
  EXPECT_EQ(Send(Post(request)).bytes, Presigned(response, "604800"));
}

}  // namespace
}  // namespace onepass::ocsp
