#include "handlers/registry.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "handlers/dns/dns_flags.h"
#include "handlers/ocsp/ocsp_flags.h"
#include "handlers/rdap/rdap_flags.h"
#include "handlers/whois/whois_flags.h"

namespace onepass {

absl::StatusOr<std::unique_ptr<HandlerFactory>> NewHandlerFactory(absl::string_view name) {
  if (name == "dns") return dns::NewFactoryFromFlags();
  if (name == "ocsp") return ocsp::NewFactoryFromFlags();
  if (name == "whois") return whois::NewFactoryFromFlags();
  if (name == "rdap") return rdap::NewFactoryFromFlags();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --handler '", name, "'; choose one of ", HandlerNames()));
}

ProtocolDefaults ProtocolDefaultsFor(absl::string_view name) {
  if (name == "dns") return {.alpn = {"dot"}, .keepalive = absl::Seconds(2)};
  if (name == "ocsp" || name == "rdap") return {.alpn = {"http/1.1"}};
  return {};
}

std::string HandlerNames() { return "dns|ocsp|whois|rdap"; }

}  // namespace onepass
