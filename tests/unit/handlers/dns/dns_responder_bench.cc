// Queries per second of the DNS responder and of the whole handler (framer + responder +
// session) on one core, for the answers that dominate real traffic: an exact A answer, an
// NXDOMAIN and a referral. Run: build/<dir>/tests/unit/handlers/dns/dns_responder_bench
#include <benchmark/benchmark.h>

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
    const Response r = responder.Respond(query, absl::MakeSpan(out), 0);
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
    const Response r = responder.Respond(query, absl::MakeSpan(out), 0);
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

}  // namespace
}  // namespace onepass::dns

BENCHMARK_MAIN();
