// The counters of the DNS-over-TCP frontend (--dns-backend): those of the whole handler, by
// index in kFrontendCounters, then kBackendCounters once per backend (label
// backend="ADDR:PORT"), so that what a backend's rate limiting looks like (the shares of UDP
// timeouts and TC=1 answers among the queries sent to it) reads from /metrics per backend,
// apart from its being down (docs/operations.md "One address, both transports").
#ifndef ONEPASS_HANDLERS_DNS_FRONTEND_COUNTERS_H_
#define ONEPASS_HANDLERS_DNS_FRONTEND_COUNTERS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "handlers/handler_counters.h"

namespace onepass::dns {

// The whole handler's counters in index order: the enum FrontendCounter indexes the table
// kFrontendCounters.
#define ONEPASS_FRONTEND_COUNTERS(COUNTER, GAUGE)                                                 \
  COUNTER(kForwarded, "dns_frontend_queries", "outcome", "forwarded",                             \
          "queries sent to a backend over UDP")                                                   \
  COUNTER(kAnswered, "dns_frontend_queries", "outcome", "answered",                               \
          "backend answers returned to clients")                                                  \
  COUNTER(kTimeoutServfail, "dns_frontend_queries", "outcome", "timeout_servfail",                \
          "SERVFAIL after --dns-backend-timeout-ms without an answer")                            \
  COUNTER(kAllDownServfail, "dns_frontend_queries", "outcome", "all_down_servfail",               \
          "SERVFAIL at once: every backend was marked down")                                      \
  COUNTER(kWindowFullRefused, "dns_frontend_queries", "outcome", "window_full_refused",           \
          "REFUSED at once: the worker had --dns-max-in-flight queries outstanding")              \
  COUNTER(kLateOrUnknownId, "dns_frontend_replies_dropped", "reason", "late_or_unknown_id",       \
          "backend datagrams with an ID not in flight (late after a timeout, or forged)")         \
  COUNTER(kWrongQuestion, "dns_frontend_replies_dropped", "reason", "wrong_question",             \
          "backend datagrams whose question differs from the query sent (forged)")                \
  COUNTER(kMalformedReply, "dns_frontend_replies_dropped", "reason", "malformed",                 \
          "backend datagrams that are no reply")                                                  \
  COUNTER(kMarkedDown, "dns_frontend_backend_events", "event", "marked_down",                     \
          "a backend marked down after --dns-backend-down-after failed probes in a row")          \
  COUNTER(kMarkedUp, "dns_frontend_backend_events", "event", "marked_up",                         \
          "a down backend answered again")                                                        \
  COUNTER(kProbesSent, "dns_frontend_backend_events", "event", "probe_sent",                      \
          "SOA probes sent to down backends, and to up ones after a client query timed out")      \
  COUNTER(kCacheHits, "dns_frontend_cache", "result", "hit",                                      \
          "queries answered from the worker's cache")                                             \
  COUNTER(kCacheMisses, "dns_frontend_cache", "result", "miss",                                   \
          "cacheable queries not in the cache")                                                   \
  COUNTER(                                                                                        \
      kTruncatedPassed, "dns_frontend_queries", "outcome", "truncated_passed",                    \
      "backend answers with TC=1 passed to the client as they are: only ones that came over TCP") \
  COUNTER(kTcpRetried, "dns_frontend_tcp_retries", "result", "sent",                              \
          "UDP answers with TC=1 retried over TCP to the same backend (many: a backend's RRL "    \
          "slips answers to the frontend)")                                                       \
  COUNTER(kTcpAnswered, "dns_frontend_tcp_retries", "result", "answered",                         \
          "TCP retries whose full answer went to the client")                                     \
  COUNTER(kTcpFailed, "dns_frontend_tcp_retries", "result", "failed",                             \
          "TCP retries with no answer within --dns-backend-timeout-ms (SERVFAIL, or a stale "     \
          "answer with --dns-serve-stale-seconds)")                                               \
  COUNTER(kCacheStale, "dns_frontend_cache", "result", "stale",                                   \
          "expired answers served with TTL 30 while every backend was down (RFC 8767, "           \
          "--dns-serve-stale-seconds)")                                                           \
  COUNTER(kStaleClientTimeout, "dns_frontend_cache", "result", "stale_client_timeout",            \
          "expired answers served with TTL 30 because the backend had not answered within "       \
          "--dns-stale-answer-client-timeout-ms (RFC 8767 client-response timer)")                \
  COUNTER(kStaleRefreshFailed, "dns_frontend_cache", "result", "stale_refresh_failed",            \
          "expired answers served with TTL 30 because asking the backend failed (deadline, "      \
          "SERVFAIL), or had failed less than --dns-stale-refresh-seconds ago (RFC 8767 §4)")     \
  COUNTER(kRefreshedAfterStale, "dns_frontend_queries", "outcome", "refreshed_after_stale",       \
          "backend answers that only refreshed the cache: the client already had the stale one")  \
  COUNTER(kUdpTimeoutRetried, "dns_frontend_tcp_retries", "result", "udp_timeout",                \
          "queries unanswered over UDP within --dns-backend-udp-timeout-ms, sent again over TCP " \
          "(many: a backend rate-limits the frontend's UDP, e.g. RRL; docs/operations.md)")       \
  COUNTER(kProbeFailed, "dns_frontend_backend_events", "event", "probe_failed",                   \
          "probes unanswered within --dns-backend-timeout-ms")                                    \
  COUNTER(kReloadServfail, "dns_frontend_queries", "outcome", "reload_servfail",                  \
          "SERVFAIL at once: a reload dropped the backend the query waited on")
ONEPASS_HANDLER_COUNTERS(FrontendCounter, kFrontendCounters, ONEPASS_FRONTEND_COUNTERS)

// The counters of each backend, in index order (BackendCounterIndex); FrontendCounterSpecs
// scopes them with backend="ADDR:PORT".
#define ONEPASS_BACKEND_COUNTERS(COUNTER, GAUGE)                                                  \
  COUNTER(kForwarded, "dns_frontend_backend_queries", "outcome", "forwarded",                     \
          "client queries sent to the backend")                                                   \
  COUNTER(kAnswered, "dns_frontend_backend_queries", "outcome", "answered",                       \
          "its answers returned to clients (over UDP, or over TCP after a retry)")                \
  COUNTER(kUdpTimeout, "dns_frontend_backend_queries", "outcome", "udp_timeout",                  \
          "queries it left unanswered over UDP for --dns-backend-udp-timeout-ms, retried over "   \
          "TCP (a rate limit that drops)")                                                        \
  COUNTER(                                                                                        \
      kTruncated, "dns_frontend_backend_queries", "outcome", "truncated",                         \
      "its UDP answers with TC=1, retried over TCP (a rate limit that slips, or a large answer)") \
  COUNTER(kTimeoutServfail, "dns_frontend_backend_queries", "outcome", "timeout_servfail",        \
          "queries it left unanswered for --dns-backend-timeout-ms: SERVFAIL")                    \
  COUNTER(kProbesSent, "dns_frontend_backend_probes", "result", "sent",                           \
          "SOA probes sent to the backend")                                                       \
  COUNTER(kProbesFailed, "dns_frontend_backend_probes", "result", "failed",                       \
          "its probes unanswered within --dns-backend-timeout-ms")                                \
  GAUGE(kDown, "dns_frontend_backend_down", "", "",                                               \
        "workers that hold the backend down now (0: up; each worker judges on its own probes)")
ONEPASS_HANDLER_COUNTERS(BackendCounter, kBackendCounters, ONEPASS_BACKEND_COUNTERS)

// The index of `counter` of the `backend`-th backend in FrontendCounterSpecs.
constexpr size_t BackendCounterIndex(size_t backend, BackendCounter counter) {
  return static_cast<size_t>(FrontendCounter::kCount) +
         backend * static_cast<size_t>(BackendCounter::kCount) + static_cast<size_t>(counter);
}

// How many counters a frontend of `backends` backends keeps (FrontendCounterSpecs().size()).
constexpr size_t FrontendCounterCount(size_t backends) {
  return BackendCounterIndex(backends, BackendCounter::kForwarded);
}

// kFrontendCounters, then kBackendCounters for each of `backends` (as "ADDR:PORT", by slot:
// --dns-backend order, or --dns-backends-file's slots) with backend="ADDR:PORT"; an empty
// name is a vacant slot, its specs not exported (handlers/handler_counters.h Exported). In
// storage that lives as long as the process, one list per distinct `backends`:
// HandlerFactory::Counters promises the server a list it can keep past the factory (a reload
// with the same backends gets the same list). So each distinct slot layout a reload brings
// costs about 100 bytes per counter (16 slots: 16 KB) for the rest of the process: nothing for
// a reload that leaves the backends alone, 16 MB after a thousand different layouts.
// Thread-safe.
absl::Span<const CounterSpec> FrontendCounterSpecs(const std::vector<std::string>& backends);

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_FRONTEND_COUNTERS_H_
