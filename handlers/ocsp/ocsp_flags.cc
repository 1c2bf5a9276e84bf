#include "handlers/ocsp/ocsp_flags.h"

#include "absl/status/status.h"

namespace onepass::ocsp {

absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags() {
  return absl::UnimplementedError("the OCSP handler is not built yet");
}

}  // namespace onepass::ocsp
