// Fuzz target of the Whois handler: line framer, query parser (UTF-8, IDN via libidn2), lookup
// and reply assembly, driven through the Handler interface as the server drives it.
//
// Checks, beyond "no crash, no sanitizer report":
//  - consumed <= input size; kReadMore only below MaxRequestBytes and with nothing written;
//  - every reply ends with the snapshot's tail and has CRLF line ends only;
//  - split invariance: the verdict on any prefix is kReadMore or the verdict on the whole.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "handlers/whois/whois_db.h"
#include "handlers/whois/whois_embedded_db.h"
#include "handlers/whois/whois_handler.h"

namespace {

using onepass::Action;
using onepass::OutputBuffer;
using onepass::RequestContext;
using onepass::Verdict;

struct Fixture {
  Fixture() {
    auto snapshot = onepass::whois::LoadWhoisDbText(onepass::whois::EmbeddedWhoisDb(), "embedded");
    if (!snapshot.ok()) std::abort();
    onepass::whois::WhoisConfig config;
    config.max_query_bytes = 512;
    factory = std::make_unique<onepass::whois::WhoisHandlerFactory>(*snapshot, config);
    counters = std::make_unique<onepass::HandlerCounters>(factory->Counters().size());
    handler = factory->CreateHandler(*counters);
    out = std::make_unique<OutputBuffer>(factory->OutputBufferBytes());
  }
  std::unique_ptr<onepass::whois::WhoisHandlerFactory> factory;
  std::unique_ptr<onepass::HandlerCounters> counters;
  std::unique_ptr<onepass::Handler> handler;
  std::unique_ptr<OutputBuffer> out;
};

void Check(bool condition) {
  if (!condition) std::abort();
}

struct Outcome {
  Verdict verdict;
  std::string reply;
};

Outcome Run(Fixture& f, const uint8_t* data, size_t size, bool peer_closed) {
  f.out->Clear();
  RequestContext context;
  context.peer_closed = peer_closed;
  Outcome outcome;
  outcome.verdict = f.handler->Process(absl::Span<const uint8_t>(data, size), context, *f.out);
  outcome.reply.assign(reinterpret_cast<const char*>(f.out->data()), f.out->size());
  Check(outcome.verdict.consumed <= size);
  const absl::string_view tail = f.factory->snapshot().tail();
  switch (outcome.verdict.action) {
    case Action::kReadMore:
      Check(!peer_closed);
      Check(outcome.reply.empty());
      Check(size < f.factory->MaxRequestBytes());
      break;
    case Action::kWriteThenClose:
      Check(outcome.reply.size() >= tail.size());
      Check(outcome.reply.compare(outcome.reply.size() - tail.size(), tail.size(), tail.data(),
                                  tail.size()) == 0);
      for (size_t i = 0; i < outcome.reply.size(); ++i) {
        if (outcome.reply[i] == '\n') Check(i > 0 && outcome.reply[i - 1] == '\r');
      }
      break;
    case Action::kClose:
      Check(size == 0 && peer_closed);
      break;
    case Action::kWriteThenRead:
      Check(false);  // Whois never keeps a connection open
      break;
    case Action::kWaitUpstream:
      Check(false);  // Whois forwards nothing
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
    // With the line complete, a later close of the peer changes nothing.
    Check(open.reply == whole.reply);
    Check(open.verdict.consumed == whole.verdict.consumed);
  }
  // One split point derived from the input: the prefix decides nothing, or the same thing.
  if (size > 0) {
    const size_t split = data[0] % (size + 1);
    const Outcome prefix = Run(*fixture, data, split, /*peer_closed=*/false);
    if (prefix.verdict.action != Action::kReadMore) {
      Check(prefix.reply == open.reply);
    }
  }
  return 0;
}
