// The ocsp handler's flags and its factory built from them. onepassd accepts each flag with
// dashes (as written here) or with Abseil's underscores (--ocsp_responses).
//
//   --ocsp-responses DIR          pre-signed DER responses, one file each (default: the
//                                 installed kDefaultOcspResponsesDir; a test set is made by
//                                 scripts/make-ocsp-testdata.sh OUT in OUT/responses)
//   --ocsp-path /                 URL path: POST to it, GET <path>/<base64 request>
//   --ocsp-max-header-bytes 8192  request line + header fields (414/431 beyond)
//   --ocsp-max-body-bytes 16384   POST body (413 beyond)
//   --ocsp-max-response-bytes 16384  largest pre-signed response loaded
#ifndef ONEPASS_HANDLERS_OCSP_OCSP_FLAGS_H_
#define ONEPASS_HANDLERS_OCSP_OCSP_FLAGS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "handlers/handler.h"

namespace onepass::ocsp {

// Where an installed onepassd looks for its responses when --ocsp-responses is not given.
inline constexpr absl::string_view kDefaultOcspResponsesDir = "/etc/onepass/ocsp";

// Loads the responses named by this protocol's flags and returns the factory. Without
// --ocsp-responses and with no kDefaultOcspResponsesDir the error says what to pass.
absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags();

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_OCSP_FLAGS_H_
