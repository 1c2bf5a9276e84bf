// The whois handler's flags and its factory built from them.
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_FLAGS_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_FLAGS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "handlers/handler.h"
#include "handlers/whois/whois_rate_limiter.h"

namespace onepass::whois {

// Loads the data named by this protocol's flags (or the embedded default) and returns the factory.
absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags();

// What --handler rdap shares with Whois (the same database, the same scraping defence): the
// --whois-rate-limit-* flags, checked, and the --whois-db path ("" for the embedded data).
absl::StatusOr<WhoisRateLimitConfig> RateLimitConfigFromFlags();
std::string WhoisDbPathFromFlags();

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_FLAGS_H_
