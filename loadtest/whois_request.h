// Whois (RFC 3912) and raw byte exchanges: the reply is whatever arrives until the server
// closes, so both are judged only at the close.
#ifndef ONEPASS_LOADTEST_WHOIS_REQUEST_H_
#define ONEPASS_LOADTEST_WHOIS_REQUEST_H_

#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "loadtest/protocol.h"

namespace onepass::load {

// RFC 3912 §2: the query is one line ending in CRLF; the server answers and closes.
// Checks a non-empty reply and, if `expect_substring` is set, that the reply contains it.
class WhoisClient : public FixedRequestClient {
 public:
  // `query` without the line ending (a trailing CR/LF is stripped).
  WhoisClient(absl::string_view query, std::string expect_substring);

  absl::string_view name() const override { return "whois"; }
  CheckResult Check(absl::string_view request, absl::string_view response,
                    bool closed) const override;
};

// Sends fixed bytes; any non-empty reply (containing `expect_substring` if set) ending at the
// server's close is correct.
class RawClient : public FixedRequestClient {
 public:
  RawClient(std::string request, std::string expect_substring)
      : FixedRequestClient(std::move(request), std::move(expect_substring)) {}

  absl::string_view name() const override { return "raw"; }
  CheckResult Check(absl::string_view request, absl::string_view response,
                    bool closed) const override;
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_WHOIS_REQUEST_H_
