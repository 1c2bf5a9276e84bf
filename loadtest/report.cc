#include "loadtest/report.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace onepass::load {
namespace {

double Us(uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string LatencyJson(const Histogram& h) {
  return absl::StrFormat(
      "{\"count\": %d, \"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f, \"p99_9\": %.1f, "
      "\"max\": %.1f, \"mean\": %.1f}",
      h.count(), Us(h.ValueAtPercentile(50)), Us(h.ValueAtPercentile(90)),
      Us(h.ValueAtPercentile(99)), Us(h.ValueAtPercentile(99.9)), Us(h.max()), h.Mean() / 1000.0);
}

// Resumed handshakes among the completed ones (0 when none completed).
double ResumedShare(const TlsCounts& tls) {
  return tls.completed() == 0
             ? 0.0
             : static_cast<double>(tls.resumed) / static_cast<double>(tls.completed());
}

std::string TlsJson(const RunResult& result) {
  if (!result.tls) return "";
  const TlsCounts& tls = result.total.tls;
  return absl::StrFormat(
      ", \"tls\": {\"handshakes\": %d, \"full\": %d, \"resumed\": %d, \"resumed_share\": %.4f, "
      "\"resume_offered\": %d, \"failed\": %d, \"tls13\": %d, \"alpn_dot\": %d, "
      "\"handshakes_per_s\": %.1f, \"handshake_us\": %s, \"answer_us\": %s}",
      tls.started, tls.full, tls.resumed, ResumedShare(tls), tls.resume_offered, tls.failed,
      tls.tls13, tls.alpn_dot, result.wall_s > 0 ? tls.completed() / result.wall_s : 0.0,
      LatencyJson(tls.handshake_latency), LatencyJson(tls.answer_latency));
}

std::string ResultJsonFields(const RunResult& result) {
  const ThreadStats& total = result.total;
  std::string errors = absl::StrFormat("{\"total\": %d", total.errors_total());
  for (int i = 0; i < kErrorKindCount; ++i) {
    absl::StrAppendFormat(&errors, ", \"%s\": %d", ErrorKindName(static_cast<ErrorKind>(i)),
                          total.errors[i]);
  }
  errors += "}";
  std::vector<std::string> reasons;
  for (const ReasonCount& entry : total.reasons) {
    reasons.push_back(absl::StrFormat("\"%s\": %d", JsonEscape(entry.reason), entry.count));
  }
  std::vector<std::string> samples;
  for (const std::string& sample : total.samples) {
    samples.push_back(absl::StrCat("\"", JsonEscape(sample), "\""));
  }
  std::vector<std::string> threads;
  for (const ThreadStats& thread : result.threads) {
    threads.push_back(absl::StrFormat(
        "{\"cpu\": %d, \"cpu_s\": %.3f, \"cpu_ratio\": %.3f, \"completed\": %d}", thread.cpu,
        thread.cpu_ns / 1e9, result.wall_s > 0 ? thread.cpu_ns / 1e9 / result.wall_s : 0.0,
        thread.completed()));
  }
  std::vector<std::string> notes;
  for (const std::string& note : result.client_notes) {
    notes.push_back(absl::StrCat("\"", JsonEscape(note), "\""));
  }
  return absl::StrFormat(
      "\"requested_rate\": %.1f, \"concurrency\": %d, \"wall_s\": %.3f, "
      "\"achieved_conn_per_s\": %.1f, \"ok_per_s\": %.1f, \"started\": %d, \"completed\": %d, "
      "\"ok\": %d, \"success_ratio\": %.6f, \"errors\": %s, \"mismatch_reasons\": {%s}, "
      "\"mismatch_samples\": [%s], \"latency_us\": %s, \"start_lag_us\": %s, "
      "\"late_starts\": %d, \"unstarted\": %d, \"inflight_cap_waits\": %d, "
      "\"bytes_sent\": %d, \"bytes_received\": %d, "
      "\"client\": {\"process_cpu_s\": %.3f, \"max_thread_cpu_ratio\": %.3f, "
      "\"client_bound\": %s, \"sched_cpu_s\": %.4f, \"softirq_cpu_s\": %.4f, "
      "\"cpu_us_per_conn\": %.3f, \"notes\": [%s], \"threads\": [%s]}, "
      "\"server\": {\"measured\": %s, \"cpu_s\": %.4f, \"softirq_cpu_s\": %.4f, "
      "\"cpu_us_per_conn\": %.3f}, "
      "\"queries\": {\"sent\": %d, \"ok\": %d, \"ok_per_s\": %.1f, \"latency_us\": %s}%s",
      result.requested_rate, result.concurrency, result.wall_s, result.achieved_rate(),
      result.wall_s > 0 ? total.ok / result.wall_s : 0.0, total.started, total.completed(),
      total.ok, result.success_ratio(), errors, absl::StrJoin(reasons, ", "),
      absl::StrJoin(samples, ", "), LatencyJson(total.latency), LatencyJson(total.start_lag),
      total.late_starts, total.unstarted, total.inflight_cap_waits, total.bytes_sent,
      total.bytes_received, result.process_cpu_s, result.max_thread_cpu_ratio(),
      result.client_bound ? "true" : "false", result.client_sched_cpu_s,
      result.client_softirq_cpu_s, result.client_us_per_conn(), absl::StrJoin(notes, ", "),
      absl::StrJoin(threads, ", "), result.server_measured ? "true" : "false", result.server_cpu_s,
      result.server_softirq_cpu_s, result.server_us_per_conn(), total.queries_sent,
      total.queries_ok, result.queries_per_s(), LatencyJson(total.query_latency), TlsJson(result));
}

std::string FormatUs(uint64_t ns) {
  double us = Us(ns);
  if (us >= 10000) return absl::StrFormat("%.0f", us);
  return absl::StrFormat("%.1f", us);
}

}  // namespace

double RunResult::achieved_rate() const {
  return wall_s > 0 ? static_cast<double>(total.completed()) / wall_s : 0.0;
}

double RunResult::success_ratio() const {
  uint64_t completed = total.completed();
  return completed == 0 ? 0.0 : static_cast<double>(total.ok) / static_cast<double>(completed);
}

double RunResult::client_us_per_conn() const {
  if (total.ok == 0) return 0;
  return (client_sched_cpu_s + client_softirq_cpu_s) * 1e6 / static_cast<double>(total.ok);
}

double RunResult::server_us_per_conn() const {
  if (total.ok == 0 || !server_measured) return 0;
  return (server_cpu_s + server_softirq_cpu_s) * 1e6 / static_cast<double>(total.ok);
}

double RunResult::queries_per_s() const {
  return wall_s > 0 ? static_cast<double>(total.queries_ok) / wall_s : 0.0;
}

double RunResult::max_thread_cpu_ratio() const {
  double ratio = 0;
  for (const ThreadStats& thread : threads) {
    if (thread.wall_ns > 0) {
      ratio =
          std::max(ratio, static_cast<double>(thread.cpu_ns) / static_cast<double>(thread.wall_ns));
    }
  }
  return ratio;
}

void JudgeClientLimits(RunResult* result) {
  result->client_notes.clear();
  result->client_bound = false;
  for (size_t i = 0; i < result->threads.size(); ++i) {
    const ThreadStats& thread = result->threads[i];
    if (thread.wall_ns <= 0) continue;
    double ratio = static_cast<double>(thread.cpu_ns) / static_cast<double>(thread.wall_ns);
    if (ratio > kSaturatedCpuRatio) {
      result->client_bound = true;
      result->client_notes.push_back(
          absl::StrFormat("client thread %d used %.0f%% of a CPU", i, ratio * 100));
    }
  }
  const ThreadStats& total = result->total;
  if (result->requested_rate > 0 && total.started > 0) {
    uint64_t intended = total.started + total.unstarted;
    uint64_t lag_p90 = total.start_lag.ValueAtPercentile(90);
    uint64_t lag_p99 = total.start_lag.ValueAtPercentile(99);
    const uint64_t late = static_cast<uint64_t>(ThreadStats::kLateStartNs);
    // Sustained lag (a tenth of the starts late, or starts never made) means the client could
    // not keep the schedule; a late p99 alone is often the scheduler on a busy machine.
    bool behind = total.unstarted * 1000 > intended || lag_p90 > late;
    if (total.inflight_cap_waits > 0) {
      // The server answered slower than the offered rate until the slots ran out: that is the
      // server's limit, seen through --max-inflight; the latency tail already shows it.
      result->client_notes.push_back(absl::StrFormat(
          "every connection slot was busy %d times (--max-inflight): the server lags the "
          "offered rate",
          total.inflight_cap_waits));
    } else if (behind) {
      result->client_bound = true;
      result->client_notes.push_back(absl::StrFormat(
          "open-loop schedule fell behind: p90 start lag %.2f ms, %d of %d starts never made%s",
          lag_p90 / 1e6, total.unstarted, intended,
          result->max_thread_cpu_ratio() < 0.5
              ? " (the client threads were mostly idle: other processes on this machine "
                "delay their wakeups)"
              : ""));
    } else if (lag_p99 > late) {
      result->client_notes.push_back(absl::StrFormat(
          "p99 start lag %.2f ms (a busy machine or client): latency percentiles above it "
          "include the client's own delay",
          lag_p99 / 1e6));
    }
  }
  if (total.errors[static_cast<int>(ErrorKind::kNoSourcePort)] > 0) {
    result->client_bound = true;
    result->client_notes.push_back(
        "EADDRNOTAVAIL: the client ran out of ephemeral ports; spread connections with "
        "--source 127.0.0.2-127.0.0.254 or widen net.ipv4.ip_local_port_range");
  }
  if (total.errors[static_cast<int>(ErrorKind::kLocalError)] > 0) {
    result->client_bound = true;
    result->client_notes.push_back(
        absl::StrCat("local errors (", absl::StrJoin(total.local_error_samples, "; "),
                     "): raise ulimit -n or lower --concurrency/--max-inflight"));
  }
}

void PrintRunTable(const LoadConfig& config, const RunResult& result, FILE* out) {
  const ThreadStats& total = result.total;
  std::string mode = result.requested_rate > 0
                         ? absl::StrFormat("open loop at %.0f conn/s", result.requested_rate)
                         : absl::StrFormat("closed loop, %d in flight", result.concurrency);
  absl::FPrintF(out, "onepass-load: %s to %s, %s, %d thread(s), %.2f s\n", ProtocolName(config),
                config.target.ToString(), mode, config.threads, result.wall_s);
  absl::FPrintF(out, "  connections   %d started, %d ok, %d errors (success %.4f%%)\n",
                total.started, total.ok, total.errors_total(), result.success_ratio() * 100);
  absl::FPrintF(out, "  rate          %.1f conn/s completed, %.1f ok/s", result.achieved_rate(),
                result.wall_s > 0 ? total.ok / result.wall_s : 0.0);
  if (result.requested_rate > 0) absl::FPrintF(out, " (requested %.1f)", result.requested_rate);
  absl::FPrintF(out, "\n");
  if (total.errors_total() > 0) {
    std::vector<std::string> kinds;
    for (int i = 0; i < kErrorKindCount; ++i) {
      if (total.errors[i] > 0) {
        kinds.push_back(
            absl::StrCat(ErrorKindName(static_cast<ErrorKind>(i)), " ", total.errors[i]));
      }
    }
    absl::FPrintF(out, "  errors        %s\n", absl::StrJoin(kinds, ", "));
  }
  for (const ReasonCount& entry : total.reasons) {
    absl::FPrintF(out, "    %-32s %d\n", entry.reason, entry.count);
  }
  for (const std::string& sample : total.samples) {
    absl::FPrintF(out, "    sample: %s\n", sample);
  }
  const Histogram& latency = total.latency;
  absl::FPrintF(out, "  latency [us]  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s%s\n",
                FormatUs(latency.ValueAtPercentile(50)), FormatUs(latency.ValueAtPercentile(90)),
                FormatUs(latency.ValueAtPercentile(99)), FormatUs(latency.ValueAtPercentile(99.9)),
                FormatUs(latency.max()),
                result.requested_rate > 0 ? "  (from intended start)" : "");
  if (result.tls) {
    const TlsCounts& tls = total.tls;
    absl::FPrintF(out,
                  "  TLS           %d handshakes: %d full, %d resumed (%.1f%% resumed, %d "
                  "offered a ticket), %d failed; TLS 1.3 %d, ALPN dot %d\n",
                  tls.started, tls.full, tls.resumed, 100 * ResumedShare(tls), tls.resume_offered,
                  tls.failed, tls.tls13, tls.alpn_dot);
    absl::FPrintF(out, "  handshake [us] p50 %s  p90 %s  p99 %s  max %s  (connect to Finished)\n",
                  FormatUs(tls.handshake_latency.ValueAtPercentile(50)),
                  FormatUs(tls.handshake_latency.ValueAtPercentile(90)),
                  FormatUs(tls.handshake_latency.ValueAtPercentile(99)),
                  FormatUs(tls.handshake_latency.max()));
    absl::FPrintF(out, "  answer [us]   p50 %s  p90 %s  p99 %s  max %s  (after the handshake)\n",
                  FormatUs(tls.answer_latency.ValueAtPercentile(50)),
                  FormatUs(tls.answer_latency.ValueAtPercentile(90)),
                  FormatUs(tls.answer_latency.ValueAtPercentile(99)),
                  FormatUs(tls.answer_latency.max()));
  }
  if (result.requested_rate > 0) {
    absl::FPrintF(out, "  start lag     p99 %s us, max %s us, %d late > 1 ms, %d never started\n",
                  FormatUs(total.start_lag.ValueAtPercentile(99)), FormatUs(total.start_lag.max()),
                  total.late_starts, total.unstarted);
  }
  std::vector<std::string> cpu;
  for (size_t i = 0; i < result.threads.size(); ++i) {
    const ThreadStats& thread = result.threads[i];
    double ratio = thread.wall_ns > 0 ? 100.0 * thread.cpu_ns / thread.wall_ns : 0;
    cpu.push_back(thread.cpu >= 0 ? absl::StrFormat("%.0f%% (cpu %d)", ratio, thread.cpu)
                                  : absl::StrFormat("%.0f%%", ratio));
  }
  absl::FPrintF(out, "  client CPU    threads %s; process %.2f s\n", absl::StrJoin(cpu, ", "),
                result.process_cpu_s);
  if (total.queries_sent != total.started) {
    absl::FPrintF(out, "  queries       %d sent, %d ok: %.1f queries/s, %.1f conn/s\n",
                  total.queries_sent, total.queries_ok, result.queries_per_s(),
                  result.achieved_rate());
  }
  std::string server =
      result.server_measured
          ? absl::StrFormat(", server %.2f us (%.1f%% ksoftirqd): client/server %.2fx",
                            result.server_us_per_conn(),
                            100 * result.server_softirq_cpu_s /
                                std::max(1e-9, result.server_cpu_s + result.server_softirq_cpu_s),
                            result.server_us_per_conn() > 0
                                ? result.client_us_per_conn() / result.server_us_per_conn()
                                : 0.0)
          : std::string(" (--server-pid: the server's beside it)");
  absl::FPrintF(out, "  CPU per conn  client %.2f us (%.1f%% ksoftirqd)%s\n",
                result.client_us_per_conn(),
                100 * result.client_softirq_cpu_s /
                    std::max(1e-9, result.client_sched_cpu_s + result.client_softirq_cpu_s),
                server);
  for (const std::string& note : result.client_notes) absl::FPrintF(out, "  note: %s\n", note);
  if (result.client_bound) {
    absl::FPrintF(out,
                  "  verdict       CLIENT-BOUND: add --threads or CPUs; the figure is a lower "
                  "bound for the server\n");
  } else {
    absl::FPrintF(out, "  verdict       client not saturated (busiest thread %.0f%% CPU)\n",
                  result.max_thread_cpu_ratio() * 100);
  }
}

void PrintRampTable(const std::vector<RampStep>& steps, double capacity, FILE* out) {
  absl::FPrintF(out, "%10s %12s %10s %10s %10s  %s\n", "rate", "achieved", "success", "p99 [us]",
                "client", "result");
  for (const RampStep& step : steps) {
    absl::FPrintF(out, "%10.0f %12.1f %10.5f %10s %10s  %s\n", step.rate,
                  step.result.achieved_rate(), step.result.success_ratio(),
                  FormatUs(step.result.total.latency.ValueAtPercentile(99)),
                  step.result.client_bound ? "BOUND" : "ok",
                  step.pass ? "pass" : absl::StrCat("FAIL: ", step.why_not));
  }
  if (capacity > 0) {
    absl::FPrintF(out, "capacity: %.0f conn/s (highest passing step)\n", capacity);
  } else {
    absl::FPrintF(out, "capacity: none (the first step already failed)\n");
  }
}

std::string RunJson(const LoadConfig& config, const std::string& settings_json,
                    const RunResult& result) {
  return absl::StrCat("{\"tool\": \"onepass-load\", \"settings\": ", settings_json, ", ",
                      ResultJsonFields(result), "}\n");
}

std::string RampJson(const LoadConfig& config, const std::string& settings_json,
                     const std::vector<RampStep>& steps, double capacity, double min_success,
                     double max_p99_ms) {
  std::vector<std::string> items;
  for (const RampStep& step : steps) {
    items.push_back(absl::StrFormat("{\"rate\": %.1f, \"pass\": %s, \"why_not\": \"%s\", %s}",
                                    step.rate, step.pass ? "true" : "false",
                                    JsonEscape(step.why_not), ResultJsonFields(step.result)));
  }
  return absl::StrFormat(
      "{\"tool\": \"onepass-load\", \"settings\": %s, \"ramp\": {\"min_success\": %.6f, "
      "\"max_p99_ms\": %.3f, \"capacity_conn_per_s\": %.1f, \"steps\": [%s]}}\n",
      settings_json, min_success, max_p99_ms, capacity, absl::StrJoin(items, ", "));
}

std::string ProtocolName(const LoadConfig& config) {
  return config.tls != nullptr ? "dot" : std::string(config.protocol->name());
}

std::string JsonEscape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (byte < 0x20 || byte >= 0x7F) {
      // Non-ASCII bytes from a server are not trusted to be UTF-8: escape them all.
      absl::StrAppendFormat(&out, "\\u%04x", byte);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

absl::Status WriteFile(const std::string& path, const std::string& contents) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  size_t written = std::fwrite(contents.data(), 1, contents.size(), file);
  bool ok = written == contents.size() && std::fclose(file) == 0;
  if (!ok) return absl::InternalError(absl::StrCat("short write to ", path));
  return absl::OkStatus();
}

}  // namespace onepass::load
