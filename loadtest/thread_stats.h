// What one client thread counts (and the run merges): transactions by outcome, error kinds,
// latency, bytes, CPU; plus the rules every client core shares for turning an errno or a
// checker's verdict into those counts, so that both cores count alike by construction.
#ifndef ONEPASS_LOADTEST_THREAD_STATS_H_
#define ONEPASS_LOADTEST_THREAD_STATS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "loadtest/histogram.h"
#include "loadtest/protocol.h"

namespace onepass::load {

// Every way a transaction can fail, each counted on its own.
enum class ErrorKind {
  kRefused,       // connect: ECONNREFUSED (nothing listening, or the backlog overflowed)
  kReset,         // ECONNRESET / EPIPE after connecting
  kTimeout,       // no whole response within --timeout-ms (or connect timed out)
  kConnectError,  // any other connect failure (EHOSTUNREACH, ENETUNREACH, ...)
  kNoSourcePort,  // EADDRNOTAVAIL: the client ran out of ephemeral ports for the 4-tuple
  kLocalError,    // the client's own limits: EMFILE, ENOBUFS, ...
  kShort,         // the server closed before a whole response
  kWrong,         // a whole response that is not the right answer
  kTlsVerify,     // --proto dot: the server's certificate failed verification (--tls-ca)
  kTlsHandshake,  // --proto dot: any other failed handshake (an alert, a protocol error, a close)
  kTlsError,      // --proto dot: a TLS failure after the handshake (a bad record, an alert)
};
inline constexpr int kErrorKindCount = 11;
const char* ErrorKindName(ErrorKind kind);  // "refused", "no_source_port", ...

struct ReasonCount {
  const char* reason;  // static string from CheckResult
  uint64_t count;
};

// --proto dot: the TLS handshakes of the connections that got past their TCP connect.
struct TlsCounts {
  uint64_t started = 0;         // handshakes begun (ClientHello sent)
  uint64_t full = 0;            // completed without resumption
  uint64_t resumed = 0;         // completed resuming a ticket (SSL_session_reused)
  uint64_t failed = 0;          // ended before completing: any error kind, timeouts included
  uint64_t resume_offered = 0;  // ClientHellos that offered a ticket (--tls-resume)
  uint64_t tls13 = 0;           // completed with TLS 1.3
  uint64_t alpn_dot = 0;        // completed with "dot" selected (RFC 7858 §3.1)
  Histogram handshake_latency;  // from the connect's start to the handshake's end [ns]
  Histogram answer_latency;     // from the handshake's end to the last answer [ns]

  uint64_t completed() const { return full + resumed; }
  void Merge(const TlsCounts& other);
};

struct ThreadStats {
  uint64_t started = 0;
  uint64_t ok = 0;
  std::array<uint64_t, kErrorKindCount> errors{};
  Histogram latency;         // successful transactions [ns]; open loop: from the intended start
  Histogram start_lag;       // open loop: actual minus intended start [ns]
  uint64_t late_starts = 0;  // started more than kLateStartNs after the intended time
  uint64_t inflight_cap_waits = 0;   // starts delayed by --max-inflight
  uint64_t unstarted = 0;            // open loop: intended starts never made before the end
  std::vector<ReasonCount> reasons;  // short/wrong answers by reason
  std::vector<std::string> samples;  // the first few mismatches, with details
  std::vector<std::string> local_error_samples;  // first few local errno texts
  // Queries (DNS messages, requests) apart from connections: with --queries-per-conn N a
  // connection carries N; with one each, these equal started and ok.
  uint64_t queries_sent = 0;
  uint64_t queries_ok = 0;  // answers judged right
  Histogram query_latency;  // each answer from its query's send [ns] (first: from the start)
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  int64_t cpu_ns = 0;    // this thread's CPU time (user + system)
  int64_t sched_ns = 0;  // the same from /proc schedstat (cpu_accounting.h), as the server's
  int64_t wall_ns = 0;   // this thread's running time
  int cpu = -1;          // the CPU it was pinned to, or -1
  TlsCounts tls;         // --proto dot only

  static constexpr int64_t kLateStartNs = 1'000'000;

  uint64_t errors_total() const;
  uint64_t completed() const { return ok + errors_total(); }
  void AddReason(const char* reason);
  void Merge(const ThreadStats& other, size_t max_samples);
};

// The error kind of a failed socket call; `connecting`: before the connection was made.
ErrorKind ErrorKindOfErrno(int error, bool connecting);

// Counts `reason` (static storage) and keeps it with `detail` as a sample while fewer than
// `max_samples` are kept.
void RecordReason(const char* reason, const std::string& detail, size_t max_samples,
                  ThreadStats* stats);

// Counts a failed transaction (kShort or kWrong verdict): its reason, and a sample with
// details while fewer than `max_samples` are kept. Returns the error kind to count.
ErrorKind RecordMismatch(const CheckResult& result, size_t max_samples, ThreadStats* stats);

// Keeps the errno text of a local or connect error while fewer than `max_samples` are kept.
void RecordLocalErrno(ErrorKind kind, int error, size_t max_samples, ThreadStats* stats);

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_THREAD_STATS_H_
