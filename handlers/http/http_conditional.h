// Conditional requests (RFC 9110 §13): does a request's validator match the response's?
#ifndef ONEPASS_HANDLERS_HTTP_HTTP_CONDITIONAL_H_
#define ONEPASS_HANDLERS_HTTP_HTTP_CONDITIONAL_H_

#include "absl/strings/string_view.h"

namespace onepass::http {

// If-None-Match (RFC 9110 §13.1.2): true when `field` is "*" or a list of entity-tags one of
// which equals `etag` (the response's strong tag, without quotes) in the weak comparison
// (a W/ prefix is ignored, §8.8.3.2). No allocation.
bool IfNoneMatchMatches(absl::string_view field, absl::string_view etag);

}  // namespace onepass::http

#endif  // ONEPASS_HANDLERS_HTTP_HTTP_CONDITIONAL_H_
