// Answers through a resolver that forwards to onepassd, held to onepassd's own answers: what a
// forwarding resolver (Unbound, Knot Resolver) passes on unchanged, and what it may change.
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_RESOLVER_COMPARISON_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_RESOLVER_COMPARISON_H_

#include <vector>

#include "tests/integration/dns/differential_corpus.h"

namespace onepass::dns::testing {

// Every query of `corpus`, asked of the resolver at 127.0.0.1:`resolver_port` over UDP, gets
// onepassd's own answer (over TCP to 127.0.0.1:`onepassd_port`, asked first): the same RCODE,
// the same answer section and the same SOA in the authority section (NXDOMAIN, NODATA), each
// TTL lower by no more than the time since the first query (the resolver's cache), or higher
// by one second (frontend mode: onepassd's own answer aged in its cache, the two caches
// rounding their ages apart). Not compared: the flags (a resolver sets RA and clears AA), the
// rest of the authority section and the additional section (a resolver's minimal responses).
// Failures are reported with EXPECT; returns the number of answers compared.
int ExpectResolverAgrees(int resolver_port, int onepassd_port,
                         const std::vector<CorpusQuery>& corpus);

// `count` queries of distinct names under example.com's wildcard *.wild (burst0.wild...),
// asked of the resolver at 127.0.0.1:`port` over UDP at once (a thread each, released
// together) for it to send on together; how many got the wildcard's one A record
// (192.0.2.100), each other one reported with ADD_FAILURE.
int AskBurst(int port, int count);

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_RESOLVER_COMPARISON_H_
