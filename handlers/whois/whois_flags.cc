#include "handlers/whois/whois_flags.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "handlers/whois/whois_db.h"
#include "handlers/whois/whois_embedded_db.h"
#include "handlers/whois/whois_handler.h"
#include "handlers/whois/whois_rate_limiter.h"

ABSL_FLAG(std::string, whois_db, "",
          "Whois database file (TAB-separated records; see handlers/whois/README.md), served by "
          "--handler whois and --handler rdap. Empty: the small database compiled in "
          "(example.com and a few more).");
ABSL_FLAG(int, whois_max_query_bytes, 512,
          "Longest Whois query line accepted, without its CRLF [bytes]; a longer one gets an "
          "error reply and the connection is closed (RFC 3912).");

ABSL_FLAG(double, whois_rate_limit_qps, 2,
          "Whois (and RDAP) queries per second allowed per client address, sustained, per "
          "worker (a client's connections usually land on one worker); over it a query gets a "
          "one-line refusal (RDAP: 429). 0: no limit.");
ABSL_FLAG(int, whois_rate_limit_burst, 20,
          "Whois queries a client address may send at once before --whois-rate-limit-qps "
          "applies.");
ABSL_FLAG(int, whois_rate_limit_clients, 16384,
          "Client addresses each worker tracks for the Whois rate limit (24 bytes each; the "
          "least limited is forgotten first).");
ABSL_FLAG(std::string, whois_rate_limit_exempt, "127.0.0.0/8,::1/128",
          "Comma-separated address prefixes never rate limited (default: this host).");

namespace onepass::whois {
namespace {

// Bounds for --whois-max-query-bytes: room for any domain name (253) plus a keyword, and no
// more than a small read buffer.
constexpr int kMinQueryBytes = 64;
constexpr int kMaxQueryBytes = 16 * 1024;

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

absl::StatusOr<WhoisRateLimitConfig> RateLimitConfigFromFlags() {
  WhoisRateLimitConfig limit;
  limit.queries_per_second = absl::GetFlag(FLAGS_whois_rate_limit_qps);
  const int burst = absl::GetFlag(FLAGS_whois_rate_limit_burst);
  const int clients = absl::GetFlag(FLAGS_whois_rate_limit_clients);
  if (!(limit.queries_per_second >= 0) || limit.queries_per_second > 1e6) {
    return absl::InvalidArgumentError(
        absl::StrCat("--whois-rate-limit-qps ", limit.queries_per_second, ": choose 0 to 1e6"));
  }
  if (burst < 1 || burst > 1000000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--whois-rate-limit-burst ", burst, ": choose 1 to 1000000"));
  }
  if (clients < 4 || clients > (1 << 24)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--whois-rate-limit-clients ", clients, ": choose 4 to ", 1 << 24));
  }
  limit.burst = static_cast<uint32_t>(burst);
  limit.table_entries = static_cast<size_t>(clients);
  absl::StatusOr<std::vector<AddressPrefix>> exempt =
      ParseAddressPrefixList(absl::GetFlag(FLAGS_whois_rate_limit_exempt));
  if (!exempt.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--whois-rate-limit-exempt: ", exempt.status().message()));
  }
  limit.exempt = *std::move(exempt);

  return limit;
}

std::string WhoisDbPathFromFlags() { return absl::GetFlag(FLAGS_whois_db); }

absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags() {
  WhoisConfig config;
  const int max_query_bytes = absl::GetFlag(FLAGS_whois_max_query_bytes);
  if (max_query_bytes < kMinQueryBytes || max_query_bytes > kMaxQueryBytes) {
    return absl::InvalidArgumentError(absl::StrCat("--whois-max-query-bytes ", max_query_bytes,
                                                   ": choose ", kMinQueryBytes, " to ",
                                                   kMaxQueryBytes));
  }
  config.max_query_bytes = static_cast<size_t>(max_query_bytes);

  absl::StatusOr<WhoisRateLimitConfig> limit_or = RateLimitConfigFromFlags();
  if (!limit_or.ok()) return limit_or.status();
  config.rate_limit = *std::move(limit_or);
  const WhoisRateLimitConfig& limit = config.rate_limit;

  const std::string path = WhoisDbPathFromFlags();
  const std::string source = path.empty() ? "embedded whois database" : path;
  // Startup only: the load time is logged for operators; handlers never read the clock.
  const absl::Time start = absl::Now();
  absl::StatusOr<std::shared_ptr<const WhoisSnapshot>> snapshot =
      path.empty() ? LoadWhoisDbText(EmbeddedWhoisDb(), source) : LoadWhoisDbFile(path);
  if (!snapshot.ok()) return snapshot.status();
  const absl::Duration took = absl::Now() - start;

  const WhoisSnapshotStats& stats = (*snapshot)->stats();
  const size_t total = stats.text_bytes + stats.index_bytes;
  LogInfo(
      "whois: loaded %d domains, %d name servers, %d registrars, %d contacts from %s in %.3f s; "
      "%.1f MiB (%.1f MiB text, %.1f MiB indexes, %d shared blocks, %.0f bytes per domain); "
      "last update %s",
      stats.domains, stats.nameservers, stats.registrars, stats.contacts, source,
      absl::ToDoubleSeconds(took), MiB(total), MiB(stats.text_bytes), MiB(stats.index_bytes),
      stats.shared_pieces,
      stats.domains == 0 ? 0.0 : static_cast<double>(total) / static_cast<double>(stats.domains),
      (*snapshot)->last_update());
  if (limit.queries_per_second > 0) {
    LogInfo(
        "whois: rate limit %.3g queries/s, burst %d, per client address and per worker; "
        "%d clients tracked per worker; exempt: %s",
        limit.queries_per_second, limit.burst, limit.table_entries,
        absl::GetFlag(FLAGS_whois_rate_limit_exempt));
  }
  return std::make_unique<WhoisHandlerFactory>(*std::move(snapshot), config);
}

}  // namespace onepass::whois
