#include "handlers/dns/zone_text.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data_file.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/zone_text_dnssec.h"

// After the C++ headers: ldns (1.8.3) defines `bool` for C, which breaks C++20 <optional>.
#include <ldns/ldns.h>  // NOLINT(build/include_order)

namespace onepass::dns {
namespace {

constexpr size_t kMaxLabelBytes = 63;
constexpr size_t kMaxWireNameBytes = 255;

struct LdnsRrDeleter {
  void operator()(ldns_rr* rr) const { ldns_rr_free(rr); }
};
struct LdnsRdfDeleter {
  void operator()(ldns_rdf* rdf) const { ldns_rdf_deep_free(rdf); }
};

// RFC 3597 §4: only the names inside RR types defined in RFC 1035 may be compressed.
bool HasCompressibleNames(uint16_t type) {
  switch (type) {
    case kTypeNs:
    case kTypeMd:
    case kTypeMf:
    case kTypeCname:
    case kTypeSoa:
    case kTypeMb:
    case kTypeMg:
    case kTypeMr:
    case kTypePtr:
    case kTypeMinfo:
    case kTypeMx:
      return true;
    default:
      return false;
  }
}

// Index of the rdata field whose target drives CNAME chasing or additional-section
// processing (RFC 1035 §3.3.9 MX, RFC 2782 SRV), or -1.
int TargetField(uint16_t type) {
  switch (type) {
    case kTypeNs:
    case kTypeCname:
      return 0;
    case kTypeMx:
      return 1;
    case kTypeSrv:
      return 3;
    default:
      return -1;
  }
}

ParsedRecord RecordFromLdns(const ldns_rr* rr) {
  ParsedRecord record;
  record.ttl = ldns_rr_ttl(rr);
  const uint16_t type = ldns_rr_get_type(rr);
  const bool compressible = HasCompressibleNames(type);
  const int target_field = TargetField(type);
  for (size_t i = 0; i < ldns_rr_rd_count(rr); ++i) {
    const ldns_rdf* rdf = ldns_rr_rdf(rr, i);
    if (compressible && ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_DNAME &&
        record.compressible_count < 2) {
      record.compressible_offsets[record.compressible_count++] =
          static_cast<uint16_t>(record.rdata.size());
    }
    if (static_cast<int>(i) == target_field && ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_DNAME) {
      record.target = CanonicalName(ldns_rdf_data(rdf), ldns_rdf_size(rdf));
    }
    record.rdata.append(reinterpret_cast<const char*>(ldns_rdf_data(rdf)), ldns_rdf_size(rdf));
  }
  return record;
}

std::string Lowercase(absl::string_view wire) {
  return CanonicalName(reinterpret_cast<const uint8_t*>(wire.data()), wire.size());
}

// The escape that starts at text[i] (a backslash): `\X` is X, `\DDD` the byte DDD (RFC 1035
// §5.1: exactly three decimal digits, at most 255). Leaves `i` on the escape's last character
// and the byte in `c`; false when the escape is cut short or out of range.
bool ReadEscape(absl::string_view text, size_t& i, char& c) {
  if (++i == text.size()) return false;
  if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
    c = text[i];
    return true;
  }
  if (i + 2 >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i + 1])) ||
      !std::isdigit(static_cast<unsigned char>(text[i + 2]))) {
    return false;
  }
  const int value = (text[i] - '0') * 100 + (text[i + 1] - '0') * 10 + (text[i + 2] - '0');
  if (value > 255) return false;
  c = static_cast<char>(value);
  i += 2;
  return true;
}

// Presentation name to wire; `origin_wire` (absolute, "" for none) completes relative names.
bool ParseName(absl::string_view text, absl::string_view origin_wire, std::string& wire) {
  wire.clear();
  if (text == "@") {
    if (origin_wire.empty()) return false;
    wire.assign(origin_wire.data(), origin_wire.size());
    return true;
  }
  if (text == ".") {
    wire.push_back('\0');
    return true;
  }
  std::string label;
  bool absolute = false;
  // A label that is a lone unescaped '@' ("@.", "x.@"): not the origin's '@' and refused, as
  // NSD refuses it (ldns reads "@." and even "@.x" as the origin); "\@" is the character.
  bool lone_at = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (label.empty() || label.size() > kMaxLabelBytes || lone_at) return false;
      wire.push_back(static_cast<char>(label.size()));
      wire += label;
      label.clear();
      if (i + 1 == text.size()) absolute = true;
      continue;
    }
    lone_at = label.empty() && c == '@';
    if (c == '\\' && !ReadEscape(text, i, c)) return false;
    label.push_back(c);
  }
  if (!absolute) {
    if (label.empty() || label.size() > kMaxLabelBytes || origin_wire.empty() || lone_at) {
      return false;
    }
    wire.push_back(static_cast<char>(label.size()));
    wire += label;
    wire.append(origin_wire.data(), origin_wire.size());
  } else {
    wire.push_back('\0');
  }
  return wire.size() <= kMaxWireNameBytes;
}

// RFC 1035 §5.1 TTL: decimal seconds, or BIND's units (1h30m); nothing else ("1x" is an error,
// as in NSD). At most 2^32-1.
bool ParseTtl(absl::string_view text, uint32_t& ttl) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  uint64_t total = 0;
  uint64_t number = 0;
  bool have_number = false;
  for (const char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      number = number * 10 + static_cast<uint64_t>(c - '0');
      if (number > 0xffffffffu) return false;
      have_number = true;
      continue;
    }
    uint64_t scale = 0;
    switch (absl::ascii_tolower(static_cast<unsigned char>(c))) {
      case 's':
        scale = 1;
        break;
      case 'm':
        scale = 60;
        break;
      case 'h':
        scale = 3600;
        break;
      case 'd':
        scale = 86400;
        break;
      case 'w':
        scale = 604800;
        break;
      default:
        return false;
    }
    if (!have_number) return false;
    total += number * scale;
    number = 0;
    have_number = false;
  }
  if (have_number) total += number;  // "1h30" is 3630 s, as in NSD and BIND
  if (total > 0xffffffffu) return false;
  ttl = static_cast<uint32_t>(total);
  return true;
}

// IN, CH, HS, CS or CLASSnnn (RFC 3597 §5); 0 if `text` is not a class.
uint16_t ParseClass(absl::string_view text) {
  if (absl::EqualsIgnoreCase(text, "IN")) return 1;
  if (absl::EqualsIgnoreCase(text, "CS")) return 2;
  if (absl::EqualsIgnoreCase(text, "CH")) return 3;
  if (absl::EqualsIgnoreCase(text, "HS")) return 4;
  if (text.size() > 5 && absl::StartsWithIgnoreCase(text, "CLASS")) {
    uint32_t value = 0;
    for (const char c : text.substr(5)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return 0;
      value = value * 10 + static_cast<uint32_t>(c - '0');
      if (value > 0xffff) return 0;
    }
    return static_cast<uint16_t>(value);
  }
  return 0;
}

struct Token {
  absl::string_view text;  // unquoted: as written; quoted: without the quotes
  bool quoted = false;
};

// A character-string (RFC 1035 §3.3) from a token: escapes resolved, at most 255 bytes.
bool AppendCharacterString(const Token& token, std::string& rdata) {
  std::string value;
  const absl::string_view text = token.text;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && !ReadEscape(text, i, c)) return false;
    value.push_back(c);
  }
  if (value.size() > 255) return false;
  rdata.push_back(static_cast<char>(value.size()));
  rdata += value;
  return true;
}

class MasterFileReader {
 public:
  MasterFileReader(const ZoneTextOptions& options, TextRecordSink sink,
                   std::optional<OwnerHint> owner_seen)
      : options_(options), sink_(sink), owner_seen_(owner_seen) {}

  // OK when the file was read to its end, errors or not (they are in errors()); Cancelled when
  // reading must stop (the error is already recorded).
  absl::Status ReadFile(const std::string& display_name, absl::string_view text, int depth);
  const std::vector<std::string>& errors() const { return errors_; }
  bool stopped_at_limit() const { return stopped_at_limit_; }
  // InvalidArgument, or the code of an error that stopped the reading (Internal: the fast
  // path differs from ldns).
  absl::StatusCode code() const { return code_; }

 private:
  // One logical record: the tokens up to the end of a line outside parentheses.
  struct Logical {
    std::vector<Token> tokens;
    bool blank_owner = false;
    int line = 0;
    size_t begin = 0;
    size_t end = 0;
  };
  struct Cursor {
    absl::string_view text;
    size_t pos = 0;
    int line = 1;
  };

  // False at the end of the text with no tokens left.
  absl::Status Next(Cursor& cursor, const std::string& file, Logical& logical, bool& done);
  absl::Status Directive(const std::string& file, const Logical& logical, int depth);
  absl::Status RecordLine(const std::string& file, absl::string_view text, const Logical& logical);
  // The fast path; false when the type or the form (RFC 3597 \#) is left to ldns.
  bool FastRdata(uint16_t type, absl::Span<const Token> rdata, ParsedRecord& record,
                 std::string& error);
  // DS, RRSIG and NSEC3 in the forms signers write (zone_text_dnssec.h); false: leave it to ldns.
  bool DnssecRdata(uint16_t type, absl::Span<const Token> rdata, ParsedRecord& record);
  absl::Status LdnsRdata(absl::string_view type_text, absl::Span<const Token> rdata, uint32_t ttl,
                         ParsedRecord& record);
  absl::Status SetOrigin(absl::string_view text);
  void SetOriginWire(const std::string& wire);
  absl::Status Error(const std::string& file, int line, absl::string_view what,
                     absl::StatusCode code = absl::StatusCode::kInvalidArgument) const {
    return absl::Status(code, absl::StrCat(file, ":", line, ": ", what));
  }
  // Records `error` (not a Cancelled one, already recorded); true when reading may go on.
  bool ReadOn(const absl::Status& error);

  const ZoneTextOptions& options_;
  TextRecordSink sink_;
  std::optional<OwnerHint> owner_seen_;
  std::string origin_wire_;  // "" before any $ORIGIN
  std::unique_ptr<ldns_rdf, LdnsRdfDeleter> origin_rdf_;
  std::string owner_;  // the last owner (canonical), for lines that start with a blank
  uint32_t default_ttl_ = 3600;
  bool ttl_directive_ = false;
  std::vector<std::string> active_files_;  // the $INCLUDE chain, for loop detection
  std::vector<std::string> errors_;        // "file:line: what", in the order found
  bool stopped_at_limit_ = false;
  absl::StatusCode code_ = absl::StatusCode::kInvalidArgument;
  // Scratch.
  std::string name_;
  std::string ldns_line_;
  TextRecord record_;
};

absl::Status MasterFileReader::Next(Cursor& cursor, const std::string& file, Logical& logical,
                                    bool& done) {
  logical.tokens.clear();
  done = false;
  int parens = 0;
  int paren_line = 0;
  const absl::string_view text = cursor.text;
  bool line_start = true;
  while (cursor.pos < text.size()) {
    const char c = text[cursor.pos];
    if (line_start && parens == 0 && logical.tokens.empty()) {
      logical.blank_owner = c == ' ' || c == '\t';
    }
    line_start = false;
    if (c == '\n') {
      ++cursor.pos;
      ++cursor.line;
      line_start = true;
      if (parens == 0 && !logical.tokens.empty()) return absl::OkStatus();
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++cursor.pos;
      continue;
    }
    if (c == ';') {
      while (cursor.pos < text.size() && text[cursor.pos] != '\n') ++cursor.pos;
      continue;
    }
    if (c == '(') {
      if (parens > 0) return Error(file, cursor.line, "nested '(' (RFC 1035 §5.1)");
      if (logical.tokens.empty()) {
        logical.line = cursor.line;
        logical.begin = cursor.pos;
      }
      parens = 1;
      paren_line = cursor.line;
      ++cursor.pos;
      continue;
    }
    if (c == ')') {
      if (parens == 0) return Error(file, cursor.line, "')' without '('");
      parens = 0;
      ++cursor.pos;
      logical.end = cursor.pos;
      continue;
    }
    if (logical.tokens.empty() && parens == 0) {
      logical.line = cursor.line;
      logical.begin = cursor.pos;
    }
    Token token;
    if (c == '"') {
      const size_t start = ++cursor.pos;
      while (cursor.pos < text.size() && text[cursor.pos] != '"') {
        if (text[cursor.pos] == '\n') {
          return Error(file, cursor.line, "unterminated quoted string (missing '\"')");
        }
        if (text[cursor.pos] == '\\' && cursor.pos + 1 < text.size() &&
            text[cursor.pos + 1] != '\n') {
          ++cursor.pos;
        }
        ++cursor.pos;
      }
      if (cursor.pos >= text.size()) {
        return Error(file, cursor.line, "unterminated quoted string (missing '\"')");
      }
      token.text = text.substr(start, cursor.pos - start);
      token.quoted = true;
      ++cursor.pos;
    } else {
      const size_t start = cursor.pos;
      while (cursor.pos < text.size()) {
        const char d = text[cursor.pos];
        if (d == ' ' || d == '\t' || d == '\r' || d == '\n' || d == ';' || d == '(' || d == ')' ||
            d == '"') {
          break;
        }
        if (d == '\\' && cursor.pos + 1 < text.size() && text[cursor.pos + 1] != '\n') {
          ++cursor.pos;
        }
        ++cursor.pos;
      }
      token.text = text.substr(start, cursor.pos - start);
    }
    logical.end = cursor.pos;
    logical.tokens.push_back(token);
  }
  if (parens > 0) {
    return Error(file, paren_line, "'(' not closed before the end of the file");
  }
  done = logical.tokens.empty();
  return absl::OkStatus();
}

absl::Status MasterFileReader::SetOrigin(absl::string_view text) {
  if (!ParseName(text, origin_wire_, name_)) {
    return absl::InvalidArgumentError(absl::StrCat("bad $ORIGIN name '", text, "'"));
  }
  SetOriginWire(name_);
  return absl::OkStatus();
}

void MasterFileReader::SetOriginWire(const std::string& wire) {
  origin_wire_ = wire;
  if (wire.empty()) {
    origin_rdf_.reset();
    return;
  }
  // The case as written: ldns completes relative names in other types' rdata with it.
  origin_rdf_.reset(ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, wire.size(), wire.data()));
}

absl::Status MasterFileReader::Directive(const std::string& file, const Logical& logical,
                                         int depth) {
  const absl::string_view name = logical.tokens[0].text;
  const size_t args = logical.tokens.size() - 1;
  if (absl::EqualsIgnoreCase(name, "$ORIGIN")) {
    if (args != 1) return Error(file, logical.line, "$ORIGIN takes one name");
    if (absl::Status s = SetOrigin(logical.tokens[1].text); !s.ok()) {
      return Error(file, logical.line, s.message());
    }
    return absl::OkStatus();
  }
  if (absl::EqualsIgnoreCase(name, "$TTL")) {
    uint32_t ttl = 0;
    if (args != 1 || !ParseTtl(logical.tokens[1].text, ttl)) {
      return Error(file, logical.line,
                   "$TTL takes one TTL: seconds, or with units s m h d w (RFC 2308 §4)");
    }
    default_ttl_ = ttl;
    ttl_directive_ = true;
    return absl::OkStatus();
  }
  if (absl::EqualsIgnoreCase(name, "$INCLUDE")) {
    // RFC 1035 §5.1: $INCLUDE <file-name> [<domain-name>]; the origin given applies to the
    // included file only, and the including file's origin is unchanged after it.
    if (args < 1 || args > 2) {
      return Error(file, logical.line, "$INCLUDE takes a file name and an optional origin");
    }
    std::error_code error;
    if (!std::filesystem::is_regular_file(file, error)) {
      return Error(file, logical.line, "$INCLUDE needs a zone read from a file");
    }
    if (depth >= options_.max_include_depth) {
      return Error(file, logical.line,
                   absl::StrCat("$INCLUDE nested deeper than ", options_.max_include_depth,
                                " files (--dns_zone_include_depth)"));
    }
    std::filesystem::path path(std::string(logical.tokens[1].text));
    if (path.is_relative()) path = std::filesystem::path(file).parent_path() / path;
    const std::string canonical = std::filesystem::weakly_canonical(path, error).string();
    for (const std::string& active : active_files_) {
      if (active == canonical) {
        return Error(file, logical.line,
                     absl::StrCat("$INCLUDE loop: ", path.string(), " is already being read"));
      }
    }
    // The checks the top file gets (common/data_file.h): a regular file under
    // --max-data-file-mb, so that an include of /dev/zero, a FIFO or a folder is an error
    // here, never a hang or std::bad_alloc.
    absl::StatusOr<std::string> content = ReadDataFile(path.string(), "$INCLUDE file");
    if (!content.ok()) {
      return Error(file, logical.line, content.status().message());
    }
    const std::string saved_origin = origin_wire_;
    const std::string saved_owner = owner_;
    if (args == 2) {
      if (absl::Status s = SetOrigin(logical.tokens[2].text); !s.ok()) {
        return Error(file, logical.line, s.message());
      }
    }
    active_files_.push_back(canonical);
    absl::Status status = ReadFile(path.string(), *content, depth + 1);
    active_files_.pop_back();
    if (!status.ok()) return status;
    SetOriginWire(saved_origin);
    owner_ = saved_owner;
    return absl::OkStatus();
  }
  return Error(file, logical.line,
               absl::StrCat("unknown directive ", name,
                            " (known: $ORIGIN, $INCLUDE, RFC 1035 §5.1; $TTL, RFC 2308 §4)"));
}

bool MasterFileReader::FastRdata(uint16_t type, absl::Span<const Token> rdata, ParsedRecord& record,
                                 std::string& error) {
  if (!rdata.empty() && !rdata[0].quoted && rdata[0].text == "\\#") return false;  // RFC 3597
  record.rdata.clear();
  record.target.clear();
  record.compressible_count = 0;
  record.compressible_offsets[0] = record.compressible_offsets[1] = 0;
  switch (type) {
    case kTypeA:
    case kTypeAaaa: {
      if (rdata.size() != 1) {  // quoted is fine, as in NSD
        error = type == kTypeA ? "A takes one IPv4 address" : "AAAA takes one IPv6 address";
        return true;
      }
      char buffer[64];
      uint8_t address[16];
      if (rdata[0].text.size() >= sizeof(buffer)) {
        error = "bad address";
        return true;
      }
      std::memcpy(buffer, rdata[0].text.data(), rdata[0].text.size());
      buffer[rdata[0].text.size()] = '\0';
      if (inet_pton(type == kTypeA ? AF_INET : AF_INET6, buffer, address) != 1) {
        error = absl::StrCat("bad ", type == kTypeA ? "IPv4" : "IPv6", " address '", rdata[0].text,
                             "'");
        return true;
      }
      record.rdata.assign(reinterpret_cast<const char*>(address), type == kTypeA ? 4 : 16);
      return true;
    }
    case kTypeNs:
    case kTypeCname:
    case kTypePtr: {
      if (rdata.size() != 1 || rdata[0].quoted || !ParseName(rdata[0].text, origin_wire_, name_)) {
        error = "takes one domain name";
        return true;
      }
      record.rdata = name_;
      record.compressible_count = 1;
      if (type != kTypePtr) record.target = Lowercase(name_);
      return true;
    }
    case kTypeMx: {
      uint32_t preference = 0;
      bool ok = rdata.size() == 2 && !rdata[0].quoted && !rdata[1].quoted &&
                !rdata[0].text.empty() && rdata[0].text.size() <= 5;
      for (size_t i = 0; ok && i < rdata[0].text.size(); ++i) {
        const char c = rdata[0].text[i];
        ok = std::isdigit(static_cast<unsigned char>(c)) != 0;
        preference = preference * 10 + static_cast<uint32_t>(c - '0');
      }
      if (!ok || preference > 0xffff || !ParseName(rdata[1].text, origin_wire_, name_)) {
        error = "MX takes a preference (0..65535) and a domain name";
        return true;
      }
      record.rdata.push_back(static_cast<char>(preference >> 8));
      record.rdata.push_back(static_cast<char>(preference));
      record.rdata += name_;
      record.compressible_offsets[0] = 2;
      record.compressible_count = 1;
      record.target = Lowercase(name_);
      return true;
    }
    case kTypeTxt: {
      if (rdata.empty()) {
        error = "TXT takes at least one character-string";
        return true;
      }
      for (const Token& token : rdata) {
        if (!AppendCharacterString(token, record.rdata)) {
          error = "bad character-string (at most 255 bytes; \\DDD escapes up to 255)";
          return true;
        }
      }
      return true;
    }
    case kTypeDs:
    case kTypeRrsig:
    case kTypeNsec3:
      return DnssecRdata(type, rdata, record);
    default:
      return false;
  }
}

bool MasterFileReader::DnssecRdata(uint16_t type, absl::Span<const Token> rdata,
                                   ParsedRecord& record) {
  absl::InlinedVector<absl::string_view, 16> tokens;
  for (const Token& token : rdata) {
    if (token.quoted) return false;
    tokens.push_back(token.text);
  }
  bool ok;
  if (type == kTypeDs) {
    ok = DsRdataFromText(tokens, record.rdata);
  } else if (type == kTypeNsec3) {
    ok = Nsec3RdataFromText(tokens, record.rdata);
  } else {
    ok = tokens.size() > 7 && ParseName(tokens[7], origin_wire_, name_) &&
         RrsigRdataFromText(tokens, name_, record.rdata);
  }
  // Not the plain form: ldns reads it (and gives its verdict on it).
  if (!ok) record.rdata.clear();
  return ok;
}

absl::Status MasterFileReader::LdnsRdata(absl::string_view type_text, absl::Span<const Token> rdata,
                                         uint32_t ttl, ParsedRecord& record) {
  // The owner and class do not matter here (ours are used); TTL given explicitly.
  ldns_line_ = absl::StrCat(". ", ttl, " IN ", type_text);
  for (const Token& token : rdata) {
    ldns_line_.push_back(' ');
    if (token.quoted) ldns_line_.push_back('"');
    ldns_line_.append(token.text.data(), token.text.size());
    if (token.quoted) ldns_line_.push_back('"');
  }
  ldns_rr* raw = nullptr;
  const ldns_status status =
      ldns_rr_new_frm_str(&raw, ldns_line_.c_str(), ttl, origin_rdf_.get(), nullptr);
  std::unique_ptr<ldns_rr, LdnsRrDeleter> rr(raw);
  if (status != LDNS_STATUS_OK) {
    return absl::InvalidArgumentError(ldns_get_errorstr_by_id(status));
  }
  record = RecordFromLdns(rr.get());
  record.ttl = ttl;
  return absl::OkStatus();
}

// The type a mnemonic names, or 0. The types of nearly every line of real zones first: ldns
// walks its whole table with strlen and strncasecmp per entry (3% of a load).
uint16_t TypeByName(const std::string& text) {
  static constexpr std::pair<absl::string_view, uint16_t> kCommon[] = {
      {"A", kTypeA},     {"NS", kTypeNs},       {"AAAA", kTypeAaaa},
      {"DS", kTypeDs},   {"RRSIG", kTypeRrsig}, {"NSEC3", kTypeNsec3},
      {"MX", kTypeMx},   {"TXT", kTypeTxt},     {"CNAME", kTypeCname},
      {"SRV", kTypeSrv}, {"NSEC", kTypeNsec},   {"DNSKEY", kTypeDnskey},
      {"SOA", kTypeSoa}, {"PTR", kTypePtr},     {"NSEC3PARAM", kTypeNsec3param}};
  for (const auto& [name, code] : kCommon) {
    if (absl::EqualsIgnoreCase(text, name)) return code;
  }
  return static_cast<uint16_t>(ldns_get_rr_type_by_name(text.c_str()));
}

absl::Status MasterFileReader::RecordLine(const std::string& file, absl::string_view text,
                                          const Logical& logical) {
  const std::vector<Token>& tokens = logical.tokens;
  size_t i = 0;
  if (!logical.blank_owner) {
    if (tokens[0].quoted || !ParseName(tokens[0].text, origin_wire_, name_)) {
      return Error(file, logical.line,
                   origin_wire_.empty() && tokens[0].text.back() != '.'
                       ? absl::StrCat("relative owner '", tokens[0].text,
                                      "' before any $ORIGIN: add $ORIGIN or end it with '.'")
                       : absl::StrCat("bad owner name '", tokens[0].text, "'"));
    }
    owner_ = Lowercase(name_);
    if (owner_seen_.has_value()) (*owner_seen_)(owner_);
    i = 1;
  } else if (owner_.empty()) {
    return Error(file, logical.line, "the first record has no owner (the line starts blank)");
  }
  bool have_ttl = false;
  uint32_t ttl = 0;
  uint16_t rr_class = 0;
  for (int field = 0; field < 2 && i < tokens.size(); ++field) {
    const absl::string_view t = tokens[i].text;
    if (!tokens[i].quoted && !t.empty() && std::isdigit(static_cast<unsigned char>(t[0]))) {
      if (have_ttl || !ParseTtl(t, ttl)) {
        return Error(file, logical.line,
                     absl::StrCat("bad TTL '", t, "': seconds, or with units s m h d w"));
      }
      have_ttl = true;
      ++i;
    } else if (rr_class == 0 && !tokens[i].quoted && (rr_class = ParseClass(t)) != 0) {
      ++i;
    } else {
      break;
    }
  }
  if (i >= tokens.size()) return Error(file, logical.line, "no record type");
  const Token& type_token = tokens[i];
  const std::string type_text(type_token.text);
  const uint16_t type = type_token.quoted ? 0 : TypeByName(type_text);
  if (type == 0 && !absl::EqualsIgnoreCase(type_text, "TYPE0")) {
    return Error(file, logical.line, absl::StrCat("unknown record type '", type_text, "'"));
  }
  if (!have_ttl) {
    ttl = default_ttl_;
  } else if (!ttl_directive_) {
    default_ttl_ = ttl;  // RFC 1035 §5.1: without $TTL, an omitted TTL is the last stated
  }
  const absl::Span<const Token> rdata = absl::MakeConstSpan(tokens).subspan(i + 1);
  record_.owner = owner_;
  record_.rr_class = rr_class == 0 ? 1 : rr_class;
  record_.type = type;
  record_.text = text;
  std::string error;
  if (FastRdata(type, rdata, record_.record, error)) {
    if (!error.empty()) return Error(file, logical.line, absl::StrCat(type_text, ": ", error));
    record_.record.ttl = ttl;
    if (options_.verify_with_ldns) {
      ParsedRecord reference;
      if (absl::Status s = LdnsRdata(type_text, rdata, ttl, reference); !s.ok()) {
        return Error(file, logical.line,
                     absl::StrCat("fast path accepted what ldns rejects (", s.message(), ")"));
      }
      const ParsedRecord& mine = record_.record;
      if (reference.rdata != mine.rdata || reference.target != mine.target ||
          reference.compressible_count != mine.compressible_count ||
          reference.compressible_offsets[0] != mine.compressible_offsets[0] ||
          reference.compressible_offsets[1] != mine.compressible_offsets[1]) {
        return absl::InternalError(
            absl::StrCat(file, ":", logical.line, ": fast path differs from ldns for: ", text));
      }
    }
  } else if (absl::Status s = LdnsRdata(type_text, rdata, ttl, record_.record); !s.ok()) {
    return Error(file, logical.line, absl::StrCat(s.message(), ": ", text));
  }
  if (absl::Status s = sink_(record_); !s.ok()) {
    return Error(file, logical.line, s.message(), s.code());
  }
  return absl::OkStatus();
}

bool MasterFileReader::ReadOn(const absl::Status& error) {
  if (absl::IsCancelled(error)) return false;
  errors_.emplace_back(error.message());
  if (!absl::IsInvalidArgument(error) && !absl::IsFailedPrecondition(error)) code_ = error.code();
  if (static_cast<int>(errors_.size()) >= std::max(options_.max_errors, 1)) {
    stopped_at_limit_ = true;
    return false;
  }
  return absl::IsInvalidArgument(error);
}

absl::Status MasterFileReader::ReadFile(const std::string& display_name, absl::string_view text,
                                        int depth) {
  Cursor cursor{text, 0, 1};
  Logical logical;
  while (true) {
    bool done = false;
    if (absl::Status s = Next(cursor, display_name, logical, done); !s.ok()) {
      // A quote or parenthesis out of place: where the next record starts is a guess.
      ReadOn(s);
      return absl::CancelledError();
    }
    if (done) return absl::OkStatus();
    const absl::string_view source = text.substr(logical.begin, logical.end - logical.begin);
    absl::Status s;
    if (!logical.blank_owner && !logical.tokens[0].quoted &&
        absl::StartsWith(logical.tokens[0].text, "$")) {
      s = Directive(display_name, logical, depth);
    } else {
      s = RecordLine(display_name, source, logical);
    }
    if (!s.ok() && !ReadOn(s)) return absl::CancelledError();
  }
}

}  // namespace

size_t EstimateOwnerCount(absl::string_view text) {
  size_t owners = 0;
  absl::string_view previous;
  size_t at = 0;
  while (at < text.size()) {
    const char* newline =
        static_cast<const char*>(std::memchr(text.data() + at, '\n', text.size() - at));
    const size_t end =
        newline == nullptr ? text.size() : static_cast<size_t>(newline - text.data());
    const char c = text[at];
    if (end > at && c != ' ' && c != '\t' && c != '\r' && c != ';' && c != '$') {
      size_t token_end = at;
      while (token_end < end && text[token_end] != ' ' && text[token_end] != '\t') ++token_end;
      const absl::string_view owner = text.substr(at, token_end - at);
      if (owner != previous) ++owners;
      previous = owner;
    }
    at = end + 1;
  }
  return owners;
}

bool NameFromText(absl::string_view text, absl::string_view origin, std::string& wire) {
  std::string origin_wire;
  if (!origin.empty() && !ParseName(origin, "", origin_wire)) return false;
  return ParseName(text, origin_wire, wire);
}

absl::Status ReadMasterFile(absl::string_view display_name, absl::string_view text,
                            const ZoneTextOptions& options, TextRecordSink sink) {
  return ReadMasterFile(display_name, text, options, sink, std::nullopt);
}

absl::Status ReadMasterFile(absl::string_view display_name, absl::string_view text,
                            const ZoneTextOptions& options, TextRecordSink sink,
                            std::optional<OwnerHint> owner_seen) {
  MasterFileReader reader(options, sink, owner_seen);
  reader.ReadFile(std::string(display_name), text, 0).IgnoreError();  // errors() has them
  if (reader.errors().empty()) return absl::OkStatus();
  std::string message = absl::StrJoin(reader.errors(), "\n");
  if (reader.stopped_at_limit()) {
    absl::StrAppend(&message, "\n", display_name, ": stopped after ", reader.errors().size(),
                    " errors");
  }
  return absl::Status(reader.code(), message);
}

}  // namespace onepass::dns
