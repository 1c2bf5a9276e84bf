// What the frontend's end-to-end tests share (dns_frontend_test, dns_frontend_unbound_test,
// dns_frontend_stale_test, ...): onepassd started as a frontend of loopback backends, one UDP
// exchange straight with a backend, and the byte-for-byte corpus check.
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_FRONTEND_SUPPORT_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_FRONTEND_SUPPORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/integration/dns/differential_corpus.h"
#include "tests/support/server_process.h"

namespace onepass::dns::testing {

// "127.0.0.1:PORT", as --dns-backend takes it.
std::string LoopbackBackend(int port);

// onepassd --handler dns, one worker, on a free loopback port, with --dns-backend for each of
// `backends` and the `extra` flags, serving loopback clients only (--allow-from), as a
// frontend should: so it asks its backends nothing at start-up (no open-resolver probe,
// handlers/dns/open_resolver_probe.h), and they see only the queries the test sends.
absl::StatusOr<std::unique_ptr<onepass::testing::ServerProcess>> StartFrontend(
    const std::vector<std::string>& backends, const std::vector<std::string>& extra = {});

// One UDP query to 127.0.0.1:`port`, its one reply (2 s at most).
absl::StatusOr<std::vector<uint8_t>> ExchangeUdp(int port, const std::vector<uint8_t>& query);

// True when `through` are the TTLs `direct` after at most `max_age` in a cache: as many, each
// no larger and smaller by at most max_age (whole seconds, rounded up).
bool TtlsAged(const std::vector<uint32_t>& through, const std::vector<uint32_t>& direct,
              absl::Duration max_age);

// True when the message `through` is `direct` byte for byte but for the TTLs of its records
// (the OPT's field aside), aged by at most `max_age` (TtlsAged).
bool IsAgedCopy(const std::vector<uint8_t>& through, const std::vector<uint8_t>& direct,
                absl::Duration max_age);

// Every query of `corpus`, sent over TCP through the frontend at `frontend_port`, gets byte for
// byte the answer the backend at `backend_port` gives over UDP to the same query (same ID).
// With `cached` each is asked twice: the second answer comes from the cache and must be the
// same, and either may carry TTLs aged since an earlier query (a case variant) filled the
// cache, by no more than the time since the check began. Failures are reported with EXPECT;
// returns the number of answers compared.
int ExpectBytesAgree(int frontend_port, int backend_port, const std::vector<CorpusQuery>& corpus,
                     bool cached);

// The sample `name` (exact, labels included: onepass_dns_frontend_cache_total{result="hit"})
// from the frontend's /metrics (needs --metrics-listen); -1 when absent.
double FrontendMetric(const onepass::testing::ServerProcess& frontend, const std::string& name);

// The frontend's dns_frontend_cache counter for `result` (hit, miss, stale) from its /metrics
// (needs --metrics-listen).
double CacheCounter(const onepass::testing::ServerProcess& frontend, const std::string& result);

// Waits (at most `limit`) until the frontend's marked_down event counter reaches `count`
// (needs --metrics-listen): a backend is marked down by its failed probes, some time after the
// client queries that made it suspect.
bool WaitMarkedDown(const onepass::testing::ServerProcess& frontend, double count,
                    absl::Duration limit = absl::Seconds(5));

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_FRONTEND_SUPPORT_H_
