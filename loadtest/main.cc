// onepass-load: a connection-rate load tester for DNS over TCP, HTTP OCSP, Whois, RDAP and raw
// exchanges. Every transaction is a NEW TCP connection: connect, one request (DNS: or several,
// --queries-per-conn), each whole response read and checked, close. See --help and README.md.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/arguments.h"
#include "common/cpu_list.h"
#include "common/flag_help.h"
#include "common/log.h"
#include "common/socket_address.h"
#include "loadtest/dns_request.h"
#include "loadtest/load_config.h"
#include "loadtest/load_runner.h"
#include "loadtest/ocsp_request.h"
#include "loadtest/rdap_request.h"
#include "loadtest/report.h"
#include "loadtest/tls_client_context.h"
#include "loadtest/uring_client.h"
#include "loadtest/whois_request.h"

ABSL_FLAG(std::string, target, "", "server address ADDR:PORT ([ADDR]:PORT for IPv6); required");
ABSL_FLAG(std::string, proto, "dns",
          "dns | dot | ocsp | whois | rdap | raw; dot: DNS over TLS (RFC 7858), the dns "
          "options apply, one TLS handshake per connection, on the epoll core");
ABSL_FLAG(int, threads, 1, "client threads, each with its own ring (or epoll loop)");
ABSL_FLAG(std::string, engine, "auto",
          "client core: uring (linked socket-connect-send-recv chains on io_uring, one system "
          "call per batch), epoll (the earlier core: non-blocking sockets and epoll), or auto: "
          "uring for closed loop (--concurrency) or several queries per connection where the "
          "kernel has it (IORING_OP_SOCKET, Linux 5.19; with --source IORING_OP_BIND, 6.11), "
          "else epoll, and epoll for paced starts (--rate, --ramp); --proto dot always runs on "
          "epoll (uring is refused)");
ABSL_FLAG(int, queries_per_conn, 1,
          "dns (uring core), dot: queries sent on each connection, each answer checked; the server "
          "must keep the connection open for them (RFC 7766 §6.2.1)");
ABSL_FLAG(int, pipeline, 1,
          "with --queries-per-conn: queries sent at a time on a connection, in one send; the "
          "next as many once all are answered, in any order (RFC 7766 §7); 1: one after the "
          "other");
ABSL_FLAG(int, server_pid, 0,
          "print this process's CPU per connection beside the client's (its /proc schedstat "
          "over the run, as loadtest/bench.sh counts it); 0: only the client's");
ABSL_FLAG(std::string, server_cpus, "",
          "with --server-pid: the server's CPUs, whose ksoftirqd time is charged to it (the "
          "client is charged the ksoftirqd of --cpus)");
ABSL_FLAG(std::string, cpus, "", "pin thread i to the i-th CPU of this list (\"1-3,6\")");
ABSL_FLAG(int, concurrency, 0,
          "closed loop: connections in flight in total, each started when one ends "
          "(default 32 when neither --rate nor --ramp is given)");
ABSL_FLAG(double, rate, 0,
          "open loop: new connections per second in total, paced evenly; latency counts from "
          "each connection's intended start");
ABSL_FLAG(std::string, ramp, "",
          "FROM:TO:STEP: open loop at FROM, FROM+STEP, ... TO conn/s, --step-duration each; "
          "reports the highest rate meeting --min-success and --max-p99-ms (the capacity)");
ABSL_FLAG(double, step_duration, 5, "seconds per --ramp step");
ABSL_FLAG(double, min_success, 0.999,
          "ramp: a step passes when ok/completed >= this; any run below it exits with 3");
ABSL_FLAG(double, max_p99_ms, 100, "ramp: a step passes when its p99 latency is <= this [ms]");
ABSL_FLAG(double, duration, 0,
          "seconds to start connections for (default 10; with --count, a cap of 300)");
ABSL_FLAG(uint64_t, count, 0, "stop after this many connections in total (0: no bound)");
ABSL_FLAG(int, timeout_ms, 1000, "per connection, connect to whole response [ms]");
ABSL_FLAG(std::string, source, "",
          "source addresses to spread connections over, e.g. 127.0.0.2-127.0.0.254 (uring core: "
          "the address and a port of the thread's slice of ip_local_port_range, in rotation, "
          "bound on the ring; epoll core: bound with IP_BIND_ADDRESS_NO_PORT: every address "
          "brings a whole ephemeral port range)");
ABSL_FLAG(std::string, tls_ca, "",
          "dot: the CA certificates (PEM) the server's chain is verified against; required: "
          "the load tester verifies what it measures unless --tls-insecure");
ABSL_FLAG(bool, tls_insecure, false, "dot: verify no certificate (instead of --tls-ca)");
ABSL_FLAG(std::string, tls_sni, "",
          "dot: the server name sent (SNI) and required in its certificate (RFC 8310 §8); "
          "empty: no SNI, and only the chain is verified");
ABSL_FLAG(double, tls_resume, 0,
          "dot: share of connections (0..1) that offer a session ticket an earlier connection "
          "of the thread received, each ticket once (TLS 1.3 resumption, RFC 8446 §2.2, §C.4); "
          "0: every handshake is full; the report gives the share the server resumed");
ABSL_FLAG(std::string, qname, "example.com.", "dns: query name");
ABSL_FLAG(std::string, qtype, "A", "dns: query type");
ABSL_FLAG(std::string, queries, "", "dns: file of \"name type\" lines, cycled (overrides --qname)");
ABSL_FLAG(std::string, expect_rcode, "NOERROR", "dns: RCODE every answer must carry, or \"any\"");
ABSL_FLAG(bool, expect_answers, true, "dns: with NOERROR expected, require ANCOUNT > 0");
ABSL_FLAG(int, edns_size, 0,
          "dns: > 0 adds an EDNS OPT record with this UDP payload size (then the reply must "
          "carry one too, RFC 6891 §7)");
ABSL_FLAG(bool, dnssec_ok, false, "dns: with --edns-size, set the DO bit");
ABSL_FLAG(std::string, ocsp_request, "", "ocsp: file holding a DER OCSPRequest; required");
ABSL_FLAG(bool, ocsp_get, false,
          "ocsp: send GET with the base64 request in the URL (RFC 6960 A.1)");
ABSL_FLAG(std::string, ocsp_path, "/", "ocsp: request path (GET: prefix)");
ABSL_FLAG(std::string, http_host, "", "ocsp, rdap: Host header (default: the target address)");
ABSL_FLAG(std::string, expect_ocsp_status, "successful",
          "ocsp: responseStatus required (successful, unauthorized, ... or any)");
ABSL_FLAG(std::string, whois_query, "", "whois: the query line; required");
ABSL_FLAG(std::string, rdap_path, "",
          "rdap: the request target (\"/domain/example.com\"); required; Host is --http-host");
ABSL_FLAG(std::string, raw_request, "", "raw: file whose bytes are sent; the reply ends at close");
ABSL_FLAG(std::string, expect_substring, "", "whois/rdap/raw: text the reply must contain");
ABSL_FLAG(uint64_t, max_response_bytes, 1 << 20, "a longer response counts as wrong");
ABSL_FLAG(int, max_inflight, 20000, "open loop: connections open at once per thread");
ABSL_FLAG(int, samples, 5, "mismatches printed with their details");
ABSL_FLAG(std::string, json, "", "write the results as JSON to this file");
ABSL_FLAG(bool, progress, false, "print the progress line even when stderr is not a terminal");

namespace onepass::load {
namespace {

std::atomic<bool> g_stop{false};

// The flags in the order --help lists them.
constexpr const char* kFlagOrder[] = {"target",
                                      "proto",
                                      "concurrency",
                                      "rate",
                                      "ramp",
                                      "step_duration",
                                      "min_success",
                                      "max_p99_ms",
                                      "duration",
                                      "count",
                                      "timeout_ms",
                                      "threads",
                                      "cpus",
                                      "engine",
                                      "queries_per_conn",
                                      "pipeline",
                                      "server_pid",
                                      "server_cpus",
                                      "source",
                                      "tls_ca",
                                      "tls_insecure",
                                      "tls_sni",
                                      "tls_resume",
                                      "qname",
                                      "qtype",
                                      "queries",
                                      "expect_rcode",
                                      "expect_answers",
                                      "edns_size",
                                      "dnssec_ok",
                                      "ocsp_request",
                                      "ocsp_get",
                                      "ocsp_path",
                                      "http_host",
                                      "expect_ocsp_status",
                                      "whois_query",
                                      "rdap_path",
                                      "raw_request",
                                      "expect_substring",
                                      "max_response_bytes",
                                      "max_inflight",
                                      "samples",
                                      "json",
                                      "progress"};

void PrintHelp() {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const char* name : kFlagOrder) {
    if (const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name)) flags.push_back(flag);
  }
  std::fputs(FormatFlagHelp(absl::ProgramUsageMessage(), flags).c_str(), stdout);
}

void OnSignal(int) { g_stop.store(true, std::memory_order_relaxed); }

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

absl::StatusOr<std::unique_ptr<ProtocolClient>> MakeProtocol(const SocketAddress& target) {
  std::string proto = absl::GetFlag(FLAGS_proto);
  if (proto == "dns" || proto == "dot") {
    std::vector<DnsQuery> queries;
    if (!absl::GetFlag(FLAGS_queries).empty()) {
      absl::StatusOr<std::string> text = ReadFile(absl::GetFlag(FLAGS_queries));
      if (!text.ok()) return text.status();
      absl::StatusOr<std::vector<DnsQuery>> parsed = ParseDnsQueryList(*text);
      if (!parsed.ok()) return parsed.status();
      queries = std::move(*parsed);
    } else {
      queries.push_back({absl::GetFlag(FLAGS_qname), absl::GetFlag(FLAGS_qtype)});
    }
    DnsCheckConfig check;
    absl::StatusOr<int> rcode = ParseRcode(absl::GetFlag(FLAGS_expect_rcode));
    if (!rcode.ok()) return rcode.status();
    check.expect_rcode = *rcode;
    check.expect_answers = absl::GetFlag(FLAGS_expect_answers);
    check.edns_udp_size = absl::GetFlag(FLAGS_edns_size);
    check.dnssec_ok = absl::GetFlag(FLAGS_dnssec_ok);
    if (check.edns_udp_size < 0 || check.edns_udp_size > 65535 ||
        (check.dnssec_ok && check.edns_udp_size == 0)) {
      return absl::InvalidArgumentError("--edns-size must be 0..65535 (and > 0 for --dnssec-ok)");
    }
    absl::StatusOr<std::unique_ptr<DnsClient>> client = DnsClient::Create(queries, check);
    if (!client.ok()) return client.status();
    return std::unique_ptr<ProtocolClient>(std::move(*client));
  }
  if (proto == "ocsp") {
    if (absl::GetFlag(FLAGS_ocsp_request).empty()) {
      return absl::InvalidArgumentError("--proto ocsp needs --ocsp-request FILE (DER)");
    }
    OcspClientConfig ocsp;
    absl::StatusOr<std::string> der = ReadFile(absl::GetFlag(FLAGS_ocsp_request));
    if (!der.ok()) return der.status();
    ocsp.der_request = std::move(*der);
    ocsp.use_get = absl::GetFlag(FLAGS_ocsp_get);
    ocsp.path = absl::GetFlag(FLAGS_ocsp_path);
    ocsp.host =
        absl::GetFlag(FLAGS_http_host).empty() ? target.ToString() : absl::GetFlag(FLAGS_http_host);
    absl::StatusOr<int> status = ParseOcspStatus(absl::GetFlag(FLAGS_expect_ocsp_status));
    if (!status.ok()) return status.status();
    ocsp.expect_status = *status;
    absl::StatusOr<std::unique_ptr<OcspClient>> client = OcspClient::Create(ocsp);
    if (!client.ok()) return client.status();
    return std::unique_ptr<ProtocolClient>(std::move(*client));
  }
  if (proto == "whois") {
    if (absl::GetFlag(FLAGS_whois_query).empty()) {
      return absl::InvalidArgumentError("--proto whois needs --whois-query LINE");
    }
    return std::unique_ptr<ProtocolClient>(std::make_unique<WhoisClient>(
        absl::GetFlag(FLAGS_whois_query), absl::GetFlag(FLAGS_expect_substring)));
  }
  if (proto == "rdap") {
    if (absl::GetFlag(FLAGS_rdap_path).empty()) {
      return absl::InvalidArgumentError("--proto rdap needs --rdap-path TARGET");
    }
    const std::string host =
        absl::GetFlag(FLAGS_http_host).empty() ? target.ToString() : absl::GetFlag(FLAGS_http_host);
    return std::unique_ptr<ProtocolClient>(std::make_unique<RdapClient>(
        absl::GetFlag(FLAGS_rdap_path), host, absl::GetFlag(FLAGS_expect_substring)));
  }
  if (proto == "raw") {
    if (absl::GetFlag(FLAGS_raw_request).empty()) {
      return absl::InvalidArgumentError("--proto raw needs --raw-request FILE");
    }
    absl::StatusOr<std::string> bytes = ReadFile(absl::GetFlag(FLAGS_raw_request));
    if (!bytes.ok()) return bytes.status();
    return std::unique_ptr<ProtocolClient>(
        std::make_unique<RawClient>(std::move(*bytes), absl::GetFlag(FLAGS_expect_substring)));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --proto ", proto, " (dns, dot, ocsp, whois, rdap or raw)"));
}

// Raises the open-file limit to its hard maximum and returns it.
uint64_t RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  getrlimit(RLIMIT_NOFILE, &limit);
  return limit.rlim_cur;
}

struct Ramp {
  double from = 0, to = 0, step = 0;
};

absl::StatusOr<Ramp> ParseRamp(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  Ramp ramp;
  if (parts.size() != 3 || !absl::SimpleAtod(parts[0], &ramp.from) ||
      !absl::SimpleAtod(parts[1], &ramp.to) || !absl::SimpleAtod(parts[2], &ramp.step) ||
      ramp.from <= 0 || ramp.step <= 0 || ramp.to < ramp.from) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ramp must be FROM:TO:STEP with 0 < FROM <= TO and STEP > 0: ", text));
  }
  if ((ramp.to - ramp.from) / ramp.step > 1000) {
    return absl::InvalidArgumentError("--ramp has more than 1000 steps");
  }
  return ramp;
}

// --server-pid and --server-cpus into `config`.
absl::Status ApplyServerPid(LoadConfig* config) {
  config->server_pid = absl::GetFlag(FLAGS_server_pid);
  if (config->server_pid < 0) return absl::InvalidArgumentError("--server-pid must be >= 0");
  if (!absl::GetFlag(FLAGS_server_cpus).empty()) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(absl::GetFlag(FLAGS_server_cpus));
    if (!cpus.ok())
      return absl::InvalidArgumentError(absl::StrCat("--server-cpus: ", cpus.status().message()));
    config->server_cpus = std::move(*cpus);
  }
  return absl::OkStatus();
}

// --engine, --queries-per-conn, --pipeline, --server-pid, --server-cpus into `config` (whose
// protocol, sources and TLS context are set).
absl::Status ApplyShapeAndEngine(LoadConfig* config) {
  config->queries_per_conn = absl::GetFlag(FLAGS_queries_per_conn);
  config->pipeline = absl::GetFlag(FLAGS_pipeline);
  if (config->queries_per_conn < 1 || config->queries_per_conn > 1000000) {
    return absl::InvalidArgumentError("--queries-per-conn must be 1..1000000");
  }
  if (config->pipeline < 1 || config->pipeline > config->queries_per_conn ||
      config->pipeline > 1024) {
    return absl::InvalidArgumentError("--pipeline must be 1..min(--queries-per-conn, 1024)");
  }
  if (config->queries_per_conn > 1 &&
      config->protocol->FrameLength("") == ProtocolClient::kUnframed) {
    return absl::InvalidArgumentError(
        absl::StrCat("--queries-per-conn > 1 needs a protocol whose answers are framed (dns), not ",
                     config->protocol->name()));
  }
  const std::string engine = absl::GetFlag(FLAGS_engine);
  if (engine != "auto" && engine != "uring" && engine != "epoll") {
    return absl::InvalidArgumentError("--engine must be auto, uring or epoll");
  }
  if (config->tls != nullptr) {
    // TLS runs where the bytes are (memory BIOs between recv and the exchange); the uring
    // core's linked chains send and receive in the kernel without a step between them.
    if (engine == "uring") {
      return absl::InvalidArgumentError(
          "--engine uring does not speak TLS: --proto dot runs on the epoll core (--engine "
          "epoll or auto)");
    }
    config->engine = Engine::kEpoll;
    return ApplyServerPid(config);
  }
  absl::Status uring = UringEngineAvailable(*config);
  if (engine == "uring" && !uring.ok()) {
    return absl::UnavailableError(absl::StrCat("--engine uring: ", uring.message()));
  }
  config->engine = engine == "epoll" || !uring.ok() ? Engine::kEpoll : Engine::kUring;
  // Open loop and ramps (paced starts): auto takes the epoll core. The uring core's batching
  // (one wakeup for a quarter of the connections in flight) is what makes it cheaper in closed
  // loop; paced starts wake the thread per start on both cores, and under TSan the uring
  // core's step latencies ran past a ramp's p99 bound (LoadTesterTest.RampReports...).
  if (engine == "auto" && absl::GetFlag(FLAGS_concurrency) == 0 && config->queries_per_conn == 1) {
    config->engine = Engine::kEpoll;
  }
  if (engine == "auto" && !uring.ok()) {
    LogInfo("--engine auto: epoll (%s)", uring.message());
  }
  if (config->engine == Engine::kEpoll && config->queries_per_conn > 1) {
    return absl::InvalidArgumentError("--queries-per-conn > 1 needs the uring core (--engine)");
  }
  return ApplyServerPid(config);
}

std::string TlsSettingsJson(const LoadConfig& config) {
  if (config.tls == nullptr) return "";
  const TlsClientOptions& tls = config.tls->options();
  return absl::StrFormat(
      ", \"tls_client\": {\"ca\": \"%s\", \"insecure\": %s, \"sni\": \"%s\", \"resume\": %.3f}",
      JsonEscape(tls.ca_file), tls.insecure ? "true" : "false", JsonEscape(tls.sni),
      tls.resume_fraction);
}

std::string SettingsJson(const LoadConfig& config, const std::string& ramp) {
  return absl::StrFormat(
      "{\"target\": \"%s\", \"proto\": \"%s\", \"threads\": %d, \"cpus\": \"%s\", "
      "\"concurrency\": %d, \"rate\": %.1f, \"ramp\": \"%s\", \"duration_s\": %.3f, "
      "\"count\": %d, \"timeout_ms\": %d, \"sources\": %d, \"max_inflight_per_thread\": %d, "
      "\"engine\": \"%s\", \"queries_per_conn\": %d, \"pipeline\": %d%s}",
      JsonEscape(config.target.ToString()), JsonEscape(ProtocolName(config)), config.threads,
      FormatCpuList(config.cpus), config.concurrency, config.rate, JsonEscape(ramp),
      config.duration_s, config.count, config.timeout_ms, config.sources.size(),
      config.max_inflight_per_thread, config.engine == Engine::kUring ? "uring" : "epoll",
      config.queries_per_conn, config.pipeline, TlsSettingsJson(config));
}

int Main(int argc, char** argv) {
  SetLogProgramName("onepass-load");
  absl::SetProgramUsageMessage(
      "connection-rate load tester: every transaction is a new TCP connection, one request "
      "(or --queries-per-conn of them), every response read whole and checked, close.\n"
      "  onepass-load --target 127.0.0.1:53 --proto dns --qname example.com. --concurrency 64\n"
      "  onepass-load --target 127.0.0.1:53 --rate 20000 --duration 10 --threads 2 --json r.json\n"
      "  onepass-load --target 127.0.0.1:53 --ramp 5000:50000:5000 --step-duration 5\n"
      "  onepass-load --target 127.0.0.1:53 --queries-per-conn 10 --pipeline 5 --server-pid PID\n"
      "  onepass-load --target 127.0.0.1:853 --proto dot --tls-ca ca.pem --tls-sni dot.example "
      "--tls-resume 0.5\n"
      "Exit status: 0 success ratio >= --min-success, 1 bad usage, 3 too many errors.");
  std::vector<std::string> args = NormalizeArguments(argc, argv);
  if (WantsHelp(args)) {
    PrintHelp();
    return 0;
  }
  std::vector<char*> arg_pointers;
  for (std::string& arg : args) arg_pointers.push_back(arg.data());
  std::vector<char*> rest =
      absl::ParseCommandLine(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  if (rest.size() > 1) {
    LogError("unexpected argument \"%s\" (see --help)", rest[1]);
    return 1;
  }
  absl::StatusOr<SocketAddress> target =
      ParseSocketAddress(absl::GetFlag(FLAGS_target), {.what = "target", .min_port = 1});
  if (!target.ok()) {
    LogError("--target: %s", target.status().message());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<ProtocolClient>> protocol = MakeProtocol(*target);
  if (!protocol.ok()) {
    LogError("%s", protocol.status().message());
    return 1;
  }
  LoadConfig config;
  config.target = *target;
  config.protocol = protocol->get();
  std::unique_ptr<TlsClientContext> tls;
  if (absl::GetFlag(FLAGS_proto) == "dot") {
    TlsClientOptions options;
    options.ca_file = absl::GetFlag(FLAGS_tls_ca);
    options.insecure = absl::GetFlag(FLAGS_tls_insecure);
    options.sni = absl::GetFlag(FLAGS_tls_sni);
    options.resume_fraction = absl::GetFlag(FLAGS_tls_resume);
    absl::StatusOr<std::unique_ptr<TlsClientContext>> context = TlsClientContext::Create(options);
    if (!context.ok()) {
      LogError("%s", context.status().message());
      return 1;
    }
    tls = std::move(*context);
    config.tls = tls.get();
  }
  config.threads = absl::GetFlag(FLAGS_threads);
  config.concurrency = absl::GetFlag(FLAGS_concurrency);
  config.rate = absl::GetFlag(FLAGS_rate);
  config.count = absl::GetFlag(FLAGS_count);
  config.timeout_ms = absl::GetFlag(FLAGS_timeout_ms);
  config.max_response_bytes = absl::GetFlag(FLAGS_max_response_bytes);
  config.max_inflight_per_thread = absl::GetFlag(FLAGS_max_inflight);
  config.mismatch_samples = absl::GetFlag(FLAGS_samples);
  std::string ramp_text = absl::GetFlag(FLAGS_ramp);
  double duration = absl::GetFlag(FLAGS_duration);
  config.duration_s = duration > 0 ? duration : (config.count > 0 ? 300 : 10);
  if (config.threads < 1 || config.threads > 1024) {
    LogError("--threads must be 1..1024");
    return 1;
  }
  if (config.timeout_ms < 1 || config.max_inflight_per_thread < 1 || config.mismatch_samples < 0) {
    LogError("--timeout-ms and --max-inflight must be positive");
    return 1;
  }
  int loops = (config.concurrency > 0) + (config.rate > 0) + !ramp_text.empty();
  if (loops > 1) {
    LogError("give only one of --concurrency (closed loop), --rate (open loop) and --ramp");
    return 1;
  }
  if (config.concurrency < 0 || config.rate < 0) {
    LogError("--concurrency and --rate must be positive");
    return 1;
  }
  if (loops == 0) config.concurrency = 32;
  if (config.concurrency > 0 && config.threads > config.concurrency) {
    config.threads = config.concurrency;  // a thread without a connection would idle
  }
  if (!absl::GetFlag(FLAGS_cpus).empty()) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(absl::GetFlag(FLAGS_cpus));
    if (!cpus.ok()) {
      LogError("--cpus: %s", cpus.status().message());
      return 1;
    }
    config.cpus = std::move(*cpus);
  }
  if (!absl::GetFlag(FLAGS_source).empty()) {
    absl::StatusOr<std::vector<SocketAddress>> sources =
        ParseSourceList(absl::GetFlag(FLAGS_source));
    if (!sources.ok()) {
      LogError("--source: %s", sources.status().message());
      return 1;
    }
    for (const SocketAddress& source : *sources) {
      if (source.family() != config.target.family()) {
        LogError("--source %s is not of the target's address family", source.ToString(false));
        return 1;
      }
    }
    config.sources = std::move(*sources);
  }
  if (absl::Status shape = ApplyShapeAndEngine(&config); !shape.ok()) {
    LogError("%s", shape.message());
    return 1;
  }
  // Every open connection is a descriptor: fit the slots to the limit, keeping some spare.
  uint64_t file_limit = RaiseFileLimit();
  uint64_t usable = file_limit > 64 ? file_limit - 64 : 1;
  if (config.concurrency > 0 && static_cast<uint64_t>(config.concurrency) > usable) {
    LogError("--concurrency %d exceeds the open-file limit %d: raise ulimit -n", config.concurrency,
             file_limit);
    return 1;
  }
  if (static_cast<uint64_t>(config.max_inflight_per_thread) * config.threads > usable) {
    config.max_inflight_per_thread =
        static_cast<int>(std::max<uint64_t>(1, usable / config.threads));
    if (config.concurrency == 0) {  // only the open loop uses more slots than connections
      LogDebug("open-file limit %d: at most %d connections in flight per thread", file_limit,
               config.max_inflight_per_thread);
    }
  }

  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  bool progress = absl::GetFlag(FLAGS_progress) || isatty(STDERR_FILENO) == 1;
  double min_success = absl::GetFlag(FLAGS_min_success);
  std::string json_path = absl::GetFlag(FLAGS_json);

  if (ramp_text.empty()) {
    RunResult result = RunLoad(config, g_stop, progress);
    PrintRunTable(config, result, stdout);
    if (!json_path.empty()) {
      absl::Status written =
          WriteFile(json_path, RunJson(config, SettingsJson(config, ""), result));
      if (!written.ok()) {
        LogError("%s", written.message());
        return 1;
      }
    }
    return result.success_ratio() >= min_success ? 0 : 3;
  }

  absl::StatusOr<Ramp> ramp = ParseRamp(ramp_text);
  if (!ramp.ok()) {
    LogError("%s", ramp.status().message());
    return 1;
  }
  double max_p99_ms = absl::GetFlag(FLAGS_max_p99_ms);
  config.duration_s = absl::GetFlag(FLAGS_step_duration);
  config.count = 0;
  std::vector<RampStep> steps;
  double capacity = 0;
  for (double rate = ramp->from; rate <= ramp->to + 1e-9 && !g_stop.load(); rate += ramp->step) {
    LoadConfig step_config = config;
    step_config.rate = rate;
    RampStep step;
    step.rate = rate;
    step.result = RunLoad(step_config, g_stop, progress);
    double p99_ms = step.result.total.latency.ValueAtPercentile(99) / 1e6;
    if (step.result.success_ratio() < min_success) {
      step.why_not =
          absl::StrFormat("success %.5f < %.5f", step.result.success_ratio(), min_success);
    } else if (p99_ms > max_p99_ms) {
      step.why_not = absl::StrFormat("p99 %.2f ms > %.2f ms", p99_ms, max_p99_ms);
    } else if (step.result.achieved_rate() < 0.95 * rate) {
      step.why_not =
          absl::StrFormat("achieved %.0f < 95%% of the offered rate", step.result.achieved_rate());
    } else {
      step.pass = true;
      capacity = rate;
    }
    absl::FPrintF(stdout, "step %.0f conn/s: %.1f achieved, success %.5f, p99 %.2f ms: %s\n", rate,
                  step.result.achieved_rate(), step.result.success_ratio(), p99_ms,
                  step.pass ? "pass" : step.why_not);
    std::fflush(stdout);
    steps.push_back(std::move(step));
    if (!steps.back().pass) break;
  }
  PrintRampTable(steps, capacity, stdout);
  for (const RampStep& step : steps) {
    if (step.pass && step.rate == capacity && step.result.client_bound) {
      absl::FPrintF(stdout,
                    "CLIENT-BOUND at the capacity step (%s): the capacity is a lower bound for "
                    "the server; add --threads or CPUs\n",
                    absl::StrJoin(step.result.client_notes, "; "));
    }
  }
  if (!json_path.empty()) {
    absl::Status written = WriteFile(json_path, RampJson(config, SettingsJson(config, ramp_text),
                                                         steps, capacity, min_success, max_p99_ms));
    if (!written.ok()) {
      LogError("%s", written.message());
      return 1;
    }
  }
  return capacity > 0 ? 0 : 3;
}

}  // namespace
}  // namespace onepass::load

int main(int argc, char** argv) { return onepass::load::Main(argc, argv); }
