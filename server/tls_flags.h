// onepassd's TLS flags (--tls-listen, --tls-cert, --tls-key, --tls-ticket-keys, --tls12), read
// into the TLS layer's config and context (server/tls/). At start, by --check and on each
// SIGHUP: the same flags name the same files, read again.
#ifndef ONEPASS_SERVER_TLS_FLAGS_H_
#define ONEPASS_SERVER_TLS_FLAGS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/server_config.h"
#include "server/tls/tls_server_context.h"

namespace onepass {

// The engine when neither --tls-engine nor kTlsEngineVariable names one: TlsConfig's
// (server/tls/tls_config.h; tls::MakeTlsEngine knows the names).
using tls::kDefaultTlsEngine;
// The environment variable that names the engine when --tls-engine is not given.
inline constexpr char kTlsEngineVariable[] = "ONEPASS_TLS_ENGINE";

// Which TLS engine serves: `flag_value` (--tls-engine's) when not empty, else `from_env`
// (kTlsEngineVariable's value, null when unset) when not empty, else kDefaultTlsEngine. An
// unknown name is an InvalidArgument error that says where it came from: the flag or the
// variable.
absl::StatusOr<std::string> ChooseTlsEngine(absl::string_view flag_value, const char* from_env);
// ChooseTlsEngine of --tls-engine and the environment.
absl::StatusOr<std::string> TlsEngineFromFlags();

// --tls-listen's addresses, as given, and the handshake limits, into `config`.
void TlsFlagsIntoConfig(ServerConfig& config);

// The context the flags name, built and checked (certificate chain and key match, ticket key
// file); its warnings (expiry) are logged. Null when no --tls-cert is given. Errors name the
// flag and the file. `default_alpn` is the protocol's (ProtocolDefaults::alpn), used unless
// --tls-alpn is given.
absl::StatusOr<std::shared_ptr<const tls::TlsServerContext>> LoadTlsFromFlags(
    absl::Time now, const std::vector<std::string>& default_alpn);

}  // namespace onepass

#endif  // ONEPASS_SERVER_TLS_FLAGS_H_
