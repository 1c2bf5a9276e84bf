// `onepassd --check` for TLS: builds the context exactly as serving would (so what --check
// accepts, serving accepts) and reports what it loaded and what needs the operator's care.
#ifndef ONEPASS_SERVER_TLS_TLS_CHECK_H_
#define ONEPASS_SERVER_TLS_TLS_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/tls/tls_config.h"

namespace onepass::tls {

struct TlsCheckReport {
  std::string summary;                // TlsServerContext::Summary(): one line per item
  std::vector<std::string> warnings;  // TlsServerContext::warnings(): expiry, not yet valid
};

// An error (unreadable file, key not matching the certificate, bad ticket key file) is what
// would stop onepassd from starting; warnings do not.
absl::StatusOr<TlsCheckReport> CheckTlsConfig(const TlsConfig& config, absl::Time now);

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_TLS_CHECK_H_
