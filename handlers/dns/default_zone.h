// The zone onepassd serves when no --zone is given, compiled into the binary so that
// `onepassd --handler dns` answers with no files. The same text is committed as
// tests/data/example.com.zone (a unit test checks they are identical) so that the
// differential test can serve exactly this zone from NSD.
#ifndef ONEPASS_HANDLERS_DNS_DEFAULT_ZONE_H_
#define ONEPASS_HANDLERS_DNS_DEFAULT_ZONE_H_

#include "absl/strings/string_view.h"

namespace onepass::dns {

// Master-file text (RFC 1035 §5) of example.com.
absl::string_view DefaultZoneText();

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DEFAULT_ZONE_H_
