#include "handlers/whois/whois_flags.h"

#include "absl/status/status.h"

namespace onepass::whois {

absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags() {
  return absl::UnimplementedError("the WHOIS handler is not built yet");
}

}  // namespace onepass::whois
