// The reason phrases of the status codes onepass's HTTP responders send (RFC 9110 §15).
#ifndef ONEPASS_HANDLERS_HTTP_REASON_PHRASE_H_
#define ONEPASS_HANDLERS_HTTP_REASON_PHRASE_H_

#include "absl/strings/string_view.h"

namespace onepass::http {

// "Bad Request" for 400, etc.; "Error" for codes no responder sends.
absl::string_view HttpReasonPhrase(int status);

}  // namespace onepass::http

#endif  // ONEPASS_HANDLERS_HTTP_REASON_PHRASE_H_
