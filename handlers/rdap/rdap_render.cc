#include "handlers/rdap/rdap_render.h"

#include <idn2.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace onepass::rdap {
namespace {

// RFC 9083 §4.1, the gTLD RDAP Response Profile §1.2 and Technical Implementation Guide §1.2,
// RFC 9537 §4.1 ("redacted").
constexpr absl::string_view kTop =
    "{\"rdapConformance\":[\"rdap_level_0\",\"icann_rdap_response_profile_1\","
    "\"icann_rdap_technical_implementation_guide_1\",\"redacted\"],";

constexpr absl::string_view kVcardVersion = "[\"version\",{},\"text\",\"4.0\"]";

struct EppToRdap {
  absl::string_view epp;
  absl::string_view rdap;
};

// RFC 8056 §2, for the EPP domain statuses whois_db.cc accepts (RFC 5731 §2.3, RFC 3915).
constexpr EppToRdap kStatusMap[] = {
    {"ok", "active"},
    {"inactive", "inactive"},
    {"addPeriod", "add period"},
    {"autoRenewPeriod", "auto renew period"},
    {"clientDeleteProhibited", "client delete prohibited"},
    {"clientHold", "client hold"},
    {"clientRenewProhibited", "client renew prohibited"},
    {"clientTransferProhibited", "client transfer prohibited"},
    {"clientUpdateProhibited", "client update prohibited"},
    {"pendingCreate", "pending create"},
    {"pendingDelete", "pending delete"},
    {"pendingRenew", "pending renew"},
    {"pendingRestore", "pending restore"},
    {"pendingTransfer", "pending transfer"},
    {"pendingUpdate", "pending update"},
    {"redemptionPeriod", "redemption period"},
    {"renewPeriod", "renew period"},
    {"serverDeleteProhibited", "server delete prohibited"},
    {"serverHold", "server hold"},
    {"serverRenewProhibited", "server renew prohibited"},
    {"serverTransferProhibited", "server transfer prohibited"},
    {"serverUpdateProhibited", "server update prohibited"},
    {"transferPeriod", "transfer period"},
};

void Member(absl::string_view name, absl::string_view value, std::string* out) {
  AppendJsonString(name, out);
  out->push_back(':');
  AppendJsonString(value, out);
}

void Link(absl::string_view rel, absl::string_view href, absl::string_view type, std::string* out) {
  absl::StrAppend(out, "{");
  Member("value", href, out);
  out->push_back(',');
  Member("rel", rel, out);
  out->push_back(',');
  Member("href", href, out);
  out->push_back(',');
  Member("type", type, out);
  out->push_back('}');
}

void Event(absl::string_view action, absl::string_view date, std::string* out) {
  out->push_back('{');
  Member("eventAction", action, out);
  out->push_back(',');
  Member("eventDate", date, out);
  out->push_back('}');
}

void LastUpdateEvents(const RdapRenderConfig& config, std::string* out) {
  out->append(",\"events\":[");
  Event("last update of RDAP database", config.last_update, out);
  out->push_back(']');
}

// "ldhName" and, for an IDN, "unicodeName" (RFC 9083 §3: both when the name has A-labels).
void Names(absl::string_view name, std::string* out) {
  Member("ldhName", LdhName(name), out);
  const std::string unicode = UnicodeName(name);
  if (!unicode.empty()) {
    out->push_back(',');
    Member("unicodeName", unicode, out);
  }
}

void IpAddresses(absl::Span<const std::string> addresses, std::string* out) {
  if (addresses.empty()) return;
  std::string v4, v6;
  for (const std::string& address : addresses) {
    std::string& list = address.find(':') == std::string::npos ? v4 : v6;
    if (!list.empty()) list.push_back(',');
    AppendJsonString(address, &list);
  }
  out->append(",\"ipAddresses\":{");
  if (!v4.empty()) absl::StrAppend(out, "\"v4\":[", v4, "]");
  if (!v6.empty()) absl::StrAppend(out, v4.empty() ? "" : ",", "\"v6\":[", v6, "]");
  out->push_back('}');
}

void VcardText(absl::string_view property, absl::string_view value, std::string* out) {
  absl::StrAppend(out, ",[\"", property, "\",{},\"text\",");
  AppendJsonString(value, out);
  out->push_back(']');
}

// The registrar entity's members (profile §2.4): handle and publicIds = IANA ID, fn, the
// registrar's contact data, links, and the abuse contact entity with email and phone (§2.4.5).
void RegistrarMembers(const whois::RegistrarRecord& registrar, const RdapRenderConfig& config,
                      std::string* out) {
  const std::string id = absl::StrCat(registrar.iana_id);
  absl::StrAppend(out, "\"objectClassName\":\"entity\",");
  Member("handle", id, out);
  absl::StrAppend(out,
                  ",\"roles\":[\"registrar\"],\"publicIds\":[{\"type\":\"IANA Registrar ID\",");
  Member("identifier", id, out);
  absl::StrAppend(out, "}],\"vcardArray\":[\"vcard\",[", kVcardVersion);
  VcardText("fn", registrar.name, out);
  if (!registrar.address.empty()) {
    out->append(",[\"adr\",{\"label\":");
    AppendJsonString(registrar.address, out);
    out->append("},\"text\",[\"\",\"\",\"\",\"\",\"\",\"\",\"\"]]");
  }
  if (!registrar.phone.empty()) {
    out->append(",[\"tel\",{\"type\":\"voice\"},\"uri\",");
    AppendJsonString(absl::StrCat("tel:", registrar.phone), out);
    out->push_back(']');
  }
  if (!registrar.email.empty()) VcardText("email", registrar.email, out);
  out->append("]],\"links\":[");
  Link("self", absl::StrCat(config.base_url, "entity/", id), "application/rdap+json", out);
  if (!registrar.url.empty()) {
    out->push_back(',');
    Link("about", registrar.url, "text/html", out);
  }
  out->push_back(']');
  if (!registrar.abuse_email.empty() || !registrar.abuse_phone.empty()) {
    absl::StrAppend(out,
                    ",\"entities\":[{\"objectClassName\":\"entity\",\"roles\":[\"abuse\"],"
                    "\"vcardArray\":[\"vcard\",[",
                    kVcardVersion);
    VcardText("fn", "Abuse Contact", out);
    if (!registrar.abuse_phone.empty()) {
      out->append(",[\"tel\",{\"type\":\"voice\"},\"uri\",");
      AppendJsonString(absl::StrCat("tel:", registrar.abuse_phone), out);
      out->push_back(']');
    }
    if (!registrar.abuse_email.empty()) VcardText("email", registrar.abuse_email, out);
    out->append("]]}]");
  }
}

// A contact's vCard with the personal data redacted (profile §2.7.4, RFC 9537): fn empty,
// street, city and postal code empty, no tel or email; organization, state and country kept.
void RedactedVcard(const whois::ContactRecord& contact, std::string* out) {
  absl::StrAppend(out, "\"vcardArray\":[\"vcard\",[", kVcardVersion);
  VcardText("fn", "", out);
  if (!contact.organization.empty()) VcardText("org", contact.organization, out);
  out->append(",[\"adr\",{");
  if (!contact.country.empty()) {
    AppendJsonString("cc", out);
    out->push_back(':');
    AppendJsonString(contact.country, out);
  }
  out->append("},\"text\",[\"\",\"\",\"\",\"\",");
  AppendJsonString(contact.state, out);
  out->append(",\"\",\"\"]]]]");
}

// One RFC 9537 §4.2 redaction entry. `registered` names it by its registered type
// ("Registrant Name", the profile's JSON Values registry), else by description.
void Redaction(absl::string_view name, bool registered, absl::string_view path_member,
               absl::string_view path, absl::string_view method, std::string* out) {
  absl::StrAppend(out, "{\"name\":{", registered ? "\"type\":" : "\"description\":");
  AppendJsonString(name, out);
  out->append("},");
  Member(path_member, path, out);
  absl::StrAppend(out, ",\"pathLang\":\"jsonpath\",\"method\":\"", method,
                  "\",\"reason\":{\"description\":\"Server policy\"}}");
}

// The redactions of one contact whose JSON is at `at` (a JSONPath), named "<label> Name"...
void ContactRedactions(absl::string_view label, bool registered, absl::string_view id_name,
                       absl::string_view at, std::string* out) {
  const std::string vcard = absl::StrCat(at, ".vcardArray[1]");
  if (!id_name.empty()) {
    Redaction(id_name, registered, "prePath", absl::StrCat(at, ".handle"), "removal", out);
    out->push_back(',');
  }
  Redaction(absl::StrCat(label, " Name"), registered, "postPath",
            absl::StrCat(vcard, "[?(@[0]=='fn')][3]"), "emptyValue", out);
  out->push_back(',');
  Redaction(absl::StrCat(label, " Street"), registered, "postPath",
            absl::StrCat(vcard, "[?(@[0]=='adr')][3][2]"), "emptyValue", out);
  out->push_back(',');
  Redaction(absl::StrCat(label, " City"), registered, "postPath",
            absl::StrCat(vcard, "[?(@[0]=='adr')][3][3]"), "emptyValue", out);
  out->push_back(',');
  Redaction(absl::StrCat(label, " Postal Code"), registered, "postPath",
            absl::StrCat(vcard, "[?(@[0]=='adr')][3][5]"), "emptyValue", out);
  out->push_back(',');
  Redaction(absl::StrCat(label, " Phone"), registered, "prePath",
            absl::StrCat(vcard, "[?(@[0]=='tel')]"), "removal", out);
  out->push_back(',');
  Redaction(absl::StrCat(label, " Email"), registered, "prePath",
            absl::StrCat(vcard, "[?(@[0]=='email')]"), "removal", out);
}

absl::string_view RoleLabel(absl::string_view role) {
  if (role == "registrant") return "Registrant";
  if (role == "administrative") return "Admin";
  return "Tech";
}

void Notice(absl::string_view title, absl::Span<const std::string> lines, absl::string_view rel,
            absl::string_view href, absl::string_view type, std::string* out) {
  out->push_back('{');
  Member("title", title, out);
  out->append(",\"description\":[");
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(lines[i], out);
  }
  out->append("],\"links\":[");
  Link(rel, href, type, out);
  out->append("]}");
}

// The three notices of the profile (§2.11: terms of service; §2.6.3: status codes; §2.11:
// the RDDS inaccuracy complaint form), comma-separated, no brackets.
void Notices(const RdapRenderConfig& config, std::string* out) {
  std::vector<std::string> terms = config.terms;
  if (terms.empty()) {
    for (absl::string_view line : whois::DefaultFooterLines()) terms.emplace_back(line);
  }
  Notice("Terms of Use", terms, "terms-of-service", absl::StrCat(config.base_url, "help"),
         "application/rdap+json", out);
  out->push_back(',');
  const std::string status[] = {
      "For more information on domain status codes, please visit https://icann.org/epp"};
  Notice("Status Codes", status, "glossary", "https://icann.org/epp", "text/html", out);
  out->push_back(',');
  const std::string wicf[] = {
      "URL of the ICANN RDDS Inaccuracy Complaint Form: https://icann.org/wicf"};
  Notice("RDDS Inaccuracy Complaint Form", wicf, "help", "https://icann.org/wicf", "text/html",
         out);
}

}  // namespace

absl::string_view RdapStatusOfEpp(absl::string_view epp_status) {
  for (const EppToRdap& entry : kStatusMap) {
    if (entry.epp == epp_status) return entry.rdap;
  }
  return "";
}

std::string LdhName(absl::string_view name) { return absl::AsciiStrToLower(name); }

std::string UnicodeName(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (!absl::StartsWith(lower, "xn--") && !absl::StrContains(lower, ".xn--")) return "";
  char* unicode = nullptr;
  // Load time only (it allocates): the file's A-labels back to U-labels (RFC 5890 §2.3.2.1).
  if (idn2_to_unicode_8z8z(lower.c_str(), &unicode, 0) != IDN2_OK || unicode == nullptr) {
    return "";
  }
  std::string result(unicode);
  idn2_free(unicode);
  return result == lower ? "" : result;
}

void AppendJsonString(absl::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {  // RFC 8259 §7: control characters must be escaped
      absl::StrAppend(out, "\\u00", absl::string_view(&kHex[u >> 4], 1),
                      absl::string_view(&kHex[u & 15], 1));
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

void RenderTop(std::string* out) { absl::StrAppend(out, kTop); }

void RenderDomainOwn(const whois::DomainRecord& domain, const whois::RegistrarRecord& registrar,
                     const RdapRenderConfig& config, std::string* out) {
  const std::string ldh = LdhName(domain.name);
  out->append("\"objectClassName\":\"domain\",");
  Member("handle", domain.registry_id, out);
  out->push_back(',');
  Names(domain.name, out);
  out->append(",\"links\":[");
  const std::string self = absl::StrCat(config.base_url, "domain/", ldh);
  Link("self", self, "application/rdap+json", out);
  if (!registrar.rdap_url.empty()) {
    // Profile §2.2: a registry links the domain's answer at the sponsoring registrar.
    out->push_back(',');
    const absl::string_view slash = absl::EndsWith(registrar.rdap_url, "/") ? "" : "/";
    Link("related", absl::StrCat(registrar.rdap_url, slash, "domain/", ldh),
         "application/rdap+json", out);
  }
  out->append("],\"events\":[");
  Event("registration", domain.created, out);
  out->push_back(',');
  Event("expiration", domain.expires, out);
  out->push_back(',');
  Event("last changed", domain.updated, out);
}

void RenderDomainEventsEnd(const RdapRenderConfig& config, std::string* out) {
  out->push_back(',');
  Event("last update of RDAP database", config.last_update, out);
  out->push_back(']');
}

void RenderDomainStatus(absl::Span<const absl::string_view> statuses, std::string* out) {
  out->append(",\"status\":[");
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(RdapStatusOfEpp(statuses[i]), out);
  }
  out->push_back(']');
}

void RenderDomainRegistrar(const whois::RegistrarRecord& registrar, const RdapRenderConfig& config,
                           std::string* out) {
  out->append(",\"entities\":[{");
  RegistrarMembers(registrar, config, out);
  out->push_back('}');
}

void RenderDomainContacts(absl::Span<const RdapContactRole> contacts, std::string* out) {
  for (const RdapContactRole& c : contacts) {
    absl::StrAppend(out, ",{\"objectClassName\":\"entity\",\"roles\":[\"", c.role, "\"],");
    RedactedVcard(*c.contact, out);
    out->push_back('}');
  }
  out->push_back(']');
}

void RenderDomainRedactions(absl::Span<const RdapContactRole> contacts, std::string* out) {
  if (contacts.empty()) return;
  out->append(",\"redacted\":[");
  for (size_t i = 0; i < contacts.size(); ++i) {
    if (i > 0) out->push_back(',');
    const absl::string_view label = RoleLabel(contacts[i].role);
    ContactRedactions(label, /*registered=*/true, absl::StrCat("Registry ", label, " ID"),
                      absl::StrCat("$.entities[?(@.roles[0]=='", contacts[i].role, "')]"), out);
  }
  out->push_back(']');
}

void RenderDomainHosts(absl::Span<const RdapHost> hosts, absl::string_view dnssec,
                       absl::Span<const absl::string_view> ds_data, const RdapRenderConfig& config,
                       std::string* out) {
  if (!hosts.empty()) {
    out->append(",\"nameservers\":[");
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (i > 0) out->push_back(',');
      out->append("{\"objectClassName\":\"nameserver\",");
      Names(hosts[i].name, out);
      IpAddresses(hosts[i].addresses, out);
      out->append(",\"links\":[");
      Link("self", absl::StrCat(config.base_url, "nameserver/", LdhName(hosts[i].name)),
           "application/rdap+json", out);
      out->append("]}");
    }
    out->push_back(']');
  }
  // RFC 9083 §5.3 secureDNS; the DS records as "KEYTAG ALGORITHM DIGEST-TYPE DIGEST".
  absl::StrAppend(out,
                  ",\"secureDNS\":{\"delegationSigned\":", dnssec == "unsigned" ? "false" : "true");
  if (!ds_data.empty()) {
    out->append(",\"dsData\":[");
    for (size_t i = 0; i < ds_data.size(); ++i) {
      const std::vector<absl::string_view> f = absl::StrSplit(ds_data[i], ' ');
      if (i > 0) out->push_back(',');
      if (f.size() != 4) continue;  // whois_db.cc wrote four fields
      absl::StrAppend(out, "{\"keyTag\":", f[0], ",\"algorithm\":", f[1], ",\"digestType\":", f[2],
                      ",\"digest\":");
      AppendJsonString(f[3], out);
      out->push_back('}');
    }
    out->push_back(']');
  }
  out->push_back('}');
}

void RenderBottom(const RdapRenderConfig& config, std::string* out) {
  out->append(",\"notices\":[");
  Notices(config, out);
  out->append("]}");
}

std::string RenderDomain(const whois::DomainRecord& domain, const whois::RegistrarRecord& registrar,
                         absl::Span<const RdapContactRole> contacts,
                         absl::Span<const RdapHost> hosts, const RdapRenderConfig& config) {
  std::string out;
  RenderTop(&out);
  RenderDomainOwn(domain, registrar, config, &out);
  RenderDomainEventsEnd(config, &out);
  RenderDomainStatus(domain.statuses, &out);
  RenderDomainRegistrar(registrar, config, &out);
  RenderDomainContacts(contacts, &out);
  RenderDomainRedactions(contacts, &out);
  RenderDomainHosts(hosts, domain.dnssec, domain.ds_data, config, &out);
  RenderBottom(config, &out);
  return out;
}

std::string RenderNameserver(const whois::NameserverRecord& nameserver,
                             const whois::RegistrarRecord* registrar,
                             const RdapRenderConfig& config) {
  std::string out(kTop);
  out.append("\"objectClassName\":\"nameserver\",");
  Names(nameserver.name, &out);
  std::vector<std::string> addresses(nameserver.addresses.begin(), nameserver.addresses.end());
  IpAddresses(addresses, &out);
  out.append(",\"status\":[\"active\"],\"links\":[");
  Link("self", absl::StrCat(config.base_url, "nameserver/", LdhName(nameserver.name)),
       "application/rdap+json", &out);
  out.push_back(']');
  if (registrar != nullptr) {
    out.append(",\"entities\":[{");
    RegistrarMembers(*registrar, config, &out);
    out.append("}]");
  }
  LastUpdateEvents(config, &out);
  RenderBottom(config, &out);
  return out;
}

std::string RenderRegistrarEntity(const whois::RegistrarRecord& registrar,
                                  const RdapRenderConfig& config) {
  std::string out(kTop);
  RegistrarMembers(registrar, config, &out);
  LastUpdateEvents(config, &out);
  RenderBottom(config, &out);
  return out;
}

std::string RenderContactEntity(const whois::ContactRecord& contact,
                                const RdapRenderConfig& config) {
  std::string out(kTop);
  out.append("\"objectClassName\":\"entity\",");
  Member("handle", contact.handle, &out);
  out.push_back(',');
  RedactedVcard(contact, &out);
  out.append(",\"links\":[");
  Link("self", absl::StrCat(config.base_url, "entity/", contact.handle), "application/rdap+json",
       &out);
  out.push_back(']');
  LastUpdateEvents(config, &out);
  out.append(",\"redacted\":[");
  ContactRedactions("Contact", /*registered=*/false, "", "$", &out);
  out.push_back(']');
  RenderBottom(config, &out);
  return out;
}

std::string RenderHelp(const RdapRenderConfig& config) {
  std::string out(kTop);
  const std::string help[] = {
      "Lookups (RFC 9082): /domain/NAME (A-labels or U-labels), /nameserver/NAME, "
      "/entity/HANDLE (a contact handle or a registrar's IANA ID), /help.",
      "Search: /domains?name=PATTERN, PATTERN a name or a prefix ending in one '*' "
      "(\"exa*\", \"example.c*\"); results are capped, and other searches are not offered.",
  };
  out.append("\"notices\":[");
  Notice("Help", help, "self", absl::StrCat(config.base_url, "help"), "application/rdap+json",
         &out);
  out.push_back(',');
  Notices(config, &out);
  out.append("]}");
  return out;
}

void RenderError(int status, absl::string_view title, absl::string_view reason, std::string* out) {
  absl::StrAppend(out, kTop);
  absl::StrAppend(out, "\"errorCode\":", status, ",");
  Member("title", title, out);
  out->append(",\"description\":[");
  AppendJsonString(reason, out);
  out->append("]}");
}

void RenderTruncatedNotice(std::string* out) {
  out->append(
      "{\"title\":\"Search Policy\",\"type\":\"result set truncated due to excessive load\","
      "\"description\":[\"Search results are limited; ask for a longer prefix.\"]}");
}

}  // namespace onepass::rdap
