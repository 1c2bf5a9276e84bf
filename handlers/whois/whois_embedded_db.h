// The small Whois database compiled into the binary (handlers/whois/default_whois.db), served
// when --whois-db is not given: example.com and a few more, with registrars, name servers and
// contacts.
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_EMBEDDED_DB_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_EMBEDDED_DB_H_

#include "absl/strings/string_view.h"

namespace onepass::whois {

// The text of default_whois.db, in the format of whois_db.h.
absl::string_view EmbeddedWhoisDb();

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_EMBEDDED_DB_H_
