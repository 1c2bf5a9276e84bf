// The hot path allocates nothing: after one warm-up query per kind, Process() on the handler
// (framer, parser, planner, writer, precompiled or rendered) makes no heap allocation.
// This binary replaces the global operator new to count.
#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "handlers/dns/dns_handler.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

// GCC 12 at -O1 and above sees the replaced new (malloc) and delete (free) inlined into one
// another's callers and warns of a mismatch that is not there: they are a matched pair.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<long> allocations{0};
}  // namespace

void* operator new(size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace onepass::dns {
namespace {

TEST(DnsAllocationTest, ProcessAllocatesNothingAfterWarmUp) {
  struct Q {
    const char* name;
    const char* type;
    testing::QueryOptions options;
  };
  const std::vector<Q> queries = {
      {"www.example.com", "A", {}},  // precompiled
      {"WWW.example.COM", "AAAA", {.edns = true, .do_bit = true}},
      {"nx.example.com", "A", {}},                  // NXDOMAIN, rendered
      {"host.sub.example.com", "A", {}},            // referral, rendered
      {"x.wild.example.com", "MX", {}},             // wildcard + additional, rendered
      {"alias.example.com", "A", {.qclass = 255}},  // CNAME chain, class ANY, rendered
      {"example.org", "A", {.edns = true}},         // REFUSED + EDE
      {"www.example.com", "A", {.edns = true, .edns_version = 1}},  // BADVERS
  };
  DnsHandlerFactory factory(testing::DefaultSnapshot(), ResponderConfig{});
  HandlerCounters counters(factory.Counters().size());
  auto handler = factory.CreateHandler(counters);
  OutputBuffer out(factory.OutputBufferBytes());
  std::vector<std::vector<uint8_t>> inputs;
  for (const Q& q : queries)
    inputs.push_back(testing::Framed(testing::MakeQuery(q.name, q.type, q.options)));
  RequestContext context;
  {  // the counter works (the replacement operator new is the one linked)
    const long before = allocations.load();
    auto probe = std::make_unique<std::string>(100, 'x');
    EXPECT_GT(allocations.load(), before);
  }
  for (const auto& input : inputs) {  // warm-up
    out.Clear();
    handler->Process(input, context, out);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    out.Clear();
    const long before = allocations.load();
    const Verdict v = handler->Process(inputs[i], context, out);
    const long after = allocations.load();
    EXPECT_EQ(after - before, 0) << queries[i].name << " " << queries[i].type;
    EXPECT_EQ(v.action, Action::kWriteThenClose);
    EXPECT_FALSE(out.empty());
  }
}

}  // namespace
}  // namespace onepass::dns
