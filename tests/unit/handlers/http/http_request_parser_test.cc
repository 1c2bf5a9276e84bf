#include "handlers/http/http_request_parser.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace onepass::http {
namespace {

constexpr absl::string_view kPost =
    "POST / HTTP/1.1\r\n"
    "Host: 127.0.0.1:8080\r\n"
    "Content-Type: application/ocsp-request\r\n"
    "Content-Length: 5\r\n"
    "\r\n"
    "\x30\x03\x02\x01\x01";

struct Case {
  std::string name;
  std::string input;
  HttpParseStatus status;
  HttpError error = HttpError::kNone;
  size_t consumed = 0;  // for kComplete; 0 = the whole input
};

std::string Head(absl::string_view fields) {
  return absl::StrCat("GET / HTTP/1.1\r\nHost: h\r\n", fields, "\r\n");
}

std::vector<Case> Cases() {
  const std::string pipelined = absl::StrCat(kPost, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string long_target = absl::StrCat("GET /", std::string(9000, 'a'), " HTTP/1.1\r\n");
  const std::string long_field =
      absl::StrCat("GET / HTTP/1.1\r\nHost: h\r\nX: ", std::string(9000, 'a'), "\r\n\r\n");
  using S = HttpParseStatus;
  using E = HttpError;
  return {
      {"post", std::string(kPost), S::kComplete},
      {"get_http10_no_host", "GET /abc HTTP/1.0\r\n\r\n", S::kComplete},
      {"host_any_case", "GET / HTTP/1.1\r\nhOsT: x\r\n\r\n", S::kComplete},
      {"http_1_9_is_1x", "GET / HTTP/1.9\r\nHost: x\r\n\r\n", S::kComplete},
      {"ows_and_empty_value", Head("X-Empty:\r\nX-Ows: \t v \t\r\n"), S::kComplete},
      {"obs_text_in_value", Head("X: caf\xc3\xa9\r\n"), S::kComplete},
      {"lowercase_content_length", "POST / HTTP/1.1\r\nHost: h\r\ncontent-length: 2\r\n\r\nab",
       S::kComplete},
      {"leading_zeros_content_length",
       "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 002\r\n\r\nab", S::kComplete},
      {"pipelined_request_left", pipelined, S::kComplete, E::kNone, kPost.size()},
      {"absolute_form", "GET http://h/x HTTP/1.1\r\nHost: h\r\n\r\n", S::kComplete},

      {"empty", "", S::kIncomplete},
      {"partial_method", "POS", S::kIncomplete},
      {"partial_version", "GET / HTTP/1.", S::kIncomplete},
      {"cr_at_end", "GET / HTTP/1.1\r", S::kIncomplete},
      {"partial_head", "GET / HTTP/1.1\r\nHost: h\r\n", S::kIncomplete},
      {"partial_body", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nab", S::kIncomplete},

      {"leading_space", " GET / HTTP/1.1\r\n\r\n", S::kError, E::kMalformedRequestLine},
      {"leading_empty_line", "\r\nGET / HTTP/1.1\r\n\r\n", S::kError, E::kMalformedRequestLine},
      {"two_spaces", "GET  / HTTP/1.1\r\n\r\n", S::kError, E::kMalformedRequestLine},
      {"space_after_version", "GET / HTTP/1.1 \r\n\r\n", S::kError, E::kMalformedRequestLine},
      {"lowercase_version", "GET / http/1.1\r\n\r\n", S::kError, E::kMalformedRequestLine},
      {"version_11", "GET / HTTP/11\r\n\r\n", S::kError, E::kMalformedRequestLine},
      {"version_1_10", "GET / HTTP/1.10\r\n\r\n", S::kError, E::kMalformedRequestLine},
      {"ctl_in_method", std::string("G\x01T / HTTP/1.1\r\n\r\n"), S::kError,
       E::kMalformedRequestLine},
      {"del_in_target", "GET /\x7f HTTP/1.1\r\n\r\n", S::kError, E::kMalformedRequestLine},
      {"no_target", "GET\r\n\r\n", S::kError, E::kMalformedRequestLine},
      {"tls_client_hello", std::string("\x16\x03\x01\x02\x00\x01\x00\x01", 8), S::kError,
       E::kMalformedRequestLine},
      {"http2_preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", S::kError, E::kUnsupportedVersion},
      {"http_0_9_style", "GET /\r\n", S::kError, E::kMalformedRequestLine},

      {"bare_cr_request_line", "GET / HTTP/1.1\rX\n\r\n", S::kError, E::kBareCr},
      {"bare_cr_in_value", Head("X: a\rb\r\n"), S::kError, E::kBareCr},
      {"bare_cr_end_of_head", "GET / HTTP/1.1\r\nHost: h\r\n\rX", S::kError, E::kBareCr},
      {"bare_lf_request_line", "GET / HTTP/1.1\nHost: h\n\n", S::kError, E::kBareLf},
      {"bare_lf_field", "GET / HTTP/1.1\r\nHost: h\n\r\n", S::kError, E::kBareLf},
      {"bare_lf_end_of_head", "GET / HTTP/1.1\r\nHost: h\r\n\n", S::kError, E::kBareLf},
      {"obs_fold_space", Head("X: a\r\n b\r\n"), S::kError, E::kObsFold},
      {"obs_fold_tab", Head("X: a\r\n\tb\r\n"), S::kError, E::kObsFold},
      {"space_before_first_field", "GET / HTTP/1.1\r\n Host: h\r\n\r\n", S::kError, E::kObsFold},
      {"space_before_colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n", S::kError,
       E::kWhitespaceBeforeColon},
      {"tab_before_colon", Head("Content-Length\t: 0\r\n"), S::kError, E::kWhitespaceBeforeColon},
      {"empty_field_name", Head(": a\r\n"), S::kError, E::kMalformedHeaderField},
      {"non_token_field_name", Head("X@Y: a\r\n"), S::kError, E::kMalformedHeaderField},
      {"no_colon", Head("Xyz\r\n"), S::kError, E::kMalformedHeaderField},
      {"ctl_in_value", Head(std::string("X: a\x01z\r\n", 8)), S::kError, E::kMalformedHeaderField},
      {"nul_in_value", Head(std::string("X: a\0z\r\n", 8)), S::kError, E::kMalformedHeaderField},
      {"del_in_value", Head("X: a\x7fz\r\n"), S::kError, E::kMalformedHeaderField},

      {"negative_length", Head("Content-Length: -1\r\n"), S::kError, E::kInvalidContentLength},
      {"plus_length", Head("Content-Length: +1\r\n"), S::kError, E::kInvalidContentLength},
      {"list_length", Head("Content-Length: 1,1\r\n"), S::kError, E::kInvalidContentLength},
      {"list_length_spaced", Head("Content-Length: 1, 1\r\n"), S::kError, E::kInvalidContentLength},
      {"empty_length", Head("Content-Length:\r\n"), S::kError, E::kInvalidContentLength},
      {"hex_length", Head("Content-Length: 0x10\r\n"), S::kError, E::kInvalidContentLength},
      {"repeated_length", Head("Content-Length: 0\r\nContent-Length: 0\r\n"), S::kError,
       E::kRepeatedContentLength},
      {"repeated_length_any_case", Head("Content-Length: 0\r\ncontent-LENGTH: 5\r\n"), S::kError,
       E::kRepeatedContentLength},
      {"transfer_encoding", Head("Transfer-Encoding: chunked\r\n"), S::kError,
       E::kTransferEncoding},
      {"transfer_encoding_with_length", Head("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n"),
       S::kError, E::kTransferEncodingWithLength},
      {"missing_host", "GET / HTTP/1.1\r\n\r\n", S::kError, E::kMissingHost},
      {"repeated_host", Head("Host: other\r\n"), S::kError, E::kRepeatedHost},
      {"repeated_content_type", Head("Content-Type: a/b\r\nContent-Type: a/b\r\n"), S::kError,
       E::kRepeatedContentType},
      {"body_too_large", Head("Content-Length: 16385\r\n"), S::kError, E::kBodyTooLarge},
      {"huge_length", Head("Content-Length: 99999999999999999999999999\r\n"), S::kError,
       E::kBodyTooLarge},
      {"request_line_too_long", long_target, S::kError, E::kRequestLineTooLong},
      {"header_too_large", long_field, S::kError, E::kHeaderTooLarge},
  };
}

HttpParseResult Parse(absl::string_view input, HttpRequest& request) {
  return ParseHttpRequest(input, HttpLimits{}, request);
}

TEST(HttpRequestParserTest, Table) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    HttpRequest request;
    const HttpParseResult result = Parse(c.input, request);
    EXPECT_EQ(result.status, c.status);
    EXPECT_EQ(result.error, c.error) << HttpErrorText(result.error);
    if (c.status == HttpParseStatus::kComplete) {
      EXPECT_EQ(result.consumed, c.consumed == 0 ? c.input.size() : c.consumed);
    } else if (c.status == HttpParseStatus::kError) {
      // The deciding byte's offset: never the whole input.
      EXPECT_LT(result.consumed, c.input.size());
    } else {
      EXPECT_EQ(result.consumed, 0u);
    }
  }
}

TEST(HttpRequestParserTest, ErrorsMapToStatusCodes) {
  EXPECT_EQ(HttpErrorStatus(HttpError::kBareCr), 400);
  EXPECT_EQ(HttpErrorStatus(HttpError::kObsFold), 400);
  EXPECT_EQ(HttpErrorStatus(HttpError::kRepeatedContentLength), 400);
  EXPECT_EQ(HttpErrorStatus(HttpError::kTransferEncodingWithLength), 400);
  EXPECT_EQ(HttpErrorStatus(HttpError::kTransferEncoding), 501);
  EXPECT_EQ(HttpErrorStatus(HttpError::kBodyTooLarge), 413);
  EXPECT_EQ(HttpErrorStatus(HttpError::kRequestLineTooLong), 414);
  EXPECT_EQ(HttpErrorStatus(HttpError::kHeaderTooLarge), 431);
  EXPECT_EQ(HttpErrorStatus(HttpError::kUnsupportedVersion), 505);
  EXPECT_EQ(HttpErrorText(HttpError::kObsFold), "obs-fold in header field");
}

TEST(HttpRequestParserTest, Fields) {
  HttpRequest request;
  const std::string input =
      "POST /ocsp HTTP/1.0\r\nContent-Type:  application/ocsp-request ; x=y \t\r\n"
      "Content-Length: 3\r\n\r\nabcdef";
  const HttpParseResult result = Parse(input, request);
  ASSERT_EQ(result.status, HttpParseStatus::kComplete);
  EXPECT_EQ(result.consumed, input.size() - 3);
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.target, "/ocsp");
  EXPECT_EQ(request.minor_version, 0);
  EXPECT_TRUE(request.has_content_type);
  EXPECT_EQ(request.content_type, "application/ocsp-request ; x=y");
  EXPECT_TRUE(request.has_content_length);
  EXPECT_EQ(request.body, "abc");

  ASSERT_EQ(Parse("GET /a%2Fb+c= HTTP/1.1\r\nHost: h\r\n\r\n", request).status,
            HttpParseStatus::kComplete);
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.target, "/a%2Fb+c=");
  EXPECT_EQ(request.minor_version, 1);
  EXPECT_FALSE(request.has_content_type);
  EXPECT_FALSE(request.has_content_length);
  EXPECT_TRUE(request.body.empty());
}

TEST(HttpRequestParserTest, ConditionalAndExpectFields) {
  HttpRequest request;
  ASSERT_EQ(Parse("GET /x HTTP/1.1\r\nHost: h\r\nIf-None-Match:  \"a\", W/\"b\" \r\n"
                  "if-modified-since: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
                  "EXPECT: 100-Continue\r\n\r\n",
                  request)
                .status,
            HttpParseStatus::kComplete);
  EXPECT_TRUE(request.has_if_none_match);
  EXPECT_EQ(request.if_none_match, "\"a\", W/\"b\"");
  EXPECT_TRUE(request.has_if_modified_since);
  EXPECT_EQ(request.if_modified_since, "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_TRUE(request.expect_continue);
  ASSERT_EQ(Parse("GET / HTTP/1.1\r\nHost: h\r\nExpect: something-else\r\n\r\n", request).status,
            HttpParseStatus::kComplete);
  EXPECT_FALSE(request.expect_continue);
  EXPECT_FALSE(request.has_if_none_match);
  EXPECT_FALSE(request.has_if_modified_since);
}

// Field names match in any case (RFC 9110 §5.1), and only letter for letter: '_', the one
// token character that a case fold could bring near '-', makes another field.
TEST(HttpRequestParserTest, FieldNamesMatchInAnyCaseAndNothingElse) {
  HttpRequest request;
  ASSERT_EQ(Parse("GET / HTTP/1.1\r\nHOST: h\r\nIF-NONE-MATCH: \"a\"\r\nrAnGe: bytes=0-1\r\n"
                  "If-RANGE: \"a\"\r\nCONTENT-TYPE: t\r\n\r\n",
                  request)
                .status,
            HttpParseStatus::kComplete);
  EXPECT_TRUE(request.has_if_none_match);
  EXPECT_TRUE(request.has_range);
  EXPECT_TRUE(request.has_if_range);
  EXPECT_EQ(request.content_type, "t");
  const std::string near_misses =
      "POST / HTTP/1.1\r\nHost: h\r\nContent_Length: 2\r\nIf_None_Match: x\r\n\r\nab";
  const HttpParseResult parsed = Parse(near_misses, request);
  ASSERT_EQ(parsed.status, HttpParseStatus::kComplete);
  EXPECT_EQ(parsed.consumed, near_misses.size() - 2);  // "ab" is not the request's body
  EXPECT_FALSE(request.has_content_length);
  EXPECT_FALSE(request.has_if_none_match);
  EXPECT_EQ(Parse("GET / HTTP/1.1\r\nhost: a\r\nHOST: b\r\n\r\n", request).error,
            HttpError::kRepeatedHost);
}

// The head is reported as soon as it is complete, while the body is awaited (the handler
// sends 100 Continue then).
TEST(HttpRequestParserTest, HeadBytesKnownWhileTheBodyIsAwaited) {
  HttpRequest request;
  const std::string head = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n";
  HttpParseResult result = Parse(head + "ab", request);
  EXPECT_EQ(result.status, HttpParseStatus::kIncomplete);
  EXPECT_EQ(result.head_bytes, head.size());
  EXPECT_EQ(Parse(head.substr(0, head.size() - 1), request).head_bytes, 0u);
  result = Parse(head + "abcde", request);
  EXPECT_EQ(result.status, HttpParseStatus::kComplete);
  EXPECT_EQ(result.head_bytes, head.size());
}

// An error consumes up to the byte that decided it, never the whole input: the client may
// still be sending the rest of its request.
TEST(HttpRequestParserTest, ErrorsReportTheDecidingByte) {
  HttpRequest request;
  const struct {
    std::string input;
    size_t consumed;
  } cases[] = {
      {"GET / HTTP/1.1\r\nHost: h\rx\r\n\r\n", 23},       // the CR
      {"G(T / HTTP/1.1\r\n", 1},                          // the bad method byte
      {"GET / HTTP/1.1\r\nHost: h\r\nHost: i\r\nX", 33},  // the repeated Host's LF
      {"GET / HTTP/1.1\r\n\r\n", 17},                     // no Host: the head's last LF
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999\r\n\r\nab", 50},  // 413
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input);
    const HttpParseResult result = Parse(c.input, request);
    ASSERT_EQ(result.status, HttpParseStatus::kError);
    EXPECT_EQ(result.consumed, c.consumed);
    EXPECT_LT(result.consumed, c.input.size());
  }
}

TEST(HttpRequestParserTest, LimitsAreExact) {
  HttpLimits limits;
  limits.max_header_bytes = 64;
  limits.max_body_bytes = 4;
  HttpRequest request;
  // A head of exactly the limit fits; one byte more does not.
  const std::string base = "GET / HTTP/1.1\r\nHost: h\r\nX: ";
  const std::string fits = base + std::string(64 - base.size() - 4, 'a') + "\r\n\r\n";
  ASSERT_EQ(fits.size(), 64u);
  EXPECT_EQ(ParseHttpRequest(fits, limits, request).status, HttpParseStatus::kComplete);
  const std::string over = base + std::string(64 - base.size() - 3, 'a') + "\r\n\r\n";
  const HttpParseResult result = ParseHttpRequest(over, limits, request);
  EXPECT_EQ(result.status, HttpParseStatus::kError);
  EXPECT_EQ(result.error, HttpError::kHeaderTooLarge);
  // The request line alone over the limit is 414, even before more bytes arrive.
  EXPECT_EQ(ParseHttpRequest("GET /" + std::string(59, 'a'), limits, request).error,
            HttpError::kRequestLineTooLong);
  EXPECT_EQ(ParseHttpRequest("GET /" + std::string(58, 'a'), limits, request).status,
            HttpParseStatus::kIncomplete);
  // Body: exactly the limit is fine, one more is 413 before the body arrives.
  EXPECT_EQ(
      ParseHttpRequest("POST / HTTP/1.0\r\nContent-Length: 4\r\n\r\nabcd", limits, request).status,
      HttpParseStatus::kComplete);
  EXPECT_EQ(ParseHttpRequest("POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\n", limits, request).error,
            HttpError::kBodyTooLarge);
}

// Feeding any input in pieces gives what feeding it whole gives: every prefix parses as
// incomplete or exactly as the whole input. That covers byte-by-byte feeding and every 2-way
// split (the first piece is a prefix; the second call sees the whole input).
void ExpectSplitInvariant(absl::string_view input, const HttpLimits& limits) {
  HttpRequest whole_request;
  const HttpParseResult whole = ParseHttpRequest(input, limits, whole_request);
  for (size_t k = 0; k <= input.size(); ++k) {
    HttpRequest request;
    const HttpParseResult result = ParseHttpRequest(input.substr(0, k), limits, request);
    if (result.status == HttpParseStatus::kIncomplete) continue;
    ASSERT_EQ(result.status, whole.status) << "prefix of " << k << " bytes";
    ASSERT_EQ(result.error, whole.error) << "prefix of " << k << " bytes";
    ASSERT_EQ(result.consumed, whole.consumed) << "prefix of " << k << " bytes";
    if (result.status == HttpParseStatus::kComplete) {
      ASSERT_EQ(request.method, whole_request.method);
      ASSERT_EQ(request.target, whole_request.target);
      ASSERT_EQ(request.content_type, whole_request.content_type);
      ASSERT_EQ(request.body, whole_request.body);
    }
  }
}

TEST(HttpRequestParserTest, SplitInvariance) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    ExpectSplitInvariant(c.input, HttpLimits{});
    HttpLimits small;
    small.max_header_bytes = 40;
    small.max_body_bytes = 3;
    ExpectSplitInvariant(c.input, small);
  }
}

TEST(HttpRequestParserTest, ByteByByteFeedingMatchesWhole) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    HttpRequest request;
    const HttpParseResult whole = Parse(c.input, request);
    std::string received;
    HttpParseResult first_verdict;  // what a server would act on: the first non-incomplete
    for (char byte : c.input) {
      received.push_back(byte);
      first_verdict = Parse(received, request);
      if (first_verdict.status != HttpParseStatus::kIncomplete) break;
    }
    EXPECT_EQ(first_verdict.status, whole.status);
    EXPECT_EQ(first_verdict.error, whole.error);
    EXPECT_EQ(first_verdict.consumed, whole.consumed);
  }
}

TEST(HttpRequestParserTest, RandomInputsAreSplitInvariantAndNeverOverrun) {
  std::mt19937 random(20261129);
  const std::string alphabet = "GETPOST /HTP1.0\r\n:Host-Cnt=\t\x01\x80";
  HttpLimits limits;
  limits.max_header_bytes = 48;
  limits.max_body_bytes = 8;
  for (int i = 0; i < 2000; ++i) {
    std::string input = (i % 2 == 0) ? "POST / HTTP/1.1\r\n" : "";
    const size_t length = random() % 64;
    for (size_t j = 0; j < length; ++j) input.push_back(alphabet[random() % alphabet.size()]);
    ExpectSplitInvariant(input, limits);
    HttpRequest request;
    const HttpParseResult result = ParseHttpRequest(input, limits, request);
    if (result.status == HttpParseStatus::kComplete) {
      ASSERT_LE(result.consumed, input.size());
    }
  }
}

}  // namespace
}  // namespace onepass::http
