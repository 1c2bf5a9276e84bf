// The DNS handler's flags (--zone ...) and its factory built from them.
#ifndef ONEPASS_HANDLERS_DNS_DNS_FLAGS_H_
#define ONEPASS_HANDLERS_DNS_DNS_FLAGS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "handlers/handler.h"

namespace onepass::dns {

// Loads the zones named by --zone (or the embedded default zone) and returns the factory.
absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags();

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DNS_FLAGS_H_
