#include "handlers/whois/whois_flags.h"

#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "handlers/whois/whois_db.h"
#include "handlers/whois/whois_embedded_db.h"
#include "handlers/whois/whois_handler.h"

ABSL_FLAG(std::string, whois_db, "",
          "Whois database file (TAB-separated records; see handlers/whois/README.md). Empty: "
          "the small database compiled in (example.com and a few more).");
ABSL_FLAG(int, whois_max_query_bytes, 512,
          "Longest Whois query line accepted, without its CRLF [bytes]; a longer one gets an "
          "error reply and the connection is closed (RFC 3912).");

namespace onepass::whois {
namespace {

// Bounds for --whois-max-query-bytes: room for any domain name (253) plus a keyword, and no
// more than a small read buffer.
constexpr int kMinQueryBytes = 64;
constexpr int kMaxQueryBytes = 16 * 1024;

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags() {
  WhoisConfig config;
  const int max_query_bytes = absl::GetFlag(FLAGS_whois_max_query_bytes);
  if (max_query_bytes < kMinQueryBytes || max_query_bytes > kMaxQueryBytes) {
    return absl::InvalidArgumentError(absl::StrCat("--whois-max-query-bytes ", max_query_bytes,
                                                   ": choose ", kMinQueryBytes, " to ",
                                                   kMaxQueryBytes));
  }
  config.max_query_bytes = static_cast<size_t>(max_query_bytes);

  const std::string path = absl::GetFlag(FLAGS_whois_db);
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
      stats.shared_blocks,
      stats.domains == 0 ? 0.0 : static_cast<double>(total) / static_cast<double>(stats.domains),
      (*snapshot)->last_update());
  return std::make_unique<WhoisHandlerFactory>(*std::move(snapshot), config);
}

}  // namespace onepass::whois
