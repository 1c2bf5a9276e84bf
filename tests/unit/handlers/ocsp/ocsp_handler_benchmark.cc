// Requests per second of the OCSP handler alone: HTTP parse, request decode, lookup, response
// build into the output buffer. No sockets: this is the handler's share of a connection's cost.
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "handlers/ocsp/ocsp_handler.h"
#include "tests/unit/handlers/ocsp/ocsp_test_pki.h"

namespace onepass::ocsp {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1800000000);

struct Fixture {
  Fixture() {
    std::unique_ptr<testing::TestPki> pki = testing::TestPki::Create();
    // A realistic index: many certificates, one response each.
    std::vector<OcspSnapshot::NamedResponse> responses;
    for (int serial = 1; serial <= 2000; ++serial) {
      responses.push_back(
          {absl::StrCat(serial),
           pki->SignResponse({{serial}}, kNow - absl::Hours(1), kNow + absl::Hours(24 * 7))});
    }
    factory = std::make_unique<OcspHandlerFactory>(
        OcspHandlerConfig{}, OcspSnapshot::FromResponses(std::move(responses), kNow));
    const std::string der = pki->MakeRequest({{4242}});
    post = absl::StrCat(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/ocsp-request\r\n"
        "Content-Length: ",
        der.size(), "\r\n\r\n", der);
    get = absl::StrCat("GET /", absl::Base64Escape(der), " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const std::string unknown = pki->MakeRequest({{999999}});
    post_unknown = absl::StrCat(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/ocsp-request\r\n"
        "Content-Length: ",
        unknown.size(), "\r\n\r\n", unknown);
  }
  std::unique_ptr<OcspHandlerFactory> factory;
  std::string post, get, post_unknown;
};

Fixture& TheFixture() {
  static Fixture* fixture = new Fixture();
  return *fixture;
}

void Run(benchmark::State& state, const std::string& request) {
  HandlerCounters counters(TheFixture().factory->Counters().size());
  std::unique_ptr<Handler> handler = TheFixture().factory->CreateHandler(counters);
  OutputBuffer out(TheFixture().factory->OutputBufferBytes());
  RequestContext context;
  context.now = kNow;
  const absl::Span<const uint8_t> input(reinterpret_cast<const uint8_t*>(request.data()),
                                        request.size());
  for (auto _ : state) {
    out.Clear();
    const Verdict verdict = handler->Process(input, context, out);
    benchmark::DoNotOptimize(verdict);
    if (verdict.action != Action::kWriteThenClose) state.SkipWithError("unexpected verdict");
    // The server's clock moves on: Date is reformatted once per second, not per request.
    context.now += absl::Microseconds(1);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}

void BM_OcspPost(benchmark::State& state) { Run(state, TheFixture().post); }
void BM_OcspGet(benchmark::State& state) { Run(state, TheFixture().get); }
void BM_OcspPostUnknown(benchmark::State& state) { Run(state, TheFixture().post_unknown); }
BENCHMARK(BM_OcspPost);
BENCHMARK(BM_OcspGet);
BENCHMARK(BM_OcspPostUnknown);

}  // namespace
}  // namespace onepass::ocsp

BENCHMARK_MAIN();
