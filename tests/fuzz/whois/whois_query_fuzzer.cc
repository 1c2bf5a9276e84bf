// Fuzz target of the Whois handler: line framer, query parser (UTF-8, IDN via libidn2), lookup
// and reply assembly, driven through the Handler interface as the server drives it
// (tests/fuzz/one_shot_driver.h: the handler contract and split invariance).
//
// Checks of its own: every reply ends with the snapshot's tail and has CRLF line ends only.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "handlers/whois/whois_db.h"
#include "handlers/whois/whois_embedded_db.h"
#include "handlers/whois/whois_handler.h"
#include "tests/fuzz/one_shot_driver.h"

namespace {

using onepass::fuzz::Check;

onepass::fuzz::OneShotDriver* NewDriver() {
  auto snapshot = onepass::whois::LoadWhoisDbText(onepass::whois::EmbeddedWhoisDb(), "embedded");
  if (!snapshot.ok()) std::abort();
  onepass::whois::WhoisConfig config;
  config.max_query_bytes = 512;
  const std::string tail((*snapshot)->tail());
  auto check_reply = [tail](const std::string& reply) {
    Check(reply.size() >= tail.size());
    Check(reply.compare(reply.size() - tail.size(), tail.size(), tail) == 0);
    for (size_t i = 0; i < reply.size(); ++i) {
      if (reply[i] == '\n') Check(i > 0 && reply[i - 1] == '\r');
    }
  };
  return new onepass::fuzz::OneShotDriver(
      std::make_unique<onepass::whois::WhoisHandlerFactory>(*snapshot, config), check_reply);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static onepass::fuzz::OneShotDriver* driver = NewDriver();
  driver->Fuzz(data, size);
  return 0;
}
