#include "handlers/dns/dns_flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "handlers/dns/default_zone.h"
#include "handlers/dns/dns_handler.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/zone_loader.h"

// server/arguments.cc merges a repeated --zone (any list flag) into one comma-separated value.
ABSL_FLAG(std::vector<std::string>, zone, {},
          "DNS: RFC 1035 zone file to serve (origin = owner of the SOA); repeat the flag "
          "or separate with commas for several zones. Without it the embedded example.com "
          "zone is served. SIGHUP re-reads the files");
ABSL_FLAG(int, dns_edns_udp_size, 1232,
          "DNS: UDP payload size advertised in EDNS(0) OPT records (RFC 6891 §6.2.5), 512..65535");

ABSL_FLAG(int, dns_precompile_max_mb, 256,
          "DNS: memory for answers rendered at load time (name x type, NSD-style); names "
          "beyond it are answered by the normal path. 0 turns precompilation off");

namespace onepass::dns {

absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags() {
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
  const std::vector<std::string> files = absl::GetFlag(FLAGS_zone);
  absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> snapshot =
      files.empty()
          ? BuildSnapshot({ZoneSource{"<embedded default zone>", std::string(DefaultZoneText())}})
          : LoadZoneFiles(files);
  if (!snapshot.ok()) return snapshot.status();
  for (const auto& zone : (*snapshot)->zones()) {
    LogInfo("dns: serving zone %s (%d names)", NameToText(zone->origin()), zone->node_count());
  }
  auto factory = std::make_unique<DnsHandlerFactory>(*std::move(snapshot), config);
  if (const PrecompiledAnswers* precompiled = factory->precompiled()) {
    LogInfo("dns: %d answers precompiled (%d KiB)%s", precompiled->count(),
            precompiled->bytes() / 1024,
            precompiled->complete() ? "" : "; limit reached, the rest is rendered per query");
  }
  return factory;
}

}  // namespace onepass::dns
