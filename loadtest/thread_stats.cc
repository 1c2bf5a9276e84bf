#include "loadtest/thread_stats.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace onepass::load {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kRefused:
      return "refused";
    case ErrorKind::kReset:
      return "reset";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kConnectError:
      return "connect_error";
    case ErrorKind::kNoSourcePort:
      return "no_source_port";
    case ErrorKind::kLocalError:
      return "local_error";
    case ErrorKind::kShort:
      return "short";
    case ErrorKind::kWrong:
      return "wrong";
    case ErrorKind::kTlsVerify:
      return "tls_verify";
    case ErrorKind::kTlsHandshake:
      return "tls_handshake";
    case ErrorKind::kTlsError:
      return "tls_error";
  }
  return "?";
}

void TlsCounts::Merge(const TlsCounts& other) {
  started += other.started;
  full += other.full;
  resumed += other.resumed;
  failed += other.failed;
  resume_offered += other.resume_offered;
  tls13 += other.tls13;
  alpn_dot += other.alpn_dot;
  handshake_latency.Merge(other.handshake_latency);
  answer_latency.Merge(other.answer_latency);
}

uint64_t ThreadStats::errors_total() const {
  uint64_t total = 0;
  for (uint64_t count : errors) total += count;
  return total;
}

void ThreadStats::AddReason(const char* reason) {
  for (ReasonCount& entry : reasons) {
    if (entry.reason == reason || std::strcmp(entry.reason, reason) == 0) {
      ++entry.count;
      return;
    }
  }
  reasons.push_back({reason, 1});
}

void ThreadStats::Merge(const ThreadStats& other, size_t max_samples) {
  started += other.started;
  ok += other.ok;
  for (int i = 0; i < kErrorKindCount; ++i) errors[i] += other.errors[i];
  latency.Merge(other.latency);
  start_lag.Merge(other.start_lag);
  late_starts += other.late_starts;
  inflight_cap_waits += other.inflight_cap_waits;
  unstarted += other.unstarted;
  for (const ReasonCount& entry : other.reasons) {
    bool found = false;
    for (ReasonCount& mine : reasons) {
      if (std::strcmp(mine.reason, entry.reason) == 0) {
        mine.count += entry.count;
        found = true;
        break;
      }
    }
    if (!found) reasons.push_back(entry);
  }
  for (const std::string& sample : other.samples) {
    if (samples.size() < max_samples) samples.push_back(sample);
  }
  for (const std::string& sample : other.local_error_samples) {
    if (local_error_samples.size() < max_samples) local_error_samples.push_back(sample);
  }
  queries_sent += other.queries_sent;
  queries_ok += other.queries_ok;
  query_latency.Merge(other.query_latency);
  bytes_sent += other.bytes_sent;
  bytes_received += other.bytes_received;
  cpu_ns += other.cpu_ns;
  sched_ns += other.sched_ns;
  wall_ns = std::max(wall_ns, other.wall_ns);
  tls.Merge(other.tls);
}

ErrorKind ErrorKindOfErrno(int error, bool connecting) {
  switch (error) {
    case ECONNREFUSED:
      return ErrorKind::kRefused;
    case ECONNRESET:
    case EPIPE:
    case ECONNABORTED:
      return ErrorKind::kReset;
    case ETIMEDOUT:
      return ErrorKind::kTimeout;
    case EADDRNOTAVAIL:
    case EADDRINUSE:
      return ErrorKind::kNoSourcePort;
    case EMFILE:
    case ENFILE:
    case ENOBUFS:
    case ENOMEM:
      return ErrorKind::kLocalError;
    default:
      return connecting ? ErrorKind::kConnectError : ErrorKind::kReset;
  }
}

void RecordReason(const char* reason, const std::string& detail, size_t max_samples,
                  ThreadStats* stats) {
  stats->AddReason(reason);
  if (stats->samples.size() < max_samples) {
    stats->samples.push_back(detail.empty() ? std::string(reason)
                                            : absl::StrCat(reason, ": ", detail));
  }
}

ErrorKind RecordMismatch(const CheckResult& result, size_t max_samples, ThreadStats* stats) {
  RecordReason(result.reason, result.detail, max_samples, stats);
  return result.verdict == Verdict::kShort ? ErrorKind::kShort : ErrorKind::kWrong;
}

void RecordLocalErrno(ErrorKind kind, int error, size_t max_samples, ThreadStats* stats) {
  if ((kind == ErrorKind::kLocalError || kind == ErrorKind::kConnectError) &&
      stats->local_error_samples.size() < max_samples) {
    stats->local_error_samples.push_back(std::strerror(error));
  }
}

}  // namespace onepass::load
