// Decodes the GET form of an OCSP request: "GET {url}/{url-encoding of base-64 encoding of the
// DER encoding of the OCSPRequest}" (RFC 6960 Appendix A.1, RFC 5019 §5).
//
// The path after the responder's prefix is percent-decoded (RFC 3986 §2.1; %2F, %2B, %3D are the
// usual ones, any %XX is accepted) and then base64-decoded (RFC 4648 §4). Raw '/', '+' and '='
// are base64 characters too: everything after the prefix is the request. Also accepted, because
// real clients send them: the URL-safe alphabet ('-', '_', RFC 4648 §5) and missing padding.
#ifndef ONEPASS_HANDLERS_OCSP_GET_REQUEST_DECODER_H_
#define ONEPASS_HANDLERS_OCSP_GET_REQUEST_DECODER_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/optional.h"
#include "absl/types/span.h"

namespace onepass::ocsp {

// Writes the decoded bytes into `out` and returns how many; nullopt when `encoded` is not valid
// percent-encoded base64 or the result does not fit in `out`. Allocation-free.
absl::optional<size_t> DecodeGetRequestPath(absl::string_view encoded, absl::Span<uint8_t> out);

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_GET_REQUEST_DECODER_H_
