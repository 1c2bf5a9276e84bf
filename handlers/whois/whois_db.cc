#include "handlers/whois/whois_db.h"

#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/data_file.h"
#include "handlers/whois/whois_query.h"

namespace onepass::whois {
namespace {

constexpr size_t kMaxLineBytes = 64 * 1024;
constexpr size_t kReadBlockBytes = 1 << 20;
constexpr size_t kMinDomainLineBytes = 200;
// Long enough for any registry's object IDs (EPP roidType is a token of ≥ 1 char).
constexpr size_t kMaxIdBytes = 128;

void SplitFields(absl::string_view line, char separator, std::vector<absl::string_view>* out) {
  out->clear();
  if (line.empty()) return;
  size_t start = 0;
  while (true) {
    const size_t end = line.find(separator, start);
    if (end == absl::string_view::npos) {
      out->push_back(line.substr(start));
      return;
    }
    out->push_back(line.substr(start, end - start));
    start = end + 1;
  }
}

bool HasControlByte(absl::string_view field) {
  for (char c : field) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

bool TwoDigits(absl::string_view s, size_t at, int low, int high) {
  if (!absl::ascii_isdigit(static_cast<unsigned char>(s[at])) ||
      !absl::ascii_isdigit(static_cast<unsigned char>(s[at + 1]))) {
    return false;
  }
  const int value = (s[at] - '0') * 10 + (s[at + 1] - '0');
  return value >= low && value <= high;
}

// A domain or host name from the file: ASCII, one trailing dot allowed; upper-cased into *out.
absl::Status CheckName(absl::string_view what, absl::string_view name, std::string* out) {
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  for (char c : name) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " \"", name, "\" is not ASCII; write internationalized names as A-labels (xn--)"));
    }
  }
  if (!IsValidDomainName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " \"", name, "\" is not a valid host name (RFC 1123 §2.1)"));
  }
  out->assign(name.data(), name.size());
  absl::AsciiStrToUpper(out);
  return absl::OkStatus();
}

absl::Status CheckTime(absl::string_view what, absl::string_view time) {
  if (IsRfc3339Utc(time)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " \"", time, "\" is not RFC 3339 UTC like 2026-01-02T03:04:05Z"));
}

absl::Status CheckIanaId(absl::string_view what, absl::string_view text, uint32_t* id) {
  if (text.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(text[0])) ||
      !absl::SimpleAtoi(text, id) || *id == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " \"", text, "\" is not a registrar IANA ID (a positive number)"));
  }
  return absl::OkStatus();
}

// Digest lengths of the DS digest types with a fixed size [bytes]: SHA-1 (RFC 4034 §5.1.4),
// SHA-256 (RFC 4509 §2.2), GOST (RFC 5933), SHA-384 (RFC 6605 §4). Other types: any length.
size_t DsDigestBytes(int digest_type) {
  switch (digest_type) {
    case 1:
      return 20;
    case 2:
    case 3:
      return 32;
    case 4:
      return 48;
    default:
      return 0;
  }
}

constexpr size_t kMaxDsRecords = 16;
constexpr size_t kMaxDsDigestHexBytes = 256;

// Checks one DS record "KEYTAG ALGORITHM DIGEST-TYPE DIGEST" and appends it to *out with the
// digest upper-cased.
absl::Status AppendDsRecord(absl::string_view ds, std::string* out) {
  std::vector<absl::string_view> parts;
  SplitFields(ds, ' ', &parts);
  uint32_t key_tag = 0;
  uint32_t algorithm = 0;
  uint32_t digest_type = 0;
  const auto number = [](absl::string_view text, uint32_t max, uint32_t* value) {
    return !text.empty() && absl::ascii_isdigit(static_cast<unsigned char>(text[0])) &&
           absl::SimpleAtoi(text, value) && *value <= max;
  };
  if (parts.size() != 4 || !number(parts[0], 65535, &key_tag) ||
      !number(parts[1], 255, &algorithm) || !number(parts[2], 255, &digest_type)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DS record \"", ds,
        "\" is not KEYTAG (0-65535) ALGORITHM (0-255) DIGEST-TYPE (0-255) HEX-DIGEST"));
  }
  const absl::string_view digest = parts[3];
  const size_t expected = DsDigestBytes(static_cast<int>(digest_type));
  bool hex = !digest.empty() && digest.size() % 2 == 0 && digest.size() <= kMaxDsDigestHexBytes;
  for (char c : digest) hex = hex && absl::ascii_isxdigit(static_cast<unsigned char>(c));
  if (!hex || (expected != 0 && digest.size() != 2 * expected)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DS digest \"", digest, "\" is not ",
        expected != 0 ? absl::StrCat(2 * expected, " hex digits (digest type ", digest_type, ")")
                      : std::string("an even number of hex digits")));
  }
  absl::StrAppend(out, key_tag, " ", algorithm, " ", digest_type, " ");
  for (char c : digest) out->push_back(absl::ascii_toupper(static_cast<unsigned char>(c)));
  return absl::OkStatus();
}

absl::Status CheckId(absl::string_view what, absl::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes || id.find(' ') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " \"", id, "\" must be 1 to ", kMaxIdBytes, " bytes without spaces"));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsRfc3339Utc(absl::string_view t) {
  // 2026-01-02T03:04:05Z
  if (t.size() != 20 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' ||
      t[16] != ':' || t[19] != 'Z') {
    return false;
  }
  return TwoDigits(t, 0, 0, 99) && TwoDigits(t, 2, 0, 99) && TwoDigits(t, 5, 1, 12) &&
         TwoDigits(t, 8, 1, 31) && TwoDigits(t, 11, 0, 23) && TwoDigits(t, 14, 0, 59) &&
         TwoDigits(t, 17, 0, 60);  // 60: a leap second (RFC 3339 §5.6)
}

bool IsEppDomainStatus(absl::string_view status) {
  static constexpr std::array<absl::string_view, 23> kStatuses = {
      "ok",
      "inactive",
      "clientDeleteProhibited",
      "clientHold",
      "clientRenewProhibited",
      "clientTransferProhibited",
      "clientUpdateProhibited",
      "serverDeleteProhibited",
      "serverHold",
      "serverRenewProhibited",
      "serverTransferProhibited",
      "serverUpdateProhibited",
      "pendingCreate",
      "pendingDelete",
      "pendingRenew",
      "pendingTransfer",
      "pendingUpdate",
      "addPeriod",
      "autoRenewPeriod",
      "renewPeriod",
      "transferPeriod",
      "redemptionPeriod",
      "pendingRestore",
  };
  for (absl::string_view known : kStatuses) {
    if (status == known) return true;
  }
  return false;
}

WhoisDbParser::WhoisDbParser(absl::string_view source_name)
    : source_name_(source_name), sink_(builder_) {}

WhoisDbParser::WhoisDbParser(absl::string_view source_name, WhoisRecordSink& sink)
    : source_name_(source_name), sink_(sink) {}

absl::Status WhoisDbParser::ParseLine(absl::string_view line) {
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  absl::Status status;
  if (line.size() > kMaxLineBytes) {
    status = absl::InvalidArgumentError(
        absl::StrCat("line of ", line.size(), " bytes; at most ", kMaxLineBytes));
  } else if (line.empty() || line.front() == '#') {
    return absl::OkStatus();
  } else {
    status = ParseRecord(line);
  }
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(source_name_, ":", line_number_, ": ", status.message()));
}

absl::Status WhoisDbParser::ParseRecord(absl::string_view line) {
  SplitFields(line, '\t', &fields_);
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (HasControlByte(fields_[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("field ", i + 1, " holds a control character (fields are TAB-separated)"));
    }
  }
  if (!IsValidUtf8(line)) return absl::InvalidArgumentError("line is not valid UTF-8");
  const absl::string_view type = fields_[0];
  if (type == "domain") return ParseDomain();
  if (type == "nameserver") return ParseNameserver();
  if (type == "contact") return ParseContact();
  if (type == "registrar") return ParseRegistrar();
  if (type == "meta") return ParseMeta();
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown record type \"", type, "\"; expected domain, nameserver, contact, registrar, meta"));
}

absl::Status WhoisDbParser::ParseMeta() {
  if (fields_.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("meta record has ", fields_.size(), " fields; 3 expected: meta KEY VALUE"));
  }
  if (fields_[1] == "last-update") {
    if (absl::Status s = CheckTime("last-update", fields_[2]); !s.ok()) return s;
    sink_.SetLastUpdate(fields_[2]);
    return absl::OkStatus();
  }
  if (fields_[1] == "footer") {
    sink_.AddFooterLine(fields_[2]);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown meta key \"", fields_[1], "\"; expected last-update or footer"));
}

absl::Status WhoisDbParser::ParseRegistrar() {
  if (fields_.size() != 10 && fields_.size() != 11) {
    return absl::InvalidArgumentError(absl::StrCat(
        "registrar record has ", fields_.size(),
        " fields; 10 or 11 expected: registrar IANA-ID NAME WHOIS-SERVER URL ABUSE-EMAIL "
        "ABUSE-PHONE ADDRESS PHONE EMAIL [RDAP-BASE-URL]"));
  }
  RegistrarRecord r;
  if (absl::Status s = CheckIanaId("IANA ID", fields_[1], &r.iana_id); !s.ok()) return s;
  if (fields_[2].empty()) return absl::InvalidArgumentError("registrar NAME is empty");
  r.name = fields_[2];
  r.whois_server = fields_[3];
  r.url = fields_[4];
  r.abuse_email = fields_[5];
  r.abuse_phone = fields_[6];
  r.address = fields_[7];
  r.phone = fields_[8];
  r.email = fields_[9];
  if (fields_.size() == 11) {
    if (!fields_[10].empty() && !absl::StartsWith(fields_[10], "https://") &&
        !absl::StartsWith(fields_[10], "http://")) {
      return absl::InvalidArgumentError(
          absl::StrCat("registrar RDAP base URL \"", fields_[10], "\" is not an http(s) URL"));
    }
    r.rdap_url = fields_[10];
  }
  return sink_.AddRegistrar(r);
}

absl::Status WhoisDbParser::ParseContact() {
  if (fields_.size() != 11) {
    return absl::InvalidArgumentError(absl::StrCat(
        "contact record has ", fields_.size(),
        " fields; 11 expected: contact HANDLE NAME ORGANIZATION STREET CITY STATE POSTAL-CODE "
        "COUNTRY PHONE EMAIL"));
  }
  // Handles are what a "contact HANDLE" query can ask for (whois_query.cc's rule).
  if (!IsValidContactHandle(fields_[1])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "contact handle \"", fields_[1], "\" must be 1 to 64 letters, digits, '.', '_' or '-'"));
  }
  ContactRecord c;
  c.handle = fields_[1];
  c.name = fields_[2];
  c.organization = fields_[3];
  c.street = fields_[4];
  c.city = fields_[5];
  c.state = fields_[6];
  c.postal_code = fields_[7];
  c.country = fields_[8];
  c.phone = fields_[9];
  c.email = fields_[10];
  return sink_.AddContact(c);
}

absl::Status WhoisDbParser::ParseNameserver() {
  if (fields_.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("nameserver record has ", fields_.size(),
                     " fields; 4 expected: nameserver NAME REGISTRAR-IANA-ID ADDRESSES"));
  }
  NameserverRecord n;
  if (absl::Status s = CheckName("name server", fields_[1], &name_); !s.ok()) return s;
  n.name = name_;
  if (!fields_[2].empty()) {
    if (absl::Status s = CheckIanaId("registrar IANA ID", fields_[2], &n.registrar_iana_id);
        !s.ok()) {
      return s;
    }
  }
  SplitFields(fields_[3], ',', &list_);
  for (absl::string_view address : list_) {
    std::string text(address);
    unsigned char binary[16];
    if (inet_pton(AF_INET, text.c_str(), binary) != 1 &&
        inet_pton(AF_INET6, text.c_str(), binary) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("address \"", address, "\" is neither IPv4 nor IPv6"));
    }
  }
  n.addresses = list_;
  return sink_.AddNameserver(n);
}

absl::Status WhoisDbParser::ParseDomain() {
  if (fields_.size() != 10 && fields_.size() != 13) {
    return absl::InvalidArgumentError(absl::StrCat(
        "domain record has ", fields_.size(),
        " fields; 10 or 13 expected: domain NAME REGISTRY-DOMAIN-ID REGISTRAR-IANA-ID CREATED "
        "UPDATED EXPIRES STATUSES NAMESERVERS DNSSEC [REGISTRANT ADMIN TECH]"));
  }
  DomainRecord d;
  if (absl::Status s = CheckName("domain name", fields_[1], &name_); !s.ok()) return s;
  d.name = name_;
  if (absl::Status s = CheckId("registry domain ID", fields_[2]); !s.ok()) return s;
  d.registry_id = fields_[2];
  if (absl::Status s = CheckIanaId("registrar IANA ID", fields_[3], &d.registrar_iana_id);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckTime("creation date", fields_[4]); !s.ok()) return s;
  if (absl::Status s = CheckTime("updated date", fields_[5]); !s.ok()) return s;
  if (absl::Status s = CheckTime("expiry date", fields_[6]); !s.ok()) return s;
  d.created = fields_[4];
  d.updated = fields_[5];
  d.expires = fields_[6];

  SplitFields(fields_[7], ',', &list_);
  if (list_.empty()) {
    return absl::InvalidArgumentError("no domain status; use \"ok\" for none (RFC 5731 §2.3)");
  }
  for (absl::string_view status : list_) {
    if (!IsEppDomainStatus(status)) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", status, "\" is not an EPP domain status (RFC 5731 §2.3)"));
    }
  }
  d.statuses = list_;

  // Upper-case the whole list once, then split it: the views stay valid.
  names_.assign(fields_[8].data(), fields_[8].size());
  absl::AsciiStrToUpper(&names_);
  SplitFields(names_, ',', &list2_);
  for (absl::string_view& host : list2_) {
    std::string checked;
    if (absl::Status s = CheckName("name server", host, &checked); !s.ok()) return s;
    if (host.back() == '.') host.remove_suffix(1);
  }
  d.nameservers = list2_;

  constexpr absl::string_view kSigned = "signedDelegation";
  absl::string_view dnssec = fields_[9];
  ds_list_.clear();
  if (absl::StartsWith(dnssec, kSigned) && dnssec.size() > kSigned.size() &&
      dnssec[kSigned.size()] == ':') {
    // Normalize every record into ds_text_ first, then take views: it does not move again.
    // (list_ holds the statuses: the raw records go to ds_list_, then their normalized views.)
    SplitFields(dnssec.substr(kSigned.size() + 1), ',', &ds_list_);
    if (ds_list_.empty() || ds_list_.size() > kMaxDsRecords) {
      return absl::InvalidArgumentError(
          absl::StrCat("signedDelegation: 1 to ", kMaxDsRecords, " DS records expected"));
    }
    ds_text_.clear();
    for (absl::string_view ds : ds_list_) {
      if (absl::Status s = AppendDsRecord(ds, &ds_text_); !s.ok()) return s;
      ds_text_.push_back(',');
    }
    ds_text_.pop_back();
    SplitFields(ds_text_, ',', &ds_list_);
    dnssec = kSigned;
  } else if (dnssec != "unsigned" && dnssec != kSigned) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DNSSEC \"", dnssec,
        "\" is neither \"unsigned\" nor \"signedDelegation:KEYTAG ALG DIGEST-TYPE DIGEST,...\""));
  }
  d.dnssec = dnssec;
  d.ds_data = ds_list_;
  if (fields_.size() == 13) {
    d.registrant = fields_[10];
    d.admin = fields_[11];
    d.tech = fields_[12];
  }
  return sink_.AddDomain(d);
}

absl::Status WhoisDbParser::FinishRecords(absl::string_view fallback_last_update) {
  if (!sink_.has_last_update()) {
    if (fallback_last_update.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_name_, ": no \"meta<TAB>last-update<TAB>TIME\" record"));
    }
    sink_.SetLastUpdate(fallback_last_update);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const WhoisSnapshot>> WhoisDbParser::Finish(
    absl::string_view fallback_last_update) {
  if (absl::Status s = FinishRecords(fallback_last_update); !s.ok()) return s;
  return builder_.Build();
}

absl::Status LoadWhoisRecordsText(absl::string_view text, absl::string_view source_name,
                                  WhoisRecordSink& sink) {
  WhoisDbParser parser(source_name, sink);
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const absl::string_view line = text.substr(0, end);
    if (absl::Status s = parser.ParseLine(line); !s.ok()) return s;
    if (end == absl::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return parser.FinishRecords();
}

absl::StatusOr<std::shared_ptr<const WhoisSnapshot>> LoadWhoisDbText(
    absl::string_view text, absl::string_view source_name) {
  WhoisSnapshotBuilder builder;
  if (absl::Status s = LoadWhoisRecordsText(text, source_name, builder); !s.ok()) return s;
  return builder.Build();
}

absl::StatusOr<std::shared_ptr<const WhoisSnapshot>> LoadWhoisDbFile(const std::string& path) {
  WhoisSnapshotBuilder builder;
  if (absl::Status s = LoadWhoisRecordsFile(path, builder); !s.ok()) return s;
  return builder.Build();
}

absl::Status LoadWhoisRecordsFile(const std::string& path, WhoisRecordSink& sink) {
  struct FileCloser {
    void operator()(FILE* f) const { std::fclose(f); }
  };
  // A regular file under --max-data-file-mb: a FIFO or a device must not hang or crash.
  absl::StatusOr<OpenedDataFile> opened = OpenDataFile(path, "--whois-db");
  if (!opened.ok()) return opened.status();
  std::unique_ptr<FILE, FileCloser> file(fdopen(opened->fd, "rb"));
  if (file == nullptr) {
    close(opened->fd);
    return absl::InternalError(
        absl::StrCat("cannot read --whois-db ", path, ": ", std::strerror(errno)));
  }
  struct stat info;
  if (fstat(fileno(file.get()), &info) != 0) {
    return absl::InternalError(absl::StrCat("cannot stat ", path, ": ", std::strerror(errno)));
  }
  WhoisDbParser parser(path, sink);
  // A domain line is 150 to 300 bytes; guessing high costs 5 bytes per unused index slot.
  parser.ReserveDomains(static_cast<size_t>(info.st_size) / kMinDomainLineBytes);
  std::vector<char> block(kReadBlockBytes);
  std::string carry;  // a line cut by the block's end
  uint64_t total = 0;
  while (true) {
    const size_t n = std::fread(block.data(), 1, block.size(), file.get());
    total += n;
    if (total > MaxDataFileBytes()) {  // grew past the cap while being read
      return absl::FailedPreconditionError(
          absl::StrCat("--whois-db ", path, " is larger than --max-data-file-mb"));
    }
    if (n == 0) {
      if (std::ferror(file.get())) {
        return absl::DataLossError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
      }
      break;
    }
    absl::string_view data(block.data(), n);
    while (!data.empty()) {
      const size_t end = data.find('\n');
      if (end == absl::string_view::npos) {
        if (carry.size() + data.size() > kMaxLineBytes + 1) {
          // Let the parser report the overlong line with its number.
          carry.append(data.data(), data.size());
          absl::Status s = parser.ParseLine(carry);
          if (s.ok()) s = absl::InternalError("overlong line accepted");
          return s;
        }
        carry.append(data.data(), data.size());
        break;
      }
      absl::Status s;
      if (carry.empty()) {
        s = parser.ParseLine(data.substr(0, end));
      } else {
        carry.append(data.data(), end);
        s = parser.ParseLine(carry);
        carry.clear();
      }
      if (!s.ok()) return s;
      data.remove_prefix(end + 1);
    }
  }
  if (!carry.empty()) {
    if (absl::Status s = parser.ParseLine(carry); !s.ok()) return s;
  }
  const std::string mtime =
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromTimeT(info.st_mtime), absl::UTCTimeZone());
  return parser.FinishRecords(mtime);
}

}  // namespace onepass::whois
