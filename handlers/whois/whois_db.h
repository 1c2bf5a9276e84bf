// Loads a Whois database file (--whois-db) into a WhoisSnapshot.
//
// The format: UTF-8 text, one record per line (LF or CRLF), fields separated by one TAB, the
// record type first. Blank lines and lines starting with '#' are ignored. A field may be empty
// where noted; no field may hold a control character. Lists inside a field are separated by
// commas. Registrars and contacts must come before the name servers and domains that name them
// (one pass over the file, and an error names the line). Chosen over JSON lines because it
// splits with a byte scan and no escapes, so a million domains load in seconds.
//
//   meta        last-update   TIME
//   meta        footer        TEXT    (repeatable; replaces the default terms of use, one line
//                                      each; TEXT may be empty for a blank line)
//   registrar   IANA-ID  NAME  WHOIS-SERVER  URL  ABUSE-EMAIL  ABUSE-PHONE  ADDRESS  PHONE  EMAIL
//               [RDAP-BASE-URL]  (optional; RDAP's "related" link, not shown by Whois)
//   contact     HANDLE  NAME  ORGANIZATION  STREET  CITY  STATE  POSTAL-CODE  COUNTRY  PHONE
//               EMAIL
//   nameserver  NAME  REGISTRAR-IANA-ID-or-empty  ADDRESSES (IPv4/IPv6, comma-separated, may
//               be empty)
//   domain      NAME  REGISTRY-DOMAIN-ID  REGISTRAR-IANA-ID  CREATED  UPDATED  EXPIRES
//               STATUSES  NAMESERVERS  DNSSEC  [REGISTRANT  ADMIN  TECH]
//
// TIME, CREATED, UPDATED, EXPIRES: RFC 3339 UTC, "2026-01-02T03:04:05Z".
// NAME of a domain or name server: ASCII (IDNs as A-labels, "xn--"), any case, trailing dot
// allowed. STATUSES: EPP status values (RFC 5731 §2.3, RFC 3915 §3.1), at least one.
// DNSSEC: "unsigned", or "signedDelegation:" followed by the delegation's DS records,
// comma-separated, each "KEYTAG ALGORITHM DIGEST-TYPE HEX-DIGEST" (RFC 4034 §5.3 order, e.g.
// "signedDelegation:370 13 2 BE7435...,370 13 4 ...": printed as "DNSSEC DS Data:" lines,
// digest upper-cased). A bare "signedDelegation" (no DS shown) is still read.
// REGISTRANT, ADMIN, TECH: contact handles or empty
// (a thin registry, like .com, lists none; then the three fields may be left out).
// Without "meta last-update" the file's modification time is shown as the last update.
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_DB_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_DB_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "handlers/whois/whois_snapshot.h"

namespace onepass::whois {

// Parses database lines one at a time into a snapshot (or any WhoisRecordSink). Errors read
// "SOURCE:LINE: what".
class WhoisDbParser {
 public:
  // Into a Whois snapshot (Finish).
  explicit WhoisDbParser(absl::string_view source_name);
  // Into `sink`, which must outlive the parser (FinishRecords; Finish is not for this one).
  WhoisDbParser(absl::string_view source_name, WhoisRecordSink& sink);

  // One line without its LF (a trailing CR is dropped).
  absl::Status ParseLine(absl::string_view line);

  // Builds the snapshot. `fallback_last_update` (RFC 3339) is used when the data had no
  // "meta last-update" record; when both are missing it is an error.
  // A hint: about how many domains the data holds.
  void ReserveDomains(size_t count) { sink_.ReserveDomains(count); }

  absl::StatusOr<std::shared_ptr<const WhoisSnapshot>> Finish(
      absl::string_view fallback_last_update = "");
  // The end of the data for a parser with its own sink: sets the fallback last update.
  absl::Status FinishRecords(absl::string_view fallback_last_update = "");

 private:
  absl::Status ParseRecord(absl::string_view line);
  absl::Status ParseMeta();
  absl::Status ParseRegistrar();
  absl::Status ParseContact();
  absl::Status ParseNameserver();
  absl::Status ParseDomain();

  std::string source_name_;
  size_t line_number_ = 0;
  WhoisSnapshotBuilder builder_;  // the sink of the one-argument constructor
  WhoisRecordSink& sink_;
  // Per-line scratch, reused so that a line costs no allocation once these have grown.
  std::vector<absl::string_view> fields_;
  std::vector<absl::string_view> list_;
  std::vector<absl::string_view> list2_;
  std::vector<absl::string_view> ds_list_;
  std::string ds_text_;  // the DS records of the current line, normalized
  std::string name_;
  std::string names_;
};

// Loads `text` (the embedded default database, tests). `source_name` names it in errors.
absl::StatusOr<std::shared_ptr<const WhoisSnapshot>> LoadWhoisDbText(absl::string_view text,
                                                                     absl::string_view source_name);

// Loads the file at `path`, reading it in 1 MiB blocks (it is never held whole in memory).
absl::StatusOr<std::shared_ptr<const WhoisSnapshot>> LoadWhoisDbFile(const std::string& path);

// The same two into any sink: every record checked as for Whois, in file order.
absl::Status LoadWhoisRecordsText(absl::string_view text, absl::string_view source_name,
                                  WhoisRecordSink& sink);
absl::Status LoadWhoisRecordsFile(const std::string& path, WhoisRecordSink& sink);

// Checks the RFC 3339 UTC form "YYYY-MM-DDTHH:MM:SSZ" with fields in range.
bool IsRfc3339Utc(absl::string_view text);

// True for the EPP domain status values (RFC 5731 §2.3 and RFC 3915 §3.1's RGP statuses).
bool IsEppDomainStatus(absl::string_view status);

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_DB_H_
