// Fuzzes the OCSP handler's whole request path (HTTP parser, GET decoder, DER CertID reader,
// lookup, response writer) through Handler::Process, plus the DER reader and the GET decoder on
// the raw input. Fails (aborts) on any crash, sanitizer report, or broken contract:
//   - consumed never exceeds the input; kReadMore appends nothing;
//   - every answer is one HTTP/1.1 response with Connection: close;
//   - split invariance: a prefix of the input is answered as the whole or not at all.
//
// The seeds in tests/fuzz/corpus/ocsp_request_fuzzer/ wrap kKnownRequest (POST, GET raw and
// percent-encoded) and a few malformed shapes; the snapshot answers kKnownRequest's CertID, so
// the fuzzer starts on the 200 path.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "handlers/ocsp/get_request_decoder.h"
#include "handlers/ocsp/ocsp_handler.h"
#include "handlers/ocsp/ocsp_request_reader.h"
#include "tests/unit/handlers/ocsp/ocsp_test_pki.h"

namespace onepass::ocsp {
namespace {

// The OCSPRequest for good.pem of one make-ocsp-testdata.sh run (SHA-1 CertID, serial 0x1000).
constexpr uint8_t kKnownRequest[] = {
    0x30, 0x43, 0x30, 0x41, 0x30, 0x3f, 0x30, 0x3d, 0x30, 0x3b, 0x30, 0x09, 0x06, 0x05,
    0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14, 0x0d, 0x96, 0xc0, 0x24, 0x9a,
    0x8a, 0x7f, 0x5a, 0xe3, 0x6d, 0x0b, 0x71, 0xba, 0x61, 0xa4, 0x07, 0xc8, 0xdf, 0x17,
    0xed, 0x04, 0x14, 0x3a, 0xd9, 0x6e, 0xc7, 0x42, 0xaa, 0x4b, 0x82, 0xa1, 0xbe, 0xab,
    0x01, 0x4e, 0x3f, 0x14, 0x6d, 0x3d, 0xcf, 0x9f, 0x1f, 0x02, 0x02, 0x10, 0x00};

const absl::Time kNow = absl::FromUnixSeconds(1800000000);

void Require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "ocsp_request_fuzzer: contract broken: %s\n", what);
    std::abort();
  }
}

struct Fuzz {
  Fuzz() {
    std::unique_ptr<testing::TestPki> pki = testing::TestPki::Create();
    const std::string known(reinterpret_cast<const char*>(kKnownRequest), sizeof(kKnownRequest));
    std::string response = pki->SignResponseForRequest(
        known, testing::CertStatus::kGood, kNow - absl::Hours(1), kNow + absl::Hours(24));
    Require(!response.empty(), "signing the known response");
    // Small limits, so that 413/414/431 are reachable within libFuzzer's input sizes.
    OcspHandlerConfig config;
    config.http.max_header_bytes = 1024;
    config.http.max_body_bytes = 512;
    factory = std::make_unique<OcspHandlerFactory>(
        config, OcspSnapshot::FromResponses({{"known", std::move(response)}}, kNow));
    Require(factory->snapshot().stats().loaded == 1, "loading the known response");
    counters = std::make_unique<HandlerCounters>(factory->Counters().size());
    handler = factory->CreateHandler(*counters);
    whole = std::make_unique<OutputBuffer>(factory->OutputBufferBytes());
    part = std::make_unique<OutputBuffer>(factory->OutputBufferBytes());
  }
  std::unique_ptr<OcspHandlerFactory> factory;
  std::unique_ptr<HandlerCounters> counters;
  std::unique_ptr<Handler> handler;
  std::unique_ptr<OutputBuffer> whole, part;
};

Verdict ProcessChecked(Fuzz& fuzz, absl::Span<const uint8_t> input, bool peer_closed,
                       OutputBuffer& out) {
  RequestContext context;
  context.now = kNow;
  context.peer_closed = peer_closed;
  out.Clear();
  const Verdict verdict = fuzz.handler->Process(input, context, out);
  Require(verdict.consumed <= input.size(), "consumed <= input size");
  const absl::string_view text(reinterpret_cast<const char*>(out.data()), out.size());
  switch (verdict.action) {
    case Action::kReadMore:
      Require(out.empty() && verdict.consumed == 0 && !peer_closed, "kReadMore appends nothing");
      break;
    case Action::kWriteThenClose:
      Require(absl::StartsWith(text, "HTTP/1.1 "), "response starts with a status line");
      Require(absl::StrContains(text, "\r\nConnection: close\r\n"), "Connection: close");
      Require(absl::StrContains(text, "\r\n\r\n"), "a complete head");
      break;
    case Action::kClose:
      Require(input.empty() && peer_closed, "kClose only for nothing received");
      break;
    case Action::kWriteThenRead:
      Require(false, "single-shot: never kWriteThenRead");
      break;
    case Action::kWaitUpstream:
      Require(false, "OCSP forwards nothing: never kWaitUpstream");
      break;
  }
  return verdict;
}

}  // namespace
}  // namespace onepass::ocsp

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onepass;        // NOLINT: the fuzzer's entry point
  using namespace onepass::ocsp;  // NOLINT
  static Fuzz* fuzz = new Fuzz();
  const absl::Span<const uint8_t> input(data, size);

  OcspRequestCertIds ids;
  if (ReadOcspRequestCertIds(input, ids)) Require(ids.count >= 1, "a request has a CertID");
  std::vector<uint8_t> decoded(size);
  const absl::optional<size_t> decoded_size = DecodeGetRequestPath(
      absl::string_view(reinterpret_cast<const char*>(data), size), absl::MakeSpan(decoded));
  if (decoded_size.has_value()) Require(*decoded_size <= size, "base64 shrinks");

  ProcessChecked(*fuzz, input, /*peer_closed=*/true, *fuzz->whole);
  const Verdict whole = ProcessChecked(*fuzz, input, /*peer_closed=*/false, *fuzz->whole);
  if (size > 1) {
    const size_t split = data[0] % size;
    const Verdict part = ProcessChecked(*fuzz, input.subspan(0, split), false, *fuzz->part);
    if (part.action != Action::kReadMore) {
      Require(part.action == whole.action, "split: same action");
      Require(fuzz->part->size() == fuzz->whole->size() &&
                  std::equal(fuzz->part->data(), fuzz->part->data() + fuzz->part->size(),
                             fuzz->whole->data()),
              "split: same response");
    }
  }
  return 0;
}
