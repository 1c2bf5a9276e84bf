#include "server/tls/tls_engine.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tls/onepass/onepass_engine.h"
#include "server/tls/openssl/openssl_engine.h"
#include "server/tls/tls_server_context.h"

namespace onepass::tls {

absl::StatusOr<std::unique_ptr<TlsEngine>> MakeTlsEngine(const TlsServerContext& context,
                                                         absl::Time now, CertificateFacts* facts) {
  const std::string& engine = context.config().engine;
  if (engine == "openssl") return MakeOpenSslEngine(context, now, facts);
  if (engine == "onepass") return OnepassEngine::Create(context, now, facts);
  return absl::InvalidArgumentError(
      absl::StrCat("--tls-engine \"", engine, "\": no such TLS engine; use openssl or onepass"));
}

}  // namespace onepass::tls
