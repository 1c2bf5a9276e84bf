// The ocsp handler's flags and its factory built from them.
#ifndef ONEPASS_HANDLERS_OCSP_OCSP_FLAGS_H_
#define ONEPASS_HANDLERS_OCSP_OCSP_FLAGS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "handlers/handler.h"

namespace onepass::ocsp {

// Loads the data named by this protocol's flags (or the embedded default) and returns the factory.
absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags();

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_OCSP_FLAGS_H_
