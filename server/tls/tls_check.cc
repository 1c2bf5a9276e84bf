#include "server/tls/tls_check.h"

#include "server/tls/tls_server_context.h"

namespace onepass::tls {

absl::StatusOr<TlsCheckReport> CheckTlsConfig(const TlsConfig& config, absl::Time now) {
  absl::StatusOr<std::shared_ptr<const TlsServerContext>> context =
      TlsServerContext::Create(config, now);
  if (!context.ok()) return context.status();
  return TlsCheckReport{(*context)->Summary(), (*context)->warnings()};
}

}  // namespace onepass::tls
