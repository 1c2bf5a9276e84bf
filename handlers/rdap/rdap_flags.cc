#include "handlers/rdap/rdap_flags.h"

#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "handlers/rdap/rdap_handler.h"
#include "handlers/whois/whois_db.h"
#include "handlers/whois/whois_embedded_db.h"
#include "handlers/whois/whois_flags.h"

ABSL_FLAG(std::string, rdap_base_url, "http://localhost/",
          "Where clients reach this RDAP service, ending in '/': the base of every link in the "
          "answers (RFC 9083 §4.2); its path, if any, is also accepted in front of queries. "
          "Give the https:// URL when serving HTTPS with --tls-listen (RFC 7481 §3 asks for "
          "https).");
ABSL_FLAG(int, rdap_search_max_results, 10,
          "Domains one /domains?name= search answers at most (more: the answer says it is "
          "truncated, RFC 9083 §4.8); 0 turns search off (501).");
ABSL_FLAG(int, rdap_search_min_prefix, 2,
          "Characters a search pattern must have before its '*' (shorter: 422).");
ABSL_FLAG(int, rdap_cache_max_age_s, 300,
          "Cache-Control max-age of RDAP answers [s] (RFC 9111 §5.2.2.1).");
ABSL_FLAG(int, rdap_max_request_bytes, 4096,
          "Longest RDAP request head (request line and header fields) [bytes]; longer: 414 "
          "or 431.");

namespace onepass::rdap {
namespace {

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

absl::Status ReadConfig(RdapConfig& config) {
  config.base_url = absl::GetFlag(FLAGS_rdap_base_url);
  if (!(absl::StartsWith(config.base_url, "http://") ||
        absl::StartsWith(config.base_url, "https://")) ||
      !absl::EndsWith(config.base_url, "/")) {
    return absl::InvalidArgumentError(absl::StrCat("--rdap-base-url ", config.base_url,
                                                   ": an http:// or https:// URL ending in '/'"));
  }
  const size_t authority = config.base_url.find("//") + 2;
  const size_t path = config.base_url.find('/', authority);
  config.path.base_path = config.base_url.substr(path, config.base_url.size() - path - 1);
  const int max_results = absl::GetFlag(FLAGS_rdap_search_max_results);
  const int min_prefix = absl::GetFlag(FLAGS_rdap_search_min_prefix);
  const int max_age = absl::GetFlag(FLAGS_rdap_cache_max_age_s);
  const int max_request = absl::GetFlag(FLAGS_rdap_max_request_bytes);
  if (max_results < 0 || max_results > 1000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rdap-search-max-results ", max_results, ": choose 0 to 1000"));
  }
  if (min_prefix < 1 || min_prefix > 63) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rdap-search-min-prefix ", min_prefix, ": choose 1 to 63"));
  }
  if (max_age < 0 || max_age > 86400 * 7) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rdap-cache-max-age-s ", max_age, ": choose 0 to 604800"));
  }
  if (max_request < 512 || max_request > 65536) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rdap-max-request-bytes ", max_request, ": choose 512 to 65536"));
  }
  config.search_max_results = static_cast<size_t>(max_results);
  config.path.search_enabled = max_results > 0;
  config.path.search_min_prefix = static_cast<size_t>(min_prefix);
  config.cache_max_age_s = max_age;
  config.http.max_header_bytes = static_cast<size_t>(max_request);
  config.http.max_body_bytes = 0;
  absl::StatusOr<whois::WhoisRateLimitConfig> limit = whois::RateLimitConfigFromFlags();
  if (!limit.ok()) return limit.status();
  config.rate_limit = *std::move(limit);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags() {
  RdapConfig config;
  if (absl::Status s = ReadConfig(config); !s.ok()) return s;
  const std::string path = whois::WhoisDbPathFromFlags();
  const std::string source = path.empty() ? "embedded whois database" : path;
  // Startup only: the load time is logged for operators; handlers never read the clock.
  const absl::Time start = absl::Now();
  RdapSnapshotBuilder builder(config.base_url);
  absl::Status loaded = path.empty()
                            ? whois::LoadWhoisRecordsText(whois::EmbeddedWhoisDb(), source, builder)
                            : whois::LoadWhoisRecordsFile(path, builder);
  if (!loaded.ok()) return loaded;
  std::shared_ptr<const RdapSnapshot> snapshot = builder.Build();
  const absl::Duration took = absl::Now() - start;
  const RdapSnapshotStats& stats = snapshot->stats();
  LogInfo(
      "rdap: loaded %d domains, %d name servers, %d registrars, %d contacts from %s in %.3f s; "
      "%.1f MiB (%.1f MiB JSON, %.1f MiB indexes, %d shared pieces); links name "
      "%s (HTTPS: --tls-listen)",
      stats.domains, stats.nameservers, stats.registrars, stats.contacts, source,
      absl::ToDoubleSeconds(took), MiB(stats.text_bytes + stats.index_bytes), MiB(stats.text_bytes),
      MiB(stats.index_bytes), stats.shared_pieces, config.base_url);
  return std::make_unique<RdapHandlerFactory>(std::move(snapshot), std::move(config));
}

}  // namespace onepass::rdap
