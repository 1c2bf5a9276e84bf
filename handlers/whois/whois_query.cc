#include "handlers/whois/whois_query.h"

#include <idn2.h>

#include <cstdlib>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace onepass::whois {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

absl::string_view TrimBlanks(absl::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

bool IsHandleChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

// Contact handles: EPP's contact:id is a token of 3 to 16 characters (RFC 5733 §2.1,
// clIDType); registries' own handles run longer, so 1..64 of [A-Za-z0-9._-].
constexpr size_t kMaxHandleBytes = 64;

void UpperCaseInto(absl::string_view in, std::string* out) {
  out->assign(in.data(), in.size());
  absl::AsciiStrToUpper(out);
}

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};

}  // namespace

absl::string_view QueryErrorMessage(QueryError error) {
  switch (error) {
    case QueryError::kNone:
      return "";
    case QueryError::kTooLong:
      return "Error: query too long.";
    case QueryError::kNulByte:
      return "Error: query contains a NUL byte.";
    case QueryError::kControlByte:
      return "Error: query contains a control character.";
    case QueryError::kEmpty:
      return "Error: empty query; send a domain name, or: domain NAME, nameserver NAME, "
             "registrar NAME, contact HANDLE.";
    case QueryError::kBadUtf8:
      return "Error: query is not valid UTF-8.";
    case QueryError::kBadIdn:
      return "Error: invalid internationalized domain name";
    case QueryError::kBadDomainName:
      return "Error: invalid domain name; labels of 1 to 63 letters, digits and hyphens, "
             "253 characters in all.";
    case QueryError::kBadHandle:
      return "Error: invalid contact handle; 1 to 64 letters, digits, '.', '_' or '-'.";
    case QueryError::kMissingArgument:
      return "Error: keyword without a name; send e.g. domain EXAMPLE.COM.";
    case QueryError::kUnknownQueryForm:
      return "Error: unknown query; send a domain name, or: domain NAME, nameserver NAME, "
             "registrar NAME, contact HANDLE.";
  }
  return "Error: invalid query.";
}

bool IsValidContactHandle(absl::string_view handle) {
  if (handle.empty() || handle.size() > kMaxHandleBytes) return false;
  for (char c : handle) {
    if (!IsHandleChar(c)) return false;
  }
  return true;
}

bool IsValidUtf8(absl::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t extra;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
      extra = 1;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      extra = 2;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;  // continuation byte first, overlong 2-byte lead (C0, C1), or F5..FF
    }
    if (static_cast<size_t>(end - p) <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      if ((p[k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[k] & 0x3f);
    }
    if ((extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000)) return false;  // overlong
    if (cp >= 0xd800 && cp <= 0xdfff) return false;                                // surrogate
    if (cp > 0x10ffff) return false;
    p += extra + 1;
  }
  return true;
}

bool IsValidDomainName(absl::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t label_start = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '.') {
      const size_t length = i - label_start;
      if (length == 0 || length > 63) return false;
      if (name[label_start] == '-' || name[i - 1] == '-') return false;
      label_start = i + 1;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (!absl::ascii_isalnum(c) && c != '-') return false;
  }
  return true;
}

QueryError NormalizeDomainName(absl::string_view name, std::string* out,
                               absl::string_view* idn_detail) {
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);  // the root's dot
  bool ascii = true;
  for (char c : name) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    if (!IsValidDomainName(name)) return QueryError::kBadDomainName;
    UpperCaseInto(name, out);
    return QueryError::kNone;
  }
  if (!IsValidUtf8(name)) return QueryError::kBadUtf8;
  // idn2 wants a NUL-terminated string; the framer let no NUL through.
  out->assign(name.data(), name.size());
  char* converted = nullptr;
  // RFC 5891 §5 via UTS#46 non-transitional processing (what browsers and registries do:
  // "ß" stays "ß"), which also maps upper case to lower case.
  const int rc = idn2_to_ascii_8z(out->c_str(), &converted, IDN2_NONTRANSITIONAL);
  std::unique_ptr<char, FreeDeleter> owned(converted);
  if (rc != IDN2_OK) {
    if (idn_detail != nullptr) *idn_detail = idn2_strerror(rc);
    return QueryError::kBadIdn;
  }
  absl::string_view ace(owned.get());
  if (!ace.empty() && ace.back() == '.') ace.remove_suffix(1);
  if (!IsValidDomainName(ace)) return QueryError::kBadDomainName;
  UpperCaseInto(ace, out);
  return QueryError::kNone;
}

Query ParseQuery(absl::string_view line, std::string* scratch) {
  Query query;
  line = TrimBlanks(line);
  if (line.empty()) {
    query.error = QueryError::kEmpty;
    return query;
  }
  size_t blank = 0;
  while (blank < line.size() && !IsBlank(line[blank])) ++blank;
  absl::string_view word = line.substr(0, blank);
  absl::string_view rest = TrimBlanks(line.substr(blank));

  if (blank == line.size()) {
    // A bare name. A leading '=' (Verisign's "exact match" prefix) changes nothing here.
    if (word.size() > 1 && word.front() == '=') word.remove_prefix(1);
    query.kind = QueryKind::kAny;
    absl::string_view detail;
    QueryError error = NormalizeDomainName(word, scratch, &detail);
    if (error == QueryError::kNone) {
      query.key = *scratch;
      query.key_is_domain_name = true;
      return query;
    }
    // Not a name: a contact handle, unless it has a dot (then it was meant as a name and
    // the client should hear why it is not one).
    if (error == QueryError::kBadDomainName && word.find('.') == absl::string_view::npos &&
        IsValidContactHandle(word)) {
      UpperCaseInto(word, scratch);
      query.key = *scratch;
      return query;
    }
    query.error = error;
    query.error_detail = detail;
    return query;
  }

  if (absl::EqualsIgnoreCase(word, "domain")) {
    query.kind = QueryKind::kDomain;
  } else if (absl::EqualsIgnoreCase(word, "nameserver")) {
    query.kind = QueryKind::kNameserver;
  } else if (absl::EqualsIgnoreCase(word, "registrar")) {
    query.kind = QueryKind::kRegistrar;
  } else if (absl::EqualsIgnoreCase(word, "contact") || absl::EqualsIgnoreCase(word, "entity")) {
    query.kind = QueryKind::kContact;
  } else {
    query.error = QueryError::kUnknownQueryForm;
    return query;
  }
  if (rest.empty()) {
    query.error = QueryError::kMissingArgument;
    return query;
  }

  switch (query.kind) {
    case QueryKind::kDomain:
    case QueryKind::kNameserver: {
      absl::string_view detail;
      QueryError error = NormalizeDomainName(rest, scratch, &detail);
      if (error != QueryError::kNone) {
        query.error = error;
        query.error_detail = detail;
        return query;
      }
      query.key = *scratch;
      return query;
    }
    case QueryKind::kContact:
      if (!IsValidContactHandle(rest)) {
        query.error = QueryError::kBadHandle;
        return query;
      }
      UpperCaseInto(rest, scratch);
      query.key = *scratch;
      return query;
    case QueryKind::kRegistrar: {
      if (!IsValidUtf8(rest)) {
        query.error = QueryError::kBadUtf8;
        return query;
      }
      // Names compare with runs of blanks folded to one space and ASCII case ignored.
      scratch->clear();
      bool in_blank = false;
      for (char c : rest) {
        if (IsBlank(c)) {
          in_blank = true;
          continue;
        }
        if (in_blank) scratch->push_back(' ');
        in_blank = false;
        scratch->push_back(absl::ascii_toupper(static_cast<unsigned char>(c)));
      }
      query.key = *scratch;
      return query;
    }
    case QueryKind::kAny:
      break;
  }
  return query;
}

}  // namespace onepass::whois
