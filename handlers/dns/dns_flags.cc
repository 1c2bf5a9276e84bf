#include "handlers/dns/dns_flags.h"

#include "absl/status/status.h"

namespace onepass::dns {

absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags() {
  return absl::UnimplementedError("the DNS handler is not built yet");
}

}  // namespace onepass::dns
