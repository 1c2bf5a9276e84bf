#include "handlers/rdap/rdap_path.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "handlers/whois/whois_query.h"

namespace onepass::rdap {
namespace {

RdapPathResult Fail(int status, absl::string_view reason) {
  RdapPathResult result;
  result.status = status;
  result.reason = reason;
  return result;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The next '/'-separated segment of `*path` (which starts after a '/'), removed from it.
absl::string_view NextSegment(absl::string_view* path) {
  const size_t slash = path->find('/');
  absl::string_view segment = path->substr(0, slash);
  path->remove_prefix(slash == absl::string_view::npos ? path->size() : slash + 1);
  return segment;
}

// A domain or host name segment, decoded, into scratch->key.
RdapPathResult NameLookup(RdapQueryKind kind, absl::string_view segment, RdapScratch* scratch) {
  if (!PercentDecode(segment, &scratch->decoded)) {
    return Fail(400, "bad percent-encoding in the name (RFC 3986 §2.1)");
  }
  absl::string_view idn_detail;
  switch (whois::NormalizeDomainName(scratch->decoded, &scratch->key, &idn_detail)) {
    case whois::QueryError::kNone:
      break;
    case whois::QueryError::kBadUtf8:
      return Fail(400, "the name is not UTF-8 (RFC 3629)");
    case whois::QueryError::kBadIdn:
      return Fail(400, idn_detail.empty() ? "the name is not a valid IDN (IDNA2008)" : idn_detail);
    default:
      return Fail(400,
                  "not a domain name: LDH labels of 1 to 63 octets, 253 in all (RFC 1123 §2.1)");
  }
  RdapPathResult result;
  result.query.kind = kind;
  result.query.key = scratch->key;
  return result;
}

RdapPathResult EntityLookup(absl::string_view segment, RdapScratch* scratch) {
  if (!PercentDecode(segment, &scratch->decoded) ||
      !whois::IsValidContactHandle(scratch->decoded)) {
    return Fail(400, "an entity handle is 1 to 64 of A-Z, a-z, 0-9, '.', '_', '-'");
  }
  scratch->key = scratch->decoded;
  absl::AsciiStrToUpper(&scratch->key);
  RdapPathResult result;
  result.query.kind = RdapQueryKind::kEntity;
  result.query.key = scratch->key;
  return result;
}

// name=PATTERN (RFC 9082 §3.2.1, §4.1): a whole name, or a prefix ending in one '*'.
RdapPathResult DomainPattern(absl::string_view pattern, const RdapPathConfig& config,
                             RdapScratch* scratch) {
  if (!PercentDecode(pattern, &scratch->decoded)) {
    return Fail(400, "bad percent-encoding in the search pattern (RFC 3986 §2.1)");
  }
  const absl::string_view decoded = scratch->decoded;
  const size_t star = decoded.find('*');
  if (star == absl::string_view::npos) {
    return NameLookup(RdapQueryKind::kDomainSearch, pattern, scratch);
  }
  if (star + 1 != decoded.size()) {
    return Fail(422, "only one '*', at the end of the pattern, is supported (see /help)");
  }
  const absl::string_view prefix = decoded.substr(0, star);
  for (char c : prefix) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      return Fail(422, "partial matches on U-labels are not supported; give A-labels (xn--)");
    }
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') {
      return Fail(400, "a search pattern holds letters, digits, '-', '.' and a final '*'");
    }
  }
  if (prefix.size() < config.search_min_prefix) {
    return Fail(422, "the pattern needs more characters before its '*' (see /help)");
  }
  if (prefix.size() > 253) return Fail(400, "the pattern is longer than a domain name");
  scratch->key.assign(prefix.data(), prefix.size());
  absl::AsciiStrToUpper(&scratch->key);
  RdapPathResult result;
  result.query.kind = RdapQueryKind::kDomainSearch;
  result.query.key = scratch->key;
  result.query.prefix = true;
  return result;
}

RdapPathResult DomainSearch(absl::string_view query, const RdapPathConfig& config,
                            RdapScratch* scratch) {
  if (!config.search_enabled) return Fail(501, "domain search is off on this server");
  absl::string_view pattern;
  bool has_name = false;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const absl::string_view parameter = query.substr(0, amp);
    query.remove_prefix(amp == absl::string_view::npos ? query.size() : amp + 1);
    const size_t equals = parameter.find('=');
    const absl::string_view key = parameter.substr(0, equals);
    if (key == "name") {
      if (has_name) return Fail(400, "the name parameter is repeated");
      has_name = true;
      pattern = equals == absl::string_view::npos ? "" : parameter.substr(equals + 1);
    } else if (key == "nsLdhName" || key == "nsIp") {
      return Fail(501, "domain search by name server is not offered; search by name");
    } else {
      return Fail(400, "unknown search parameter; /domains takes name=PATTERN");
    }
  }
  if (!has_name || pattern.empty()) return Fail(400, "/domains needs name=PATTERN");
  return DomainPattern(pattern, config, scratch);
}

}  // namespace

bool PercentDecode(absl::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int high = HexValue(in[i + 1]);
      const int low = HexValue(in[i + 2]);
      if (high < 0 || low < 0) return false;
      c = static_cast<char>(high * 16 + low);
      i += 2;
      const unsigned char u = static_cast<unsigned char>(c);
      // An encoded '/' would split a segment after routing; NUL and controls are never data.
      if (c == '/' || u < 0x20 || u == 0x7f) return false;
    }
    out->push_back(c);
  }
  return true;
}

RdapPathResult ParseRdapTarget(absl::string_view target, const RdapPathConfig& config,
                               RdapScratch* scratch) {
  // absolute-form (RFC 9112 §3.2.2): the path after the authority.
  for (absl::string_view scheme : {"http://", "https://"}) {
    if (absl::StartsWithIgnoreCase(target, scheme)) {
      target.remove_prefix(scheme.size());
      const size_t slash = target.find('/');
      target = slash == absl::string_view::npos ? absl::string_view("/") : target.substr(slash);
      break;
    }
  }
  if (target.empty() || target.front() != '/') {
    return Fail(400, "the request target is not a path (RFC 9112 §3.2)");
  }
  if (target.find('#') != absl::string_view::npos) {
    return Fail(400, "a request target has no fragment (RFC 9112 §3.2)");
  }
  const size_t question = target.find('?');
  absl::string_view path = target.substr(0, question);
  const absl::string_view query =
      question == absl::string_view::npos ? absl::string_view() : target.substr(question + 1);
  if (!config.base_path.empty() && absl::StartsWith(path, config.base_path) &&
      path.size() > config.base_path.size() && path[config.base_path.size()] == '/') {
    path.remove_prefix(config.base_path.size());
  }
  path.remove_prefix(1);
  // Segments: the query type and at most one argument; a third (or a trailing '/') is none.
  absl::string_view segments[3];
  size_t count = 0;
  while (count < 3) {
    segments[count++] = NextSegment(&path);
    if (path.empty()) break;
  }
  if (!path.empty() || (count > 0 && target.substr(0, question).back() == '/')) count = 3;
  const absl::string_view type = segments[0];
  const absl::string_view argument = count > 1 ? segments[1] : absl::string_view();
  if (type == "." || type == ".." || argument == "." || argument == "..") {
    return Fail(400, "dot segments are not RDAP queries (RFC 3986 §5.2.4)");
  }
  // Number resources are not this server's (RFC 9082 §3.1.1, §3.1.2): 501 whatever follows,
  // /ip/192.0.2.1, /ip/192.0.2.0/24 (two arguments) or /autnum/64496, before any count check.
  if (type == "ip" || type == "autnum") {
    return Fail(501, "this server holds domain registration data, not number resources");
  }
  if (type == "domain" || type == "nameserver" || type == "entity") {
    if (count != 2 || argument.empty()) {
      return Fail(400, "a lookup is /domain/NAME, /nameserver/NAME or /entity/HANDLE");
    }
    if (type == "entity") return EntityLookup(argument, scratch);
    return NameLookup(type == "domain" ? RdapQueryKind::kDomain : RdapQueryKind::kNameserver,
                      argument, scratch);
  }
  if (count != 1) return Fail(400, "not an RDAP query path (RFC 9082 §3)");
  if (type == "help") {
    RdapPathResult result;
    result.query.kind = RdapQueryKind::kHelp;
    return result;
  }
  if (type == "domains") return DomainSearch(query, config, scratch);
  if (type == "nameservers" || type == "entities") {
    return Fail(501, "only domain search (/domains?name=) is offered");
  }
  return Fail(400, "not an RDAP query path (RFC 9082 §3)");
}

}  // namespace onepass::rdap
