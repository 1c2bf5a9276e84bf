// Queries per second of the DNS responder and of the whole handler (framer + responder +
// session) on one core, for the answers that dominate real traffic: an exact A answer, an
// NXDOMAIN and a referral. Run: build/<dir>/tests/unit/handlers/dns/dns_responder_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "handlers/dns/dns_handler.h"
#include "handlers/dns/dns_responder.h"
#include "handlers/dns/precompiled_answers.h"
#include "handlers/dns/zone_loader.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

// Names of the large generated zone: 1,000,000, or ONEPASS_BENCH_LARGE_ZONE_NAMES (the 10M
// comparison of handlers/dns/README.md "Zone data at scale": the same random-name cost at ten times
// the names).
int LargeZoneNames() {
  static const int names = [] {
    const char* set = std::getenv("ONEPASS_BENCH_LARGE_ZONE_NAMES");
    const int value = set != nullptr ? std::atoi(set) : 0;
    return value > 0 ? value : 1000000;
  }();
  return names;
}

struct BenchQuery {
  const char* name;
  const char* type;
};
constexpr BenchQuery kQueries[] = {
    {"www.example.com", "A"},            // exact answer + NS + glue (173 bytes)
    {"nx.example.com", "A"},             // NXDOMAIN + SOA
    {"host.sub.example.com", "A"},       // referral + glue
    {"anything.wild.example.com", "A"},  // wildcard
    {"alias.example.com", "A"},          // CNAME chain of two
};

// range(0): the query; range(1): 1 = answers precompiled at load time, 0 = rendered per query.
void BM_Respond(benchmark::State& state) {
  const BenchQuery& q = kQueries[state.range(0)];
  auto snapshot = testing::DefaultSnapshot();
  DnsResponder responder(
      snapshot, ResponderConfig{},
      state.range(1) ? PrecompiledAnswers::Build(snapshot, ResponderConfig{}, 1 << 20) : nullptr);
  const std::vector<uint8_t> query = testing::MakeQuery(q.name, q.type, {.edns = true});
  std::vector<uint8_t> out(65535);
  size_t bytes = 0;
  for (auto _ : state) {
    const Response r = responder.Respond(query, absl::MakeSpan(out), {});
    bytes = r.size;
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string(q.name) + " " + q.type + " -> " + std::to_string(bytes) + " B" +
                 (state.range(1) ? " precompiled" : " rendered"));
}
BENCHMARK(BM_Respond)->ArgsProduct({{0, 1, 2, 3, 4}, {0, 1}});

// The same over the signed example.org (NSEC3, tests/data/dnssec), with the DO bit: a
// positive answer with its RRSIGs, an NXDOMAIN with its three NSEC3 (one hash per query), a
// wildcard answer with its proof; and the positive answer without DO for comparison.
constexpr BenchQuery kSignedQueries[] = {
    {"www.example.org", "A"},
    {"nx.example.org", "A"},
    {"foo.wild.example.org", "TXT"},
};

void BM_RespondSigned(benchmark::State& state) {
  std::ifstream in(std::string(ONEPASS_SOURCE_DIR) + "/tests/data/dnssec/example.org.signed");
  std::ostringstream text;
  text << in.rdbuf();
  auto snapshot = BuildSnapshot({ZoneSource{"example.org.signed", text.str()}});
  if (!snapshot.ok()) {
    state.SkipWithError("tests/data/dnssec/example.org.signed does not load");
    return;
  }
  const bool dnssec_ok = state.range(0) < 3;
  const BenchQuery& q = kSignedQueries[dnssec_ok ? state.range(0) : 0];
  DnsResponder responder(
      *snapshot, ResponderConfig{},
      state.range(1) ? PrecompiledAnswers::Build(*snapshot, ResponderConfig{}, 1 << 24) : nullptr);
  const std::vector<uint8_t> query =
      testing::MakeQuery(q.name, q.type, {.edns = true, .do_bit = dnssec_ok});
  std::vector<uint8_t> out(65535);
  size_t bytes = 0;
  for (auto _ : state) {
    const Response r = responder.Respond(query, absl::MakeSpan(out), {});
    bytes = r.size;
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string(q.name) + " " + q.type + (dnssec_ok ? " DO" : " no DO") + " -> " +
                 std::to_string(bytes) + " B" + (state.range(1) ? " precompiled" : " rendered"));
}
BENCHMARK(BM_RespondSigned)->ArgsProduct({{0, 1, 2, 3}, {0, 1}});

// What the server pays per connection: one Process call on a framed query.
void BM_HandlerProcess(benchmark::State& state) {
  const BenchQuery& q = kQueries[state.range(0)];
  DnsHandlerFactory factory(testing::DefaultSnapshot(), ResponderConfig{});
  HandlerCounters counters(factory.Counters().size());
  auto handler = factory.CreateHandler(counters);
  OutputBuffer out(factory.OutputBufferBytes());
  const std::vector<uint8_t> input = testing::Framed(testing::MakeQuery(q.name, q.type));
  const RequestContext context;
  for (auto _ : state) {
    out.Clear();
    const Verdict v = handler->Process(input, context, out);
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string(q.name) + " " + q.type + " (factory default: precompiled)");
}
BENCHMARK(BM_HandlerProcess)->DenseRange(0, 2);

// Query cost on a large zone with random names (cache misses, as in production): 1,000,000
// names (LargeZoneNames) shaped as scripts/gen-dns-zone.py makes them (A, some AAAA/MX/TXT, CNAMEs,
// delegations), asked in a random order. range(0): precompile budget in MiB (0: off). This is
// what chose the default of --dns_precompile_max_mb.
std::shared_ptr<const ZoneSnapshot> LargeSnapshot() {
  static std::shared_ptr<const ZoneSnapshot> snapshot = [] {
    std::string text =
        "$ORIGIN bench.test.\n$TTL 3600\n@ IN SOA ns1 hm 1 7200 3600 1209600 300\n"
        "@ IN NS ns1\n@ IN NS ns2\nns1 IN A 192.0.2.53\nns2 IN A 198.51.100.53\n"
        "mail IN A 192.0.2.25\n";
    const int names = LargeZoneNames();
    for (int i = 0; i < names; ++i) {
      const std::string name = "n" + std::to_string(i);
      if (i % 500 == 499) {
        text += name + " IN NS ns." + name + "\nns." + name + " IN A 192.0.2.1\n";
      } else if (i % 50 == 49) {
        text += name + " IN CNAME n" + std::to_string((int64_t{i} * 7919) % names) + "\n";
      } else {
        text += name + " IN A 10." + std::to_string(i >> 16 & 255) + "." +
                std::to_string(i >> 8 & 255) + "." + std::to_string(i & 255) + "\n";
        if (i % 4 == 0) text += name + " IN AAAA 2001:db8::" + std::to_string(i % 9999) + "\n";
        if (i % 10 == 0) text += name + " IN MX 10 mail\n";
      }
    }
    auto built = BuildSnapshot({ZoneSource{"large", std::move(text)}});
    return built.ok() ? *built : nullptr;
  }();
  return snapshot;
}

void BM_RespondLargeZoneRandom(benchmark::State& state) {
  auto snapshot = LargeSnapshot();
  if (snapshot == nullptr) {
    state.SkipWithError("the generated zone does not load");
    return;
  }
  const size_t budget = static_cast<size_t>(state.range(0)) << 20;
  auto precompiled =
      budget > 0 ? PrecompiledAnswers::Build(snapshot, ResponderConfig{}, budget) : nullptr;
  DnsResponder responder(snapshot, ResponderConfig{}, precompiled);
  std::vector<std::vector<uint8_t>> queries;
  uint64_t x = 88172645463325252ull;  // xorshift: the same names every run
  for (int i = 0; i < 65536; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    queries.push_back(testing::MakeQuery(
        "n" + std::to_string(x % static_cast<uint64_t>(LargeZoneNames())) + ".bench.test", "A",
        {.edns = true}));
  }
  std::vector<uint8_t> out(65535);
  size_t i = 0;
  for (auto _ : state) {
    const Response r = responder.Respond(queries[i++ & 65535], absl::MakeSpan(out), {});
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(budget == 0 ? "rendered"
                             : "precompiled " + std::to_string(precompiled->count()) +
                                   " answers, " + std::to_string(precompiled->bytes() >> 20) +
                                   " MiB" + (precompiled->complete() ? "" : " (budget reached)"));
}
BENCHMARK(BM_RespondLargeZoneRandom)->Arg(0)->Arg(64)->Arg(1024)->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace onepass::dns

BENCHMARK_MAIN();
