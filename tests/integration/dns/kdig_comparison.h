// kdig's view of DNS answers, to check that a frontend changes nothing: the same query sent
// with `kdig +notcp` straight to a UDP backend and with `kdig +tcp` through onepassd's frontend
// must print the same header, EDNS pseudo-section and sections. Only what must differ is left
// out: the ID (kdig draws it at random) and the timing lines (not printed: +noall). kdig
// prints names lowercased, so the byte-for-byte checks in the tests cover the client's case.
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_KDIG_COMPARISON_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_KDIG_COMPARISON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/integration/dns/differential_corpus.h"

namespace onepass::dns::testing {

// kdig's arguments for a corpus query: name, type, class, +edns/+dnssec/+norec/+cdflag and
// the keepalive option; nullopt for the types kdig sends only over TCP (AXFR, IXFR).
std::optional<std::vector<std::string>> KdigQueryArgs(const CorpusQuery& q);

// What kdig prints for `query` asked of 127.0.0.1:`port` over TCP, or over UDP with +ignore
// (a truncated answer printed as it came, not retried over TCP): header, EDNS, question,
// answer, authority, additional, with the header's ID dropped. An error when kdig could not
// run or printed no header (no answer within 2 s).
absl::StatusOr<std::string> KdigAnswer(int port, bool tcp, const std::vector<std::string>& query);
// The same with kdig's transport options given (e.g. {"+tls", "+tls-ca=FILE"}).
absl::StatusOr<std::string> KdigAnswer(int port, const std::vector<std::string>& transport,
                                       const std::vector<std::string>& query);

// kdig's printout split in two: the text with each record's TTL replaced by "TTL", and the
// TTLs in order (the TTLs of a cached answer age).
struct KdigTtls {
  std::string text;
  std::vector<uint32_t> ttls;
};
KdigTtls SplitTtls(absl::string_view text);

// For every query of `corpus` kdig can send: kdig +notcp to the backend at `backend_port` and
// kdig +tcp to the frontend at `frontend_port` print the same. With `cached`, the frontend is
// asked twice and the second answer (from its cache) must be the same too; either may carry
// TTLs aged since an earlier query (a case variant) filled the cache, by no more than the time
// since the check began. Failures are reported with EXPECT; returns the number of frontend
// answers compared.
int ExpectKdigAgrees(int frontend_port, int backend_port, const std::vector<CorpusQuery>& corpus,
                     bool cached);

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_KDIG_COMPARISON_H_
