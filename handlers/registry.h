// Maps --handler names to protocol factories. The one place that knows every protocol, so
// that server/ includes only handlers/handler.h and this header.
#ifndef ONEPASS_HANDLERS_REGISTRY_H_
#define ONEPASS_HANDLERS_REGISTRY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "handlers/handler.h"

namespace onepass {

// Builds the factory for protocol `name` from that protocol's own flags (--zone, ...), loading
// its data. Fails with a message that says which file or flag is wrong.
absl::StatusOr<std::unique_ptr<HandlerFactory>> NewHandlerFactory(absl::string_view name);

// The server-side defaults of protocol `name` (ProtocolDefaults): DNS keeps connections
// (RFC 7766 §6.2.3: a client may send its next query after reading an answer; 2 s, "of the
// order of seconds") and selects "dot" over TLS (RFC 7858 §3.1); OCSP and RDAP select
// "http/1.1" and serve single-shot clients; Whois closes after its answer (RFC 3912). An
// unknown name has none.
ProtocolDefaults ProtocolDefaultsFor(absl::string_view name);

// "dns|ocsp|whois|rdap", for --help and error messages.
std::string HandlerNames();

}  // namespace onepass

#endif  // ONEPASS_HANDLERS_REGISTRY_H_
