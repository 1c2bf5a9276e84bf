// Microbenchmark of the Whois handler: Process() on one complete query line, as the server
// calls it for a connection's single pass (frame, parse, lookup, copy the reply).
//
//   <build>/tests/unit/handlers/whois/whois_handler_bench
//   WHOIS_BENCH_DB=/tmp/whois-1m.db WHOIS_BENCH_DOMAIN=quinkel0.com <same>
// The first runs on the embedded database; the second on a generated one
// (scripts/gen-whois-db.py), where the index no longer fits in the CPU caches.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "handlers/whois/whois_db.h"
#include "handlers/whois/whois_embedded_db.h"
#include "handlers/whois/whois_handler.h"

namespace onepass::whois {
namespace {

struct Setup {
  Setup() {
    const char* path = std::getenv("WHOIS_BENCH_DB");
    auto loaded =
        path != nullptr ? LoadWhoisDbFile(path) : LoadWhoisDbText(EmbeddedWhoisDb(), "embedded");
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", std::string(loaded.status().message()).c_str());
      std::abort();
    }
    const char* domain = std::getenv("WHOIS_BENCH_DOMAIN");
    hit = std::string(domain != nullptr ? domain : "example.com") + "\r\n";
    factory = std::make_unique<WhoisHandlerFactory>(*loaded, WhoisConfig());
  }
  std::unique_ptr<WhoisHandlerFactory> factory;
  std::string hit;
};

Setup& GetSetup() {
  static Setup* setup = new Setup();
  return *setup;
}

void RunQuery(benchmark::State& state, const std::string& query) {
  Setup& setup = GetSetup();
  HandlerCounters counters(setup.factory->Counters().size());
  std::unique_ptr<Handler> handler = setup.factory->CreateHandler(counters);
  OutputBuffer out(setup.factory->OutputBufferBytes());
  const absl::Span<const uint8_t> input(reinterpret_cast<const uint8_t*>(query.data()),
                                        query.size());
  for (auto _ : state) {
    out.Clear();
    Verdict verdict = handler->Process(input, RequestContext(), out);
    benchmark::DoNotOptimize(verdict);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
}

void BM_DomainHit(benchmark::State& state) { RunQuery(state, GetSetup().hit); }
void BM_NoMatch(benchmark::State& state) { RunQuery(state, "nosuch-domain-name.com\r\n"); }
void BM_Utf8Idn(benchmark::State& state) {
  RunQuery(state,
           "b\xc3\xbc"
           "cher.example\r\n");
}
void BM_NulError(benchmark::State& state) { RunQuery(state, std::string("exa\0m\r\n", 7)); }

// The hit with the per-client rate limit on (the flags' defaults), each query from another of
// 65536 addresses cycling through a 16384-slot table: the limiter's lookup and eviction cost.
void BM_DomainHitRateLimited(benchmark::State& state) {
  Setup& setup = GetSetup();
  WhoisConfig config;
  config.rate_limit.queries_per_second = 2;
  config.rate_limit.burst = 20;
  config.rate_limit.table_entries = 16384;
  WhoisHandlerFactory factory(
      std::shared_ptr<const WhoisSnapshot>(&setup.factory->snapshot(), [](const WhoisSnapshot*) {}),
      config);
  HandlerCounters counters(factory.Counters().size());
  std::unique_ptr<Handler> handler = factory.CreateHandler(counters);
  OutputBuffer out(factory.OutputBufferBytes());
  const absl::Span<const uint8_t> input(reinterpret_cast<const uint8_t*>(setup.hit.data()),
                                        setup.hit.size());
  RequestContext context;
  context.now = absl::FromUnixSeconds(1800000000);
  context.peer = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 51, 0, 0};
  uint32_t client = 0;
  for (auto _ : state) {
    out.Clear();
    ++client;
    context.peer[14] = static_cast<uint8_t>(client >> 8);
    context.peer[15] = static_cast<uint8_t>(client);
    context.now += absl::Microseconds(1);
    Verdict verdict = handler->Process(input, context, out);
    benchmark::DoNotOptimize(verdict);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
}

BENCHMARK(BM_DomainHit);
BENCHMARK(BM_DomainHitRateLimited);
BENCHMARK(BM_NoMatch);
BENCHMARK(BM_Utf8Idn);
BENCHMARK(BM_NulError);

}  // namespace
}  // namespace onepass::whois

BENCHMARK_MAIN();
