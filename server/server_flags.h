// onepassd's flags: their definitions (each with its meaning and default, as --help prints
// them), --help itself, and the parse of argv into a checked ServerConfig and the TLS context
// the flags name. ServerMain (server_main.h) runs the server from what this returns.
#ifndef ONEPASS_SERVER_SERVER_FLAGS_H_
#define ONEPASS_SERVER_SERVER_FLAGS_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "server/server_config.h"
#include "server/server_main.h"
#include "server/tls/tls_server_context.h"

// The flags ServerMain reads itself, beyond the configuration.
ABSL_DECLARE_FLAG(std::string, handler);
ABSL_DECLARE_FLAG(bool, check);
ABSL_DECLARE_FLAG(std::string, metrics_listen);
ABSL_DECLARE_FLAG(int, health_stall_ms);
ABSL_DECLARE_FLAG(std::string, handover_socket);

namespace onepass {

// What start-up begins with: the configuration, and the TLS context the flags name (null
// without --tls-cert), which the server holds apart from the plain data of ServerConfig.
struct Parsed {
  ServerConfig config;
  std::shared_ptr<const tls::TlsServerContext> tls;
};

// The flags, expanded (--flagfile), normalized and parsed, the log settings applied, and the
// server's configuration checked (cheap checks first: a zone may take long to load), with the
// defaults of the --handler's protocol (`defaults_of`). Empty when --help was asked for and
// printed.
absl::StatusOr<std::optional<Parsed>> ParseFlags(int argc, char** argv,
                                                 const ProtocolDefaultsMaker& defaults_of);

}  // namespace onepass

#endif  // ONEPASS_SERVER_SERVER_FLAGS_H_
