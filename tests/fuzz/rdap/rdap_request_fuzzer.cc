// Fuzz target of the RDAP handler: the HTTP request parser, the RDAP query path parser
// (percent-decoding, IDNA via libidn2, search patterns), the lookup and the response, driven
// through the Handler interface as the server drives it (tests/fuzz/one_shot_driver.h: the
// handler contract and split invariance).
//
// Checks of its own: every response is one HTTP/1.1 response whose Content-Length is the
// content sent (none for HEAD and 304), with the RDAP media type; a 204 (OPTIONS, the CORS
// preflight) has neither Content-Length nor content (RFC 9110 §8.6) and allows every origin.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "handlers/rdap/rdap_handler.h"
#include "handlers/whois/whois_db.h"
#include "handlers/whois/whois_embedded_db.h"
#include "tests/fuzz/one_shot_driver.h"

namespace {

using onepass::fuzz::Check;

void CheckResponse(const std::string& response) {
  Check(absl::StartsWith(response, "HTTP/1.1 "));
  const size_t end = response.find("\r\n\r\n");
  Check(end != std::string::npos);
  const std::string head = response.substr(0, end + 2);
  const size_t at = head.find("\r\nContent-Length: ");
  const bool preflight = absl::StartsWith(response, "HTTP/1.1 204 ");
  const bool no_content = preflight || absl::StartsWith(response, "HTTP/1.1 304 ");
  if (no_content) {
    Check(at == std::string::npos && response.size() == end + 4);
    if (preflight) Check(absl::StrContains(head, "\r\nAccess-Control-Allow-Origin: *\r\n"));
    return;
  }
  Check(at != std::string::npos);
  Check(absl::StrContains(head, "\r\nContent-Type: application/rdap+json\r\n"));
  size_t length = 0;
  const size_t start = at + 18;
  Check(absl::SimpleAtoi(head.substr(start, head.find("\r\n", start) - start), &length));
  const size_t sent = response.size() - end - 4;
  Check(sent == length || sent == 0);  // 0: a HEAD
}

onepass::fuzz::OneShotDriver* NewDriver() {
  onepass::rdap::RdapConfig config;
  config.search_max_results = 3;
  onepass::rdap::RdapSnapshotBuilder builder(config.base_url);
  if (!onepass::whois::LoadWhoisRecordsText(onepass::whois::EmbeddedWhoisDb(), "embedded", builder)
           .ok()) {
    std::abort();
  }
  return new onepass::fuzz::OneShotDriver(
      std::make_unique<onepass::rdap::RdapHandlerFactory>(builder.Build(), config), CheckResponse);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static onepass::fuzz::OneShotDriver* driver = NewDriver();
  driver->Fuzz(data, size);
  return 0;
}
