// The ocsp handler's flags and its factory built from them. onepassd accepts each flag with
// dashes (as written here) or with Abseil's underscores (--ocsp_responses).
//
//   --ocsp-responses DIR          pre-signed DER responses, one file each (default: the set the
//                                 build generated with scripts/make-ocsp-testdata.sh, see
//                                 DefaultOcspResponsesDir())
//   --ocsp-path /                 URL path: POST to it, GET <path>/<base64 request>
//   --ocsp-max-header-bytes 8192  request line + header fields (414/431 beyond)
//   --ocsp-max-body-bytes 16384   POST body (413 beyond)
//   --ocsp-max-response-bytes 16384  largest pre-signed response loaded
#ifndef ONEPASS_HANDLERS_OCSP_OCSP_FLAGS_H_
#define ONEPASS_HANDLERS_OCSP_OCSP_FLAGS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "handlers/handler.h"

namespace onepass::ocsp {

// Loads the data named by this protocol's flags (or the embedded default) and returns the factory.
absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags();

// The directory the build generated the default data set into (compiled in): its responses/
// subdirectory is --ocsp-responses's default, and it also holds ca.pem, good.pem, revoked.pem,
// unknown.pem and the matching *.req.der requests for demos and tests.
std::string DefaultOcspDataDir();

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_OCSP_FLAGS_H_
