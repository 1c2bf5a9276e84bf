// The rdap handler's flags and its factory built from them.
#ifndef ONEPASS_HANDLERS_RDAP_RDAP_FLAGS_H_
#define ONEPASS_HANDLERS_RDAP_RDAP_FLAGS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "handlers/handler.h"

namespace onepass::rdap {

// Loads the Whois database the flags name (--whois-db, or the embedded default) as RDAP
// answers and returns the factory.
absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags();

}  // namespace onepass::rdap

#endif  // ONEPASS_HANDLERS_RDAP_RDAP_FLAGS_H_
