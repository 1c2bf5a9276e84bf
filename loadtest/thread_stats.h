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
};
inline constexpr int kErrorKindCount = 8;
const char* ErrorKindName(ErrorKind kind);  // "refused", "no_source_port", ...

struct ReasonCount {
  const char* reason;  // static string from CheckResult
  uint64_t count;
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

  static constexpr int64_t kLateStartNs = 1'000'000;

  uint64_t errors_total() const;
  uint64_t completed() const { return ok + errors_total(); }
  void AddReason(const char* reason);
  void Merge(const ThreadStats& other, size_t max_samples);
};

// The error kind of a failed socket call; `connecting`: before the connection was made.
ErrorKind ErrorKindOfErrno(int error, bool connecting);

// Counts a failed transaction (kShort or kWrong verdict): its reason, and a sample with
// details while fewer than `max_samples` are kept. Returns the error kind to count.
ErrorKind RecordMismatch(const CheckResult& result, size_t max_samples, ThreadStats* stats);

// Keeps the errno text of a local or connect error while fewer than `max_samples` are kept.
void RecordLocalErrno(ErrorKind kind, int error, size_t max_samples, ThreadStats* stats);

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_THREAD_STATS_H_
