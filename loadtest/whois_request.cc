#include "loadtest/whois_request.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace onepass::load {
namespace {

CheckResult CheckReplyAtClose(absl::string_view response, bool closed,
                              const std::string& expect_substring) {
  if (!closed) return CheckResult::Incomplete();
  if (response.empty()) return CheckResult::Short("closed without a reply");
  if (!expect_substring.empty() && response.find(expect_substring) == absl::string_view::npos) {
    return CheckResult::Wrong(
        "reply lacks the expected text",
        absl::StrCat(response.size(), " bytes without \"", expect_substring.substr(0, 40), "\""));
  }
  return CheckResult::Ok();
}

// RFC 3912 §2: the query line ends in CRLF, whatever line end it came with.
std::string WhoisLine(absl::string_view query) {
  while (absl::ConsumeSuffix(&query, "\n") || absl::ConsumeSuffix(&query, "\r")) {
  }
  return absl::StrCat(query, "\r\n");
}

}  // namespace

WhoisClient::WhoisClient(absl::string_view query, std::string expect_substring)
    : FixedRequestClient(WhoisLine(query), std::move(expect_substring)) {}

CheckResult WhoisClient::Check(absl::string_view request, absl::string_view response,
                               bool closed) const {
  return CheckReplyAtClose(response, closed, expect_substring());
}

CheckResult RawClient::Check(absl::string_view request, absl::string_view response,
                             bool closed) const {
  return CheckReplyAtClose(response, closed, expect_substring());
}

}  // namespace onepass::load
