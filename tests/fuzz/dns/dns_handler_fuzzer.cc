// Fuzzes the DNS handler end to end without a socket: the input is both a raw message for the
// responder and a TCP byte stream for the session (framer + pipelining), replayed whole and
// split in two. Checks the contracts the server relies on: consumed <= input, every response
// is one whole length-prefixed message of at most 65535 bytes with the query's ID, a padded
// answer (RFC 8467, asked for over an encrypted connection) is a multiple of 468 bytes or fills
// the output, and a split input sends a prefix of what the whole input sends. Inputs of odd
// length are replayed as if over TLS (RequestContext::encrypted), even ones over plain TCP.
//
// Built twice: dns_handler_fuzzer serves the embedded default zone; dns_signed_fuzzer
// (ONEPASS_FUZZ_SIGNED_ZONES) adds the signed zones of tests/data/dnssec (NSEC3 example.org,
// NSEC example.net), so DO queries reach signatures and denial proofs.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "handlers/dns/default_zone.h"
#include "handlers/dns/dns_framer.h"
#include "handlers/dns/dns_handler.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/precompiled_answers.h"
#include "handlers/dns/zone_loader.h"

namespace {

using namespace onepass;       // NOLINT
using namespace onepass::dns;  // NOLINT

std::shared_ptr<const ZoneSnapshot> Snapshot() {
  static const auto* snapshot = [] {
    std::vector<ZoneSource> sources = {ZoneSource{"default", std::string(DefaultZoneText())}};
#ifdef ONEPASS_FUZZ_SIGNED_ZONES
    for (const char* file : {"example.org.signed", "example.net.signed"}) {
      std::ifstream in(std::string(ONEPASS_SOURCE_DIR) + "/tests/data/dnssec/" + file);
      std::ostringstream text;
      text << in.rdbuf();
      sources.push_back(ZoneSource{file, text.str()});
    }
#endif
    auto built = BuildSnapshot(sources);
    if (!built.ok()) std::abort();
    return new std::shared_ptr<const ZoneSnapshot>(*built);
  }();
  return *snapshot;
}

const DnsHandlerFactory& Factory() {
  static const DnsHandlerFactory* factory = new DnsHandlerFactory(Snapshot(), ResponderConfig{});
  return *factory;
}

void CheckOutput(absl::Span<const uint8_t> out) {
  while (!out.empty()) {
    const Frame frame = NextFrame(out);
    if (frame.status != FrameStatus::kFrame) std::abort();  // responses are whole messages
    out.remove_prefix(frame.frame_bytes);
  }
}

// Runs the stream through a handler the way the server does; returns everything "sent".
std::string Replay(Handler& handler, OutputBuffer& out, absl::Span<const uint8_t> input, size_t cut,
                   bool encrypted) {
  std::vector<uint8_t> pending;
  std::string sent;
  size_t fed = 0;
  for (int round = 0; round < 10000; ++round) {
    if (fed < input.size()) {
      const size_t end = fed < cut ? cut : input.size();
      pending.insert(pending.end(), input.begin() + fed, input.begin() + end);
      fed = end;
    }
    RequestContext context;
    context.keepalive = absl::Seconds(1);
    context.peer_closed = fed == input.size();
    context.encrypted = encrypted;
    const Verdict v = handler.Process(pending, context, out);
    if (v.consumed > pending.size()) std::abort();
    CheckOutput(out.contents());
    pending.erase(pending.begin(), pending.begin() + v.consumed);
    if (v.action != Action::kClose) {
      sent.append(reinterpret_cast<const char*>(out.data()), out.size());
    }
    out.Clear();
    if (v.action == Action::kClose || v.action == Action::kWriteThenClose) break;
    if (v.action == Action::kReadMore && fed == input.size()) break;
    if (v.action == Action::kWriteThenRead && pending.empty() && fed == input.size()) break;
  }
  return sent;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static HandlerCounters counters(Factory().Counters().size());
  static std::unique_ptr<Handler> handler = Factory().CreateHandler(counters);
  static OutputBuffer out(Factory().OutputBufferBytes());
  const absl::Span<const uint8_t> input(data, size);

  // 1. The input as one message.
  {
    static DnsResponder responder(Snapshot(), ResponderConfig{}, nullptr);
    static std::vector<uint8_t> buffer(kMaxMessageBytes);
    const Response r = responder.Respond(input, absl::MakeSpan(buffer),
                                         {.keepalive_timeout = 5, .encrypted = true});
    if (r.kind == Response::Kind::kAnswer) {
      if (r.size < kHeaderBytes || r.size > kMaxMessageBytes) std::abort();
      if (buffer[0] != data[0] || buffer[1] != data[1]) std::abort();  // ID echoed
      if ((buffer[2] & 0x80) == 0) std::abort();                       // QR set
      if (r.padded && r.size % kResponsePaddingBlock != 0 && r.size != kMaxMessageBytes) {
        std::abort();
      }
    }
  }
  // 1b. Into an output just big enough or too small (the writer's bounds; ASan sees overruns
  // of this exactly-sized buffer).
  if (size > 0) {
    static DnsResponder small_responder(
        Snapshot(), ResponderConfig{},
        PrecompiledAnswers::Build(Snapshot(), ResponderConfig{}, 1 << 20));
    std::vector<uint8_t> small(1 + (data[size - 1] * 3) % 400);
    const Response r = small_responder.Respond(input, absl::MakeSpan(small),
                                               {.keepalive_timeout = 7, .encrypted = true});
    if (r.kind == Response::Kind::kAnswer && r.size > small.size()) std::abort();
  }
  // 2. The input as a TCP stream, whole and split in two. A split may close earlier (after the
  // last complete query of the first chunk, the single pass) but never sends other bytes.
  const bool encrypted = size % 2 == 1;
  const std::string whole = Replay(*handler, out, input, size, encrypted);
  if (size > 1) {
    const size_t cut = 1 + (data[0] % (size - 1));
    const std::string split = Replay(*handler, out, input, cut, encrypted);
    if (whole.compare(0, split.size(), split) != 0) std::abort();
  }
  return 0;
}
