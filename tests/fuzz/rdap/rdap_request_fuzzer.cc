// Fuzz target of the RDAP handler: the HTTP request parser, the RDAP query path parser
// (percent-decoding, IDNA via libidn2, search patterns), the lookup and the response, driven
// through the Handler interface as the server drives it.
//
// Checks, beyond "no crash, no sanitizer report":
//  - consumed <= input size; kReadMore only below MaxRequestBytes and with nothing written;
//  - every response is one HTTP/1.1 response whose Content-Length is the content sent (none
//    for HEAD and 304), with the RDAP media type;
//  - split invariance: the verdict on any prefix is kReadMore or the response to the whole.
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

namespace {

using onepass::Action;
using onepass::OutputBuffer;
using onepass::RequestContext;
using onepass::Verdict;

struct Fixture {
  Fixture() {
    onepass::rdap::RdapConfig config;
    config.search_max_results = 3;
    onepass::rdap::RdapSnapshotBuilder builder(config.base_url);
    if (!onepass::whois::LoadWhoisRecordsText(onepass::whois::EmbeddedWhoisDb(), "embedded",
                                              builder)
             .ok()) {
      std::abort();
    }
    factory = std::make_unique<onepass::rdap::RdapHandlerFactory>(builder.Build(), config);
    counters = std::make_unique<onepass::HandlerCounters>(factory->Counters().size());
    handler = factory->CreateHandler(*counters);
    out = std::make_unique<OutputBuffer>(factory->OutputBufferBytes());
  }
  std::unique_ptr<onepass::rdap::RdapHandlerFactory> factory;
  std::unique_ptr<onepass::HandlerCounters> counters;
  std::unique_ptr<onepass::Handler> handler;
  std::unique_ptr<OutputBuffer> out;
};

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckResponse(const std::string& response) {
  Check(absl::StartsWith(response, "HTTP/1.1 "));
  const size_t end = response.find("\r\n\r\n");
  Check(end != std::string::npos);
  const std::string head = response.substr(0, end + 2);
  const size_t at = head.find("\r\nContent-Length: ");
  const bool no_content = absl::StartsWith(response, "HTTP/1.1 304 ");
  if (no_content) {
    Check(at == std::string::npos && response.size() == end + 4);
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

struct Outcome {
  Verdict verdict;
  std::string response;
};

Outcome Run(Fixture& f, const uint8_t* data, size_t size, bool peer_closed) {
  f.out->Clear();
  RequestContext context;
  context.peer_closed = peer_closed;
  Outcome outcome;
  outcome.verdict = f.handler->Process(absl::Span<const uint8_t>(data, size), context, *f.out);
  outcome.response.assign(reinterpret_cast<const char*>(f.out->data()), f.out->size());
  Check(outcome.verdict.consumed <= size);
  switch (outcome.verdict.action) {
    case Action::kReadMore:
      Check(!peer_closed);
      Check(outcome.response.empty());
      Check(size < f.factory->MaxRequestBytes());
      break;
    case Action::kWriteThenClose:
      CheckResponse(outcome.response);
      break;
    case Action::kClose:
      Check(size == 0 && peer_closed);
      break;
    case Action::kWriteThenRead:
    case Action::kWaitUpstream:
      Check(false);  // one request per connection; nothing forwarded
      break;
  }
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fixture = new Fixture();
  const Outcome whole = Run(*fixture, data, size, /*peer_closed=*/true);
  const Outcome open = Run(*fixture, data, size, /*peer_closed=*/false);
  if (open.verdict.action != Action::kReadMore) {
    Check(open.response == whole.response);
    Check(open.verdict.consumed == whole.verdict.consumed);
  }
  if (size > 0) {
    const size_t split = data[0] % (size + 1);
    const Outcome prefix = Run(*fixture, data, split, /*peer_closed=*/false);
    if (prefix.verdict.action != Action::kReadMore) Check(prefix.response == open.response);
  }
  return 0;
}
