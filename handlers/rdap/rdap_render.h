// The RDAP JSON of the registry's objects (RFC 9083) as the gTLD RDAP Response Profile
// (February 2024) asks, rendered from the Whois database's records (whois_records.h).
//
// A domain answer is the concatenation of pieces so that what many domains share is rendered
// and stored once (rdap_snapshot.h interns them): the top ("{" and rdapConformance), the
// domain's own members, the last event (the database's update time), its status list, its registrar
// entity, its contact entities, the RFC 9537 redaction list, its name servers with secureDNS,
// and the bottom (notices, "}"). Each piece but the top and the bottom starts with a comma and
// holds whole members, so the same pieces embed a domain in a search result ("{" + pieces + "}").
// RenderDomain renders a whole answer from the records in one go: the test that the precompiled
// answers are byte-identical to it (tests/unit/handlers/rdap/rdap_snapshot_test.cc) compares the
// two.
//
// Output is compact JSON (no whitespace), UTF-8, with every string escaped (RFC 8259 §7).
#ifndef ONEPASS_HANDLERS_RDAP_RDAP_RENDER_H_
#define ONEPASS_HANDLERS_RDAP_RDAP_RENDER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "handlers/whois/whois_records.h"

namespace onepass::rdap {

// What every answer of one snapshot shares.
struct RdapRenderConfig {
  // Where this server is reached, ending in '/': links are "<base>domain/NAME" (RFC 9083
  // §4.2 asks for absolute URIs). https:// when served over --tls-listen (RFC 7481 §3
  // requires HTTPS in production).
  std::string base_url = "http://localhost/";
  // The "last update of RDAP database" event (RFC 3339 UTC), the Whois "Last update" time.
  std::string last_update;
  // The terms of use, one line each (the Whois footer lines).
  std::vector<std::string> terms;
};

// A name server's data as a domain answer shows it (glue addresses, if the file has them).
struct RdapHost {
  absl::string_view name;  // upper-case A-labels, as in the file
  absl::Span<const std::string> addresses;
};

// One contact in a domain: its role ("registrant", "administrative", "technical") and data.
struct RdapContactRole {
  absl::string_view role;
  const whois::ContactRecord* contact;
};

// RFC 8056 §2: the RDAP status of an EPP domain status ("clientHold" -> "client hold",
// "ok" -> "active"); empty for a value that is not an EPP status.
absl::string_view RdapStatusOfEpp(absl::string_view epp_status);

// The name for JSON: lower-case A-labels (ldhName), and the U-label form when the name holds
// an A-label (unicodeName, via libidn2; empty when there is none or it does not convert).
std::string LdhName(absl::string_view name);
std::string UnicodeName(absl::string_view name);

// JSON string literal of `text` (quotes included), appended.
void AppendJsonString(absl::string_view text, std::string* out);

// The pieces of a domain answer, in order (see the file comment).
void RenderTop(std::string* out);  // {"rdapConformance":[...],
// Its events are left open: the last one, the same for all domains, is the next piece.
void RenderDomainOwn(const whois::DomainRecord& domain, const whois::RegistrarRecord& registrar,
                     const RdapRenderConfig& config, std::string* out);
void RenderDomainEventsEnd(const RdapRenderConfig& config, std::string* out);
void RenderDomainStatus(absl::Span<const absl::string_view> statuses, std::string* out);
void RenderDomainRegistrar(const whois::RegistrarRecord& registrar, const RdapRenderConfig& config,
                           std::string* out);
// Closes the entities array the registrar piece opened with the contacts.
void RenderDomainContacts(absl::Span<const RdapContactRole> contacts, std::string* out);
// The RFC 9537 "redacted" list of those contacts (nothing without contacts): it depends only
// on which roles are there, so a handful of these serve every domain.
void RenderDomainRedactions(absl::Span<const RdapContactRole> contacts, std::string* out);
void RenderDomainHosts(absl::Span<const RdapHost> hosts, absl::string_view dnssec,
                       absl::Span<const absl::string_view> ds_data, const RdapRenderConfig& config,
                       std::string* out);
// ,"notices":[terms of service, status codes, inaccuracy complaint form]}
void RenderBottom(const RdapRenderConfig& config, std::string* out);

// A whole domain answer from the records, the pieces above in order.
std::string RenderDomain(const whois::DomainRecord& domain, const whois::RegistrarRecord& registrar,
                         absl::Span<const RdapContactRole> contacts,
                         absl::Span<const RdapHost> hosts, const RdapRenderConfig& config);

// Whole answers for the other lookups (RFC 9083 §5.2, §5.1, §7).
std::string RenderNameserver(const whois::NameserverRecord& nameserver,
                             const whois::RegistrarRecord* registrar,
                             const RdapRenderConfig& config);
std::string RenderRegistrarEntity(const whois::RegistrarRecord& registrar,
                                  const RdapRenderConfig& config);
std::string RenderContactEntity(const whois::ContactRecord& contact,
                                const RdapRenderConfig& config);
std::string RenderHelp(const RdapRenderConfig& config);

// An error answer (RFC 9083 §6): errorCode, title, description [reason].
void RenderError(int status, absl::string_view title, absl::string_view reason, std::string* out);

// The notice a truncated search result carries (RFC 9083 §4.8, §10.2.1).
void RenderTruncatedNotice(std::string* out);

}  // namespace onepass::rdap

#endif  // ONEPASS_HANDLERS_RDAP_RDAP_RENDER_H_
