#include "loadtest/rdap_request.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace onepass::load {

RdapClient::RdapClient(absl::string_view path, absl::string_view host, std::string expect_substring)
    : FixedRequestClient(absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ", host,
                                      "\r\nAccept: application/rdap+json\r\n\r\n"),
                         std::move(expect_substring)) {}

CheckResult RdapClient::Check(absl::string_view request, absl::string_view response,
                              bool closed) const {
  if (!closed) return CheckResult::Incomplete();
  if (response.empty()) return CheckResult::Short("closed without a reply");
  const size_t end = response.find("\r\n\r\n");
  if (end == absl::string_view::npos) return CheckResult::Short("closed inside the HTTP header");
  const absl::string_view head = response.substr(0, end + 2);
  if (!absl::StartsWith(head, "HTTP/1.1 200 ")) {
    return CheckResult::Wrong("HTTP status not 200", std::string(head.substr(0, 40)));
  }
  std::string lower(head);
  absl::AsciiStrToLower(&lower);
  if (!absl::StrContains(lower, "\r\ncontent-type: application/rdap+json\r\n")) {
    return CheckResult::Wrong("not application/rdap+json");
  }
  const size_t at = lower.find("\r\ncontent-length: ");
  size_t length = 0;
  if (at == std::string::npos) return CheckResult::Wrong("no Content-Length");
  const size_t start = at + 18;
  if (!absl::SimpleAtoi(lower.substr(start, lower.find("\r\n", start) - start), &length)) {
    return CheckResult::Wrong("bad Content-Length");
  }
  const absl::string_view body = response.substr(end + 4);
  if (body.size() != length) {
    return CheckResult::Wrong("body is not Content-Length bytes",
                              absl::StrCat(body.size(), " of ", length));
  }
  if (!expect_substring().empty() && !absl::StrContains(body, expect_substring())) {
    return CheckResult::Wrong("body lacks the expected text");
  }
  return CheckResult::Ok();
}

}  // namespace onepass::load
