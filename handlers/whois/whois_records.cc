#include "handlers/whois/whois_records.h"

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace onepass::whois {
namespace {

constexpr std::array<absl::string_view, 25> kDefaultFooter = {
    "For more information on Whois status codes, please visit https://icann.org/epp",
    "",
    "NOTICE: The expiration date displayed in this record is the date the",
    "registrar's sponsorship of the domain name registration in the registry is",
    "currently set to expire. This date does not necessarily reflect the expiration",
    "date of the domain name registrant's agreement with the sponsoring",
    "registrar. Users may consult the sponsoring registrar's Whois database to",
    "view the registrar's reported date of expiration for this registration.",
    "",
    "TERMS OF USE: The data in this registry's Whois database is provided for",
    "information purposes only, to assist persons in obtaining information about",
    "or related to a domain name registration record. The registry does not",
    "guarantee its accuracy. By submitting a Whois query, you agree to use this",
    "data only for lawful purposes and that under no circumstances will you use",
    "this data to: (1) allow, enable, or otherwise support the transmission of",
    "mass unsolicited, commercial advertising or solicitations via e-mail,",
    "telephone, or facsimile; or (2) enable high volume, automated, electronic",
    "processes that apply to the registry (or its computer systems). The",
    "compilation, repackaging, dissemination or other use of this data is",
    "expressly prohibited without the prior written consent of the registry.",
    "The registry reserves the right to restrict your access to the Whois",
    "database in its sole discretion to ensure operational stability. The",
    "registry may restrict or terminate your access to the Whois database for",
    "failure to abide by these terms of use. The registry reserves the right",
    "to modify these terms at any time.",
};

}  // namespace

void AppendField(std::string* out, absl::string_view label, absl::string_view value) {
  if (value.empty()) {
    absl::StrAppend(out, "   ", label, ":\r\n");
    return;
  }
  absl::StrAppend(out, "   ", label, ": ", value, "\r\n");
}

std::string RegistryAddressText(absl::string_view address) {
  const std::string text(address);
  uint8_t bytes[16];
  if (inet_pton(AF_INET6, text.c_str(), bytes) != 1) return text;  // IPv4 (or invalid) as is
  std::string out;
  for (int group = 0; group < 8; ++group) {
    if (group > 0) out.push_back(':');
    const unsigned value = (unsigned{bytes[2 * group]} << 8) | bytes[2 * group + 1];
    absl::StrAppend(&out, absl::Hex(value));
  }
  for (char& c : out) c = absl::ascii_toupper(static_cast<unsigned char>(c));
  return out;
}

void RenderDomainHead(const DomainRecord& domain, std::string* out) {
  AppendField(out, "Domain Name", domain.name);
  AppendField(out, "Registry Domain ID", domain.registry_id);
}

void RenderRegistrarTop(const RegistrarRecord& registrar, std::string* out) {
  AppendField(out, "Registrar WHOIS Server", registrar.whois_server);
  AppendField(out, "Registrar URL", registrar.url);
}

void RenderDomainDates(const DomainRecord& domain, std::string* out) {
  AppendField(out, "Updated Date", domain.updated);
  AppendField(out, "Creation Date", domain.created);
  AppendField(out, "Registry Expiry Date", domain.expires);
}

void RenderRegistrarMiddle(const RegistrarRecord& registrar, std::string* out) {
  AppendField(out, "Registrar", registrar.name);
  AppendField(out, "Registrar IANA ID", absl::StrCat(registrar.iana_id));
  AppendField(out, "Registrar Abuse Contact Email", registrar.abuse_email);
  AppendField(out, "Registrar Abuse Contact Phone", registrar.abuse_phone);
}

void RenderStatuses(absl::Span<const absl::string_view> statuses, std::string* out) {
  for (absl::string_view status : statuses) {
    // ICANN's Whois status codes advisory: the code followed by its explanation page.
    absl::StrAppend(out, "   Domain Status: ", status, " https://icann.org/epp#", status, "\r\n");
  }
}

void RenderContactRole(absl::string_view role, const ContactRecord& contact, std::string* out) {
  AppendField(out, absl::StrCat("Registry ", role, " ID"), contact.handle);
  AppendField(out, absl::StrCat(role, " Name"), contact.name);
  AppendField(out, absl::StrCat(role, " Organization"), contact.organization);
  AppendField(out, absl::StrCat(role, " Street"), contact.street);
  AppendField(out, absl::StrCat(role, " City"), contact.city);
  AppendField(out, absl::StrCat(role, " State/Province"), contact.state);
  AppendField(out, absl::StrCat(role, " Postal Code"), contact.postal_code);
  AppendField(out, absl::StrCat(role, " Country"), contact.country);
  AppendField(out, absl::StrCat(role, " Phone"), contact.phone);
  AppendField(out, absl::StrCat(role, " Email"), contact.email);
}

void RenderNameservers(absl::Span<const absl::string_view> nameservers, absl::string_view dnssec,
                       absl::Span<const absl::string_view> ds_data, std::string* out) {
  for (absl::string_view nameserver : nameservers) AppendField(out, "Name Server", nameserver);
  AppendField(out, "DNSSEC", dnssec);
  for (absl::string_view ds : ds_data) AppendField(out, "DNSSEC DS Data", ds);
  AppendField(out, "URL of the ICANN Whois Inaccuracy Complaint Form",
              "https://www.icann.org/wicf/");
}

void RenderRegistrarReply(const RegistrarRecord& registrar, std::string* out) {
  AppendField(out, "Registrar Name", registrar.name);
  AppendField(out, "Registrar IANA ID", absl::StrCat(registrar.iana_id));
  AppendField(out, "Address", registrar.address);
  AppendField(out, "Phone Number", registrar.phone);
  AppendField(out, "Email", registrar.email);
  AppendField(out, "Whois Server", registrar.whois_server);
  AppendField(out, "Referral URL", registrar.url);
  AppendField(out, "Registrar Abuse Contact Email", registrar.abuse_email);
  AppendField(out, "Registrar Abuse Contact Phone", registrar.abuse_phone);
}

void RenderNameserverReply(const NameserverRecord& nameserver, const RegistrarRecord* registrar,
                           std::string* out) {
  AppendField(out, "Server Name", nameserver.name);
  for (absl::string_view address : nameserver.addresses) {
    AppendField(out, "IP Address", RegistryAddressText(address));
  }
  if (registrar != nullptr) {
    AppendField(out, "Registrar", registrar->name);
    AppendField(out, "Registrar WHOIS Server", registrar->whois_server);
    AppendField(out, "Registrar URL", registrar->url);
  }
}

void RenderContactReply(const ContactRecord& contact, std::string* out) {
  AppendField(out, "Contact ID", contact.handle);
  AppendField(out, "Name", contact.name);
  AppendField(out, "Organization", contact.organization);
  AppendField(out, "Street", contact.street);
  AppendField(out, "City", contact.city);
  AppendField(out, "State/Province", contact.state);
  AppendField(out, "Postal Code", contact.postal_code);
  AppendField(out, "Country", contact.country);
  AppendField(out, "Phone", contact.phone);
  AppendField(out, "Email", contact.email);
}

void RenderTail(absl::string_view last_update, absl::Span<const std::string> footer_lines,
                std::string* out) {
  absl::StrAppend(out, ">>> Last update of whois database: ", last_update, " <<<\r\n\r\n");
  if (footer_lines.empty()) {
    for (absl::string_view line : kDefaultFooter) absl::StrAppend(out, line, "\r\n");
  } else {
    for (const std::string& line : footer_lines) absl::StrAppend(out, line, "\r\n");
  }
}

absl::Span<const absl::string_view> DefaultFooterLines() { return kDefaultFooter; }

}  // namespace onepass::whois
