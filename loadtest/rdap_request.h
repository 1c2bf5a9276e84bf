// RDAP over HTTP/1.1 (RFC 7480), one GET per connection, as an RDAP client sends it.
// Checks, once the server has closed: status 200, Content-Type application/rdap+json, and a
// body of exactly Content-Length bytes (and, if set, containing `expect_substring`). The JSON
// itself is checked by scripts/rdap-check.py in the tests, not per request here.
#ifndef ONEPASS_LOADTEST_RDAP_REQUEST_H_
#define ONEPASS_LOADTEST_RDAP_REQUEST_H_

#include <string>

#include "absl/strings/string_view.h"
#include "loadtest/protocol.h"

namespace onepass::load {

class RdapClient : public FixedRequestClient {
 public:
  // `path`: the request target ("/domain/example.com"); `host`: the Host header.
  RdapClient(absl::string_view path, absl::string_view host, std::string expect_substring);

  absl::string_view name() const override { return "rdap"; }
  CheckResult Check(absl::string_view request, absl::string_view response,
                    bool closed) const override;
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_RDAP_REQUEST_H_
