// The objects of a Whois database, as read from the file (views into the current line), and
// the text they are rendered to. The layout follows Verisign's .com/.net Whois (thin), with the
// contact blocks of the thick registries (ICANN RDDS: "Registrant Name:", ...) when a domain
// names contacts. Every line ends in CRLF (RFC 3912 §2 is line-oriented; registries use CRLF).
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_RECORDS_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_RECORDS_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace onepass::whois {

struct RegistrarRecord {
  uint32_t iana_id = 0;
  absl::string_view name;
  absl::string_view whois_server;
  absl::string_view url;
  absl::string_view abuse_email;
  absl::string_view abuse_phone;
  absl::string_view address;
  absl::string_view phone;
  absl::string_view email;
  // The registrar's RDAP base URL (the "related" link of its domains' RDAP answers, gTLD RDAP
  // Response Profile §2.2); empty when the file gives none (Whois does not print it).
  absl::string_view rdap_url;
};

struct ContactRecord {
  absl::string_view handle;
  absl::string_view name;
  absl::string_view organization;
  absl::string_view street;
  absl::string_view city;
  absl::string_view state;
  absl::string_view postal_code;
  absl::string_view country;
  absl::string_view phone;
  absl::string_view email;
};

struct NameserverRecord {
  absl::string_view name;          // host name, upper-case
  uint32_t registrar_iana_id = 0;  // 0: none given
  absl::Span<const absl::string_view> addresses;
};

struct DomainRecord {
  absl::string_view name;  // upper-case ASCII (A-labels), no trailing dot
  absl::string_view registry_id;
  uint32_t registrar_iana_id = 0;
  absl::string_view created;  // RFC 3339 UTC: 2026-01-02T03:04:05Z
  absl::string_view updated;
  absl::string_view expires;
  absl::Span<const absl::string_view> statuses;     // EPP status values (RFC 5731 §2.3)
  absl::Span<const absl::string_view> nameservers;  // upper-case host names
  absl::string_view dnssec;                         // "unsigned" or "signedDelegation"
  // DS records of a signed delegation, each "KEYTAG ALGORITHM DIGEST-TYPE DIGEST" with the
  // digest in upper-case hex (RFC 4034 §5.3 presentation order), as the registry prints them.
  absl::Span<const absl::string_view> ds_data;
  absl::string_view registrant;  // contact handles, or empty (thin)
  absl::string_view admin;
  absl::string_view tech;
};

// "   Domain Name: EXAMPLE.COM\r\n" starts with this many bytes before the name.
inline constexpr size_t kDomainNameLinePrefix = 16;

// Appends "   LABEL: VALUE\r\n" (Verisign's three-space indent). An empty VALUE gives
// "   LABEL:\r\n", no space after the colon, as the .com registry prints empty fields.
void AppendField(std::string* out, absl::string_view label, absl::string_view value);

// The pieces of a domain reply, in reply order. Each appends to `out`.
void RenderDomainHead(const DomainRecord& domain, std::string* out);          // Domain Name, ID
void RenderRegistrarTop(const RegistrarRecord& registrar, std::string* out);  // WHOIS Server, URL
void RenderDomainDates(const DomainRecord& domain, std::string* out);         // Updated..Expiry
void RenderRegistrarMiddle(const RegistrarRecord& registrar, std::string* out);  // Registrar..
void RenderStatuses(absl::Span<const absl::string_view> statuses, std::string* out);
// One contact's block in a domain reply; `role` is "Registrant", "Admin" or "Tech".
void RenderContactRole(absl::string_view role, const ContactRecord& contact, std::string* out);
// Name Server lines, DNSSEC, one "DNSSEC DS Data" line per DS record, and the ICANN
// complaint form URL that ends a domain record.
void RenderNameservers(absl::Span<const absl::string_view> nameservers, absl::string_view dnssec,
                       absl::Span<const absl::string_view> ds_data, std::string* out);

// A name server address as the .com registry prints it: IPv4 dotted quad; IPv6 as eight
// groups of upper-case hex without leading zeros and without "::" compression
// (2001:DB8:0:0:0:0:0:53). `address` must be a valid IPv4 or IPv6 address; otherwise it is
// returned as it is.
std::string RegistryAddressText(absl::string_view address);

// Whole replies to "registrar", "nameserver" and "contact" queries (without the tail).
void RenderRegistrarReply(const RegistrarRecord& registrar, std::string* out);
void RenderNameserverReply(const NameserverRecord& nameserver, const RegistrarRecord* registrar,
                           std::string* out);
void RenderContactReply(const ContactRecord& contact, std::string* out);

// The end of every reply: ">>> Last update of whois database: TIME <<<", a blank line, and
// the terms-of-use footer (`footer_lines`, or the default text when empty).
void RenderTail(absl::string_view last_update, absl::Span<const std::string> footer_lines,
                std::string* out);

// The default terms-of-use footer, one line per element.
absl::Span<const absl::string_view> DefaultFooterLines();

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_RECORDS_H_
