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

}  // namespace

WhoisClient::WhoisClient(absl::string_view query, std::string expect_substring)
    : expect_substring_(std::move(expect_substring)) {
  while (absl::ConsumeSuffix(&query, "\n") || absl::ConsumeSuffix(&query, "\r")) {
  }
  request_ = absl::StrCat(query, "\r\n");
}

void WhoisClient::BuildRequest(uint64_t sequence, uint32_t random, std::string* out) const {
  *out = request_;
}

CheckResult WhoisClient::Check(absl::string_view request, absl::string_view response,
                               bool closed) const {
  return CheckReplyAtClose(response, closed, expect_substring_);
}

void RawClient::BuildRequest(uint64_t sequence, uint32_t random, std::string* out) const {
  *out = request_;
}

CheckResult RawClient::Check(absl::string_view request, absl::string_view response,
                             bool closed) const {
  return CheckReplyAtClose(response, closed, expect_substring_);
}

}  // namespace onepass::load
