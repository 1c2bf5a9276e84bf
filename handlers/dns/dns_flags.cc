#include "handlers/dns/dns_flags.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "common/socket_address.h"
#include "handlers/dns/backends_file.h"
#include "handlers/dns/default_zone.h"
#include "handlers/dns/dns_handler.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/frontend_handler.h"
#include "handlers/dns/zone_loader.h"
#include "handlers/dns/zone_signer.h"
#include "handlers/load_phases.h"

// After the C++ headers: ldns (1.8.3) defines `bool` for C, which breaks C++20 <optional>.
#include <ldns/ldns.h>  // NOLINT(build/include_order)

// server/arguments.cc merges a repeated --zone (any list flag) into one comma-separated value.
ABSL_FLAG(std::vector<std::string>, zone, {},
          "DNS: RFC 1035 zone file to serve (origin = owner of the SOA); repeat the flag "
          "or separate with commas for several zones. Without it the embedded example.com "
          "zone is served. SIGHUP re-reads the files");
ABSL_FLAG(int, dns_edns_udp_size, 1232,
          "DNS: UDP payload size advertised in EDNS(0) OPT records (RFC 6891 §6.2.5), 512..65535");

ABSL_FLAG(int, dns_precompile_max_mb, 16,
          "DNS: resident memory for answers rendered at load time (name x type, NSD-style); "
          "names beyond it are answered by the normal path (the same bytes). 0 turns "
          "precompilation off. An answer takes about 350 bytes");

ABSL_FLAG(int, dns_nsec3_max_iterations, 100,
          "DNS: refuse to load a zone whose NSEC3 records use more hash iterations than this "
          "(RFC 9276 advises 0; validators treat high counts as insecure)");
ABSL_FLAG(int, dns_zone_include_depth, 8,
          "DNS: how deep $INCLUDE may nest in a zone file (RFC 1035 §5.1); a file that includes "
          "itself is an error at any depth");
ABSL_FLAG(int, dns_zone_max_errors, 20,
          "DNS: errors reported per zone file (with its $INCLUDEs) before reading it stops, "
          "1..10000; a bad record is reported and the next one read, as nsd-checkzone does");
ABSL_FLAG(int, dns_signature_warn_days, 7,
          "DNS: at load and reload, warn about a signed zone whose earliest RRSIG expires "
          "within this many days (or has expired)");

ABSL_FLAG(std::string, dnssec_keys, "",
          "DNS: sign every --zone at load and reload with the keys in this folder "
          "(K<origin>.+<alg>+<tag>.private/.key, as ldns-keygen writes them); empty: serve "
          "the zones as given (presigned or unsigned)");
ABSL_FLAG(std::string, dnssec_denial, "nsec",
          "DNS: with --dnssec_keys, the denial of existence to generate: nsec (RFC 4034) or "
          "nsec3 (RFC 5155; no salt, 0 iterations, as RFC 9276 advises)");
ABSL_FLAG(int, dnssec_validity_days, 14,
          "DNS: with --dnssec_keys, how long the signatures made at load are valid (they start "
          "an hour in the past, for clocks that lag)");

ABSL_FLAG(std::vector<std::string>, dns_backend, {},
          "DNS: forward every query over UDP to this backend, ADDR:PORT (IPv4, or [IPv6]:PORT); "
          "repeat for several, chosen by least outstanding queries among those up. Turns the "
          "zone mode off (no --zone with it). Fixed until restart: for backends a reload can "
          "change, use --dns-backends-file instead");
ABSL_FLAG(std::string, dns_backends_file, "",
          "DNS: forward as --dns-backend does (not with it) to the backends listed in this "
          "file, one ADDR:PORT per line, '#' comments and blank lines allowed; read again on "
          "SIGHUP: a backend that stays keeps its queries in flight, health and counters, one "
          "removed has its waiting clients answered SERVFAIL at once, one added gets queries. "
          "A bad file (bad line, duplicate, no backend) fails the start, or on SIGHUP keeps the "
          "previous backends; --check validates it");
ABSL_FLAG(int, dns_max_backends, 16,
          "DNS frontend, with --dns-backends-file: the most backends the file may list, "
          "1..256 (fixed at start: it sizes the per-backend counters)");
ABSL_FLAG(int, dns_backend_timeout_ms, 1000,
          "DNS frontend: SERVFAIL to the client when a backend has not answered within this "
          "[ms], 10..30000 (with EDE 22 when the query had EDNS, RFC 8914; or a stale answer "
          "with --dns-serve-stale-seconds); later replies are dropped and counted");
ABSL_FLAG(int, dns_backend_udp_timeout_ms, 500,
          "DNS frontend: a query unanswered over UDP for this long [ms] is sent once more over "
          "TCP to the same backend (which a backend's rate limiting, RRL, does not drop), "
          "within --dns-backend-timeout-ms; at or above that timeout: no TCP retry");
ABSL_FLAG(int, dns_backend_down_after, 3,
          "DNS frontend: a query timeout makes its backend suspect, probed at once (SOA of "
          "--dns-probe-name); it is marked down after this many probes in a row go unanswered, "
          "then probed every second until it answers. Client queries alone never mark it down");
ABSL_FLAG(std::string, dns_probe_name, ".",
          "DNS frontend: the name whose SOA is asked of a down backend (any answer marks it up)");
ABSL_FLAG(int, dns_max_in_flight, 16384,
          "DNS frontend: queries outstanding per worker, 1..65536 per backend; beyond it new "
          "queries get REFUSED at once");
ABSL_FLAG(int, dns_backend_tcp_connections, 2,
          "DNS frontend: a UDP answer with TC=1 is asked again over TCP to the same backend, "
          "on at most this many pooled connections per backend per worker (1..64), reused and "
          "pipelined; a query a broken connection lost is sent once more on another; the "
          "client never gets a truncated answer");
ABSL_FLAG(int, dns_backend_port_queries, 1,
          "DNS frontend: queries sent from one UDP source port before it is retired for a "
          "fresh one the kernel draws at random (RFC 5452 §9.2: an off-path forger must guess "
          "port and ID), 1..65536; 1 (default): a fresh port per query, as Unbound does");
ABSL_FLAG(int, dns_backend_max_ports, 512,
          "DNS frontend: UDP source ports open per backend per worker at most, 1..16384; at "
          "the cap a query goes out an open port drawn at random (counted: upstream_ports_shared)");
ABSL_FLAG(int, dns_backend_tcp_idle_ms, 10000,
          "DNS frontend: close a TCP connection to a backend after this long without queries "
          "[ms], 100..600000; below the backends' own idle timeouts, so that we close first");
ABSL_FLAG(int, dns_cache_entries, 10000,
          "DNS frontend: answers each worker keeps (LRU), served in the single pass with the "
          "client's ID and case; 0 turns the cache off");
ABSL_FLAG(int, dns_cache_max_ttl, 86400,
          "DNS frontend: the longest a positive answer stays cached [s], whatever its TTLs");
ABSL_FLAG(int, dns_cache_max_negative_ttl, 3600,
          "DNS frontend: the longest a negative answer (NXDOMAIN, NODATA) stays cached [s]; "
          "otherwise min(SOA TTL, SOA MINIMUM), RFC 2308 §5");
ABSL_FLAG(int, dns_serve_stale_seconds, 0,
          "DNS frontend: keep cached answers this long past their expiry [s] (RFC 8767; e.g. "
          "86400) and serve them, with TTL 30, while every backend is down, or when the backend "
          "fails (no answer by --dns-backend-timeout-ms, or SERVFAIL); 0 (default, as Unbound "
          "and BIND): SERVFAIL instead");
ABSL_FLAG(int, dns_stale_answer_client_timeout_ms, 0,
          "DNS frontend, with --dns-serve-stale-seconds: a query whose cached answer has "
          "expired is forwarded, and if no answer has come within this [ms] the client gets "
          "the stale one (TTL 30) while the query goes on and refreshes the cache (RFC 8767 "
          "client-response timer; it suggests 1800). Below --dns-backend-timeout-ms; 0 "
          "(default): off, the stale answer only when the backend fails");
ABSL_FLAG(int, dns_stale_refresh_seconds, 30,
          "DNS frontend, with --dns-serve-stale-seconds: after asking a backend for an expired "
          "answer failed, serve the stale answer without asking again for this long [s] "
          "(RFC 8767 §4 failure recheck, as BIND's stale-refresh-time), 0..3600; 0: ask every "
          "time");

namespace onepass::dns {
namespace {

// "example.com" or "example.com." or "." as an uncompressed wire name.
absl::StatusOr<std::string> WireNameFromText(const std::string& text) {
  std::string wire;
  if (text != ".") {
    for (absl::string_view label : absl::StrSplit(text, '.', absl::SkipEmpty())) {
      if (label.size() > 63) {
        return absl::InvalidArgumentError(absl::StrCat("label '", label, "' is over 63 bytes"));
      }
      wire.push_back(static_cast<char>(label.size()));
      wire.append(label.data(), label.size());
    }
  }
  wire.push_back('\0');
  if (wire.size() > 255) return absl::InvalidArgumentError("name over 255 bytes");
  return wire;
}

absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFrontendFromFlags() {
  FrontendConfig config;
  if (!absl::GetFlag(FLAGS_zone).empty()) {
    return absl::InvalidArgumentError(
        "--zone and --dns-backend (or --dns-backends-file) exclude each other: serve zones, or "
        "forward to backends");
  }
  // One list of backends, not two: with both, a reload could remove only some of them, and
  // which backends serve would be read from two places (dnsdist and Unbound's forward-zone
  // also keep them in one configuration, reloaded whole).
  config.backends_file = absl::GetFlag(FLAGS_dns_backends_file);
  if (!config.backends_file.empty() && !absl::GetFlag(FLAGS_dns_backend).empty()) {
    return absl::InvalidArgumentError(
        "--dns-backend and --dns-backends-file exclude each other: list the backends in the "
        "file (read again on SIGHUP), or on the command line (fixed until restart)");
  }
  size_t backend_count = 0;
  if (!config.backends_file.empty()) {
    const int max_backends = absl::GetFlag(FLAGS_dns_max_backends);
    if (max_backends < 1 || max_backends > 256) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dns-max-backends=", max_backends, " is outside 1..256"));
    }
    absl::StatusOr<std::vector<SocketAddress>> listed =
        ReadBackendsFile(config.backends_file, static_cast<size_t>(max_backends));
    if (!listed.ok()) return listed.status();
    backend_count = listed->size();
    // Every slot there is from the start: the counters are sized once (server/server.cc).
    config.backends = *std::move(listed);
    config.backends.resize(static_cast<size_t>(max_backends));
  }
  for (const std::string& text : absl::GetFlag(FLAGS_dns_backend)) {
    absl::StatusOr<SocketAddress> address =
        ParseSocketAddress(text, {.what = "--dns-backend", .min_port = 1});
    if (!address.ok()) return address.status();
    config.backends.push_back(*address);
    ++backend_count;
  }
  const int timeout_ms = absl::GetFlag(FLAGS_dns_backend_timeout_ms);
  if (timeout_ms < 10 || timeout_ms > 30000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns-backend-timeout-ms=", timeout_ms, " is outside 10..30000"));
  }
  config.timeout = absl::Milliseconds(timeout_ms);
  const int udp_timeout_ms = absl::GetFlag(FLAGS_dns_backend_udp_timeout_ms);
  if (udp_timeout_ms < 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns-backend-udp-timeout-ms=", udp_timeout_ms, " is below 5"));
  }
  config.udp_timeout = absl::Milliseconds(udp_timeout_ms);
  config.down_after = absl::GetFlag(FLAGS_dns_backend_down_after);
  if (config.down_after < 1) {
    return absl::InvalidArgumentError("--dns-backend-down-after must be at least 1");
  }
  const int max_in_flight = absl::GetFlag(FLAGS_dns_max_in_flight);
  if (max_in_flight < 1 || max_in_flight > 65536 * static_cast<int>(backend_count)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns-max-in-flight=", max_in_flight, " is outside 1..65536 per backend"));
  }
  config.max_in_flight = static_cast<size_t>(max_in_flight);
  absl::StatusOr<std::string> probe = WireNameFromText(absl::GetFlag(FLAGS_dns_probe_name));
  if (!probe.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--dns-probe-name: ", probe.status().message()));
  }
  config.probe_name_wire = *probe;
  config.tcp_connections = absl::GetFlag(FLAGS_dns_backend_tcp_connections);
  if (config.tcp_connections < 1 || config.tcp_connections > 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--dns-backend-tcp-connections=", config.tcp_connections, " is outside 1..64"));
  }
  config.port_queries = absl::GetFlag(FLAGS_dns_backend_port_queries);
  if (config.port_queries < 1 || config.port_queries > 65536) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns-backend-port-queries=", config.port_queries, " is outside 1..65536"));
  }
  config.max_ports = absl::GetFlag(FLAGS_dns_backend_max_ports);
  if (config.max_ports < 1 || config.max_ports > 16384) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns-backend-max-ports=", config.max_ports, " is outside 1..16384"));
  }
  const int tcp_idle_ms = absl::GetFlag(FLAGS_dns_backend_tcp_idle_ms);
  if (tcp_idle_ms < 100 || tcp_idle_ms > 600000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns-backend-tcp-idle-ms=", tcp_idle_ms, " is outside 100..600000"));
  }
  config.tcp_idle_timeout = absl::Milliseconds(tcp_idle_ms);
  const int cache_entries = absl::GetFlag(FLAGS_dns_cache_entries);
  const int max_ttl = absl::GetFlag(FLAGS_dns_cache_max_ttl);
  const int max_negative_ttl = absl::GetFlag(FLAGS_dns_cache_max_negative_ttl);
  if (cache_entries < 0 || cache_entries > 10'000'000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns-cache-entries=", cache_entries, " is outside 0..10000000"));
  }
  if (max_ttl < 1 || max_negative_ttl < 1) {
    return absl::InvalidArgumentError(
        "--dns-cache-max-ttl and --dns-cache-max-negative-ttl must be at least 1 second");
  }
  config.cache.entries = static_cast<size_t>(cache_entries);
  config.cache.max_ttl = static_cast<uint32_t>(max_ttl);
  config.cache.max_negative_ttl = static_cast<uint32_t>(max_negative_ttl);
  const int stale = absl::GetFlag(FLAGS_dns_serve_stale_seconds);
  if (stale < 0 || stale > 7 * 86400) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns-serve-stale-seconds=", stale, " is outside 0..604800 (a week)"));
  }
  config.cache.serve_stale_seconds = static_cast<uint32_t>(stale);
  const int client_timeout_ms = absl::GetFlag(FLAGS_dns_stale_answer_client_timeout_ms);
  if (client_timeout_ms < 0 || (client_timeout_ms > 0 && client_timeout_ms >= timeout_ms)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns-stale-answer-client-timeout-ms=", client_timeout_ms, " is outside 0..",
                     timeout_ms - 1,
                     ": the stale answer must come before the --dns-backend-timeout-ms "
                     "deadline; lower it or raise the timeout"));
  }
  if (client_timeout_ms > 0 && stale == 0) {
    return absl::InvalidArgumentError(
        "--dns-stale-answer-client-timeout-ms needs --dns-serve-stale-seconds > 0: without "
        "stale answers kept there is nothing to serve when it fires");
  }
  config.stale_client_timeout = absl::Milliseconds(client_timeout_ms);
  const int stale_refresh = absl::GetFlag(FLAGS_dns_stale_refresh_seconds);
  if (stale_refresh < 0 || stale_refresh > 3600) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns-stale-refresh-seconds=", stale_refresh, " is outside 0..3600"));
  }
  config.cache.stale_refresh_seconds = static_cast<uint32_t>(stale_refresh);
  std::string names;
  for (const SocketAddress& backend : config.backends) {
    if (backend.length == 0) continue;  // a vacant slot
    names += (names.empty() ? "" : ", ") + backend.ToString();
  }
  LogInfo("dns: forwarding to %s (timeout %d ms)", names, timeout_ms);
  return std::make_unique<FrontendHandlerFactory>(std::move(config));
}

// Reads the zone files (or the embedded zone) and, with --dnssec_keys, signs them.
absl::StatusOr<std::vector<ZoneSource>> ReadSources(absl::Time now) {
  std::vector<ZoneSource> sources;
  const std::vector<std::string> files = absl::GetFlag(FLAGS_zone);
  if (files.empty()) {
    sources.push_back(ZoneSource{"<embedded default zone>", std::string(DefaultZoneText())});
  }
  for (const std::string& path : files) {
    absl::StatusOr<ZoneSource> source = ReadZoneFile(path);
    if (!source.ok()) return source.status();
    sources.push_back(*std::move(source));
  }
  const std::string keys = absl::GetFlag(FLAGS_dnssec_keys);
  if (keys.empty()) return sources;
  const std::string denial = absl::GetFlag(FLAGS_dnssec_denial);
  const int days = absl::GetFlag(FLAGS_dnssec_validity_days);
  if (denial != "nsec" && denial != "nsec3") {
    return absl::InvalidArgumentError("--dnssec_denial must be nsec or nsec3");
  }
  if (days < 1 || days > 365) {
    return absl::InvalidArgumentError("--dnssec_validity_days must be 1..365");
  }
  SigningConfig config;
  config.keys_dir = keys;
  config.nsec3 = denial == "nsec3";
  config.inception = static_cast<uint32_t>(absl::ToUnixSeconds(now - absl::Hours(1)));
  config.expiration = static_cast<uint32_t>(absl::ToUnixSeconds(now + absl::Hours(24) * days));
  for (ZoneSource& source : sources) {
    absl::StatusOr<ZoneSource> signed_source = SignZone(source, config);
    if (!signed_source.ok()) return signed_source.status();
    source = *std::move(signed_source);
  }
  return sources;
}

// "A", "NSEC3", or "TYPE65280" (RFC 3597 §5) for types ldns does not know.
std::string TypeName(uint16_t type) {
  const ldns_rr_descriptor* descriptor = ldns_rr_descript(type);
  if (descriptor != nullptr && descriptor->_name != nullptr) return descriptor->_name;
  return absl::StrCat("TYPE", type);
}

// One line per signed zone: its earliest RRSIG expiry, as a warning when it is near or past
// (RFC 4035 §5.3.1: validators reject expired signatures, so the zone would go bogus).
void ReportSignatures(const Zone& zone, absl::Time now, absl::Duration warn_within) {
  const std::optional<SignatureExpiry>& expiry = zone.earliest_expiry();
  if (!expiry.has_value()) return;
  const absl::Time when = absl::FromUnixSeconds(expiry->expiration);
  const std::string at =
      absl::StrCat(absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", when, absl::UTCTimeZone()), " (",
                   NameToText(expiry->owner), " ", TypeName(expiry->type_covered), ")");
  const char* denial = zone.denial().has_nsec3() ? "NSEC3" : "NSEC";
  if (when <= now) {
    LogWarning("dns: zone %s: signatures EXPIRED: earliest expiry %s; re-sign the zone",
               NameToText(zone.origin()), at);
  } else if (when - now < warn_within) {
    LogWarning("dns: zone %s: signatures expire soon: earliest expiry %s",
               NameToText(zone.origin()), at);
  } else {
    LogInfo("dns: zone %s signed (%s), earliest signature expiry %s", NameToText(zone.origin()),
            denial, at);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags() {
  if (!absl::GetFlag(FLAGS_dns_backend).empty() ||
      !absl::GetFlag(FLAGS_dns_backends_file).empty()) {
    return NewFrontendFromFlags();
  }
  ResponderConfig config;
  const int udp_size = absl::GetFlag(FLAGS_dns_edns_udp_size);
  if (udp_size < 512 || udp_size > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns_edns_udp_size=", udp_size, " is outside 512..65535"));
  }
  config.edns_udp_size = static_cast<uint16_t>(udp_size);
  const int precompile_mb = absl::GetFlag(FLAGS_dns_precompile_max_mb);
  if (precompile_mb < 0) {
    return absl::InvalidArgumentError("--dns_precompile_max_mb must not be negative");
  }
  config.precompile_max_bytes = static_cast<size_t>(precompile_mb) << 20;
  const int max_iterations = absl::GetFlag(FLAGS_dns_nsec3_max_iterations);
  if (max_iterations < 0 || max_iterations > 65535) {
    return absl::InvalidArgumentError("--dns_nsec3_max_iterations is outside 0..65535");
  }
  ZoneLoadOptions load_options;
  load_options.max_nsec3_iterations = static_cast<uint16_t>(max_iterations);
  const int include_depth = absl::GetFlag(FLAGS_dns_zone_include_depth);
  if (include_depth < 0 || include_depth > 64) {
    return absl::InvalidArgumentError("--dns_zone_include_depth is outside 0..64");
  }
  load_options.text.max_include_depth = include_depth;
  const int max_errors = absl::GetFlag(FLAGS_dns_zone_max_errors);
  if (max_errors < 1 || max_errors > 10000) {
    return absl::InvalidArgumentError("--dns_zone_max_errors is outside 1..10000");
  }
  load_options.text.max_errors = max_errors;
  // Start-up and reload code, not the data path: reading the clock here is fine.
  const absl::Time now = absl::Now();
  LoadPhaseTimer phases;
  absl::StatusOr<std::vector<ZoneSource>> sources = ReadSources(now);
  if (!sources.ok()) return sources.status();
  phases.Mark(absl::GetFlag(FLAGS_dnssec_keys).empty() ? "read" : "read+sign");
  load_options.phases = &phases;
  absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> snapshot =
      BuildSnapshot(*std::move(sources), load_options);
  if (!snapshot.ok()) return snapshot.status();
  const absl::Duration warn_within = absl::Hours(24) * absl::GetFlag(FLAGS_dns_signature_warn_days);
  for (const auto& zone : (*snapshot)->zones()) {
    LogInfo("dns: serving zone %s (%d names)", NameToText(zone->origin()), zone->node_count());
    ReportSignatures(*zone, now, warn_within);
  }
  phases.Mark("index");  // the log lines above
  auto factory = std::make_unique<DnsHandlerFactory>(*std::move(snapshot), config);
  phases.Mark("precompile");
  factory->set_load_phases(phases.phases());
  if (const PrecompiledAnswers* precompiled = factory->precompiled()) {
    LogInfo("dns: %d answers precompiled (%d KiB)%s", precompiled->count(),
            precompiled->bytes() / 1024,
            precompiled->complete() ? "" : "; limit reached, the rest is rendered per query");
  }
  return factory;
}

}  // namespace onepass::dns
