#include "handlers/ocsp/ocsp_snapshot.h"

#include <openssl/asn1.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/ocsp.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "common/data_file.h"
#include "common/log.h"
#include "handlers/ocsp/der_reader.h"
#include "handlers/ocsp/directory_entry.h"
#include "handlers/ocsp/http_response_writer.h"

namespace onepass::ocsp {
namespace {

struct OcspResponseFree {
  void operator()(OCSP_RESPONSE* p) const { OCSP_RESPONSE_free(p); }
};
struct OcspBasicRespFree {
  void operator()(OCSP_BASICRESP* p) const { OCSP_BASICRESP_free(p); }
};
struct OpenSslFree {
  void operator()(unsigned char* p) const { OPENSSL_free(p); }
};

absl::Span<const uint8_t> Bytes(const ASN1_STRING* s) {
  return {ASN1_STRING_get0_data(s), static_cast<size_t>(ASN1_STRING_length(s))};
}

absl::StatusOr<absl::Time> ToTime(const ASN1_GENERALIZEDTIME* time) {
  struct tm tm = {};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) {
    return absl::InvalidArgumentError("unreadable GeneralizedTime");
  }
  return absl::FromCivil(absl::CivilSecond(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                                           tm.tm_min, tm.tm_sec),
                         absl::UTCTimeZone());
}

// The index key of one SingleResponse's CertID, from OpenSSL's parse.
absl::StatusOr<std::string> CertIdKeyOf(const OCSP_CERTID* cert_id) {
  ASN1_OCTET_STRING* name_hash = nullptr;
  ASN1_OCTET_STRING* key_hash = nullptr;
  ASN1_OBJECT* hash_algorithm = nullptr;
  ASN1_INTEGER* serial = nullptr;
  // OpenSSL 3.0's prototype takes a non-const CertID but only reads it.
  if (OCSP_id_get0_info(&name_hash, &hash_algorithm, &key_hash, &serial,
                        const_cast<OCSP_CERTID*>(cert_id)) != 1 ||
      name_hash == nullptr || key_hash == nullptr || hash_algorithm == nullptr ||
      serial == nullptr) {
    return absl::InvalidArgumentError("CertID without all four fields");
  }
  // The serial's content octets exactly as DER encodes them, as a request carries them.
  unsigned char* serial_der_raw = nullptr;
  const int serial_der_size = i2d_ASN1_INTEGER(serial, &serial_der_raw);
  std::unique_ptr<unsigned char, OpenSslFree> serial_der(serial_der_raw);
  if (serial_der_size <= 0) return absl::InvalidArgumentError("unencodable serial number");
  absl::Span<const uint8_t> serial_tlv(serial_der.get(), static_cast<size_t>(serial_der_size));
  CertIdView view;
  if (!ReadDerElementWithTag(serial_tlv, kDerInteger, view.serial_number)) {
    return absl::InvalidArgumentError("unreadable serial number");
  }
  view.hash_algorithm_oid = {OBJ_get0_data(hash_algorithm), OBJ_length(hash_algorithm)};
  view.issuer_name_hash = Bytes(name_hash);
  view.issuer_key_hash = Bytes(key_hash);
  CertIdKeyBuffer buffer;
  const absl::string_view key = EncodeCertIdKey(view, buffer);
  if (key.empty()) return absl::InvalidArgumentError("CertID field empty or too long");
  return std::string(key);
}

struct ParsedResponse {
  std::vector<std::string> keys;
  absl::Time this_update = absl::InfinitePast();
  absl::optional<absl::Time> next_update;
};

absl::StatusOr<ParsedResponse> ParseResponse(const std::string& der) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<OCSP_RESPONSE, OcspResponseFree> response(
      d2i_OCSP_RESPONSE(nullptr, &p, static_cast<long>(der.size())));
  if (response == nullptr) return absl::InvalidArgumentError("not a DER OCSPResponse");
  if (p != reinterpret_cast<const unsigned char*>(der.data()) + der.size()) {
    return absl::InvalidArgumentError("bytes after the OCSPResponse");
  }
  const int status = OCSP_response_status(response.get());
  if (status != OCSP_RESPONSE_STATUS_SUCCESSFUL) {
    return absl::InvalidArgumentError(
        absl::StrCat("responseStatus is ", OCSP_response_status_str(status), ", not successful"));
  }
  std::unique_ptr<OCSP_BASICRESP, OcspBasicRespFree> basic(
      OCSP_response_get1_basic(response.get()));
  if (basic == nullptr) return absl::InvalidArgumentError("not a basic OCSP response");
  const int count = OCSP_resp_count(basic.get());
  if (count <= 0) return absl::InvalidArgumentError("no SingleResponse");
  ParsedResponse parsed;
  for (int i = 0; i < count; ++i) {
    OCSP_SINGLERESP* single = OCSP_resp_get0(basic.get(), i);
    if (single == nullptr) return absl::InvalidArgumentError("unreadable SingleResponse");
    int reason = 0;
    ASN1_GENERALIZEDTIME* revoked_at = nullptr;
    ASN1_GENERALIZEDTIME* this_update = nullptr;
    ASN1_GENERALIZEDTIME* next_update = nullptr;
    if (OCSP_single_get0_status(single, &reason, &revoked_at, &this_update, &next_update) < 0) {
      return absl::InvalidArgumentError("SingleResponse without a certStatus");
    }
    absl::StatusOr<absl::Time> this_time = ToTime(this_update);
    if (!this_time.ok()) return this_time.status();
    parsed.this_update = std::max(parsed.this_update, *this_time);
    if (next_update != nullptr) {
      absl::StatusOr<absl::Time> next_time = ToTime(next_update);
      if (!next_time.ok()) return next_time.status();
      if (!parsed.next_update.has_value() || *next_time < *parsed.next_update) {
        parsed.next_update = *next_time;
      }
    }
    absl::StatusOr<std::string> key = CertIdKeyOf(OCSP_SINGLERESP_get0_id(single));
    if (!key.ok()) return key.status();
    parsed.keys.push_back(*std::move(key));
  }
  return parsed;
}

std::string Sha1Hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha1(), nullptr) != 1) {
    return "0";  // unreachable with a working libcrypto; any stable ETag would do
  }
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), size));
}

}  // namespace

void OcspSnapshot::Add(NamedResponse response, absl::Time now, const OcspLoadOptions& options) {
  if (response.der.size() > options.max_response_bytes) {
    LogWarning("ocsp: skipping %s: %d bytes, over the %d-byte limit (--ocsp-max-response-bytes)",
               response.name, response.der.size(), options.max_response_bytes);
    ++stats_.skipped_invalid;
    return;
  }
  absl::StatusOr<ParsedResponse> parsed = ParseResponse(response.der);
  if (!parsed.ok()) {
    LogWarning("ocsp: skipping %s: %s", response.name, parsed.status().message());
    ++stats_.skipped_invalid;
    return;
  }
  if (parsed->next_update.has_value() && *parsed->next_update <= now) {
    LogWarning("ocsp: skipping %s: expired (nextUpdate %s); re-sign it", response.name,
               absl::FormatTime(*parsed->next_update, absl::UTCTimeZone()));
    ++stats_.skipped_expired;
    return;
  }
  OcspResponseEntry entry;
  entry.name = std::move(response.name);
  entry.der = std::move(response.der);
  entry.this_update = parsed->this_update;
  entry.next_update = parsed->next_update;
  entry.etag = Sha1Hex(entry.der);
  entry.head_prefix =
      BuildPresignedHeadPrefix(entry.der.size(), entry.this_update, entry.next_update, entry.etag);
  entry.not_modified_prefix = BuildNotModifiedHeadPrefix(entry.next_update, entry.etag);
  max_presigned_bytes_ =
      std::max(max_presigned_bytes_, entry.head_prefix.size() + entry.der.size());
  const size_t entry_index = entries_.size();
  for (std::string& key : parsed->keys) {
    auto [it, inserted] = index_.try_emplace(std::move(key), entry_index);
    if (inserted) {
      ++stats_.cert_ids;
      continue;
    }
    ++stats_.duplicate_cert_ids;
    const OcspResponseEntry& other = entries_[it->second];
    // A CertID in the same file twice keeps pointing at this file.
    if (it->second == entry_index) continue;
    const bool newer = entry.this_update > other.this_update;
    LogWarning("ocsp: %s and %s both answer one CertID; serving %s (the later thisUpdate)",
               other.name, entry.name, newer ? entry.name : other.name);
    if (newer) it->second = entry_index;
  }
  entries_.push_back(std::move(entry));
  ++stats_.loaded;
}

std::shared_ptr<const OcspSnapshot> OcspSnapshot::FromResponses(
    std::vector<NamedResponse> responses, absl::Time now, const OcspLoadOptions& options) {
  std::shared_ptr<OcspSnapshot> snapshot(new OcspSnapshot());
  for (NamedResponse& response : responses) snapshot->Add(std::move(response), now, options);
  return snapshot;
}

absl::StatusOr<std::shared_ptr<const OcspSnapshot>> OcspSnapshot::LoadDirectory(
    const std::string& directory, absl::Time now, const OcspLoadOptions& options) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::directory_iterator it(directory, error);
  if (error) {
    return absl::NotFoundError(
        absl::StrCat("cannot read OCSP responses directory '", directory, "': ", error.message()));
  }
  std::vector<fs::path> paths;
  size_t unusable_entries = 0;  // not regular files, nor directories
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) break;
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    // Subdirectories are not responses (README: ignored). A FIFO, a device or a dangling
    // symlink was meant to be one: skipped as an unusable file is, with a warning naming it,
    // and told by stat alone (a FIFO is never opened).
    const EntryType type = StatEntry(it->path().string());
    if (type.kind == EntryKind::kRegular) {
      paths.push_back(it->path());
    } else if (type.kind == EntryKind::kOther) {
      LogWarning("ocsp: skipping %s, which %s", it->path().string(), type.what);
      ++unusable_entries;
    }
  }
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("error listing '", directory, "': ", error.message()));
  }
  std::sort(paths.begin(), paths.end());  // deterministic order for duplicate resolution

  std::shared_ptr<OcspSnapshot> snapshot(new OcspSnapshot());
  snapshot->stats_.skipped_invalid = unusable_entries;
  for (const fs::path& path : paths) {
    std::error_code size_error;
    const uintmax_t size = fs::file_size(path, size_error);
    NamedResponse response{path.filename().string(), {}};
    if (size_error || size > options.max_response_bytes) {
      LogWarning("ocsp: skipping %s: %s", path.string(),
                 size_error ? size_error.message() : "larger than --ocsp-max-response-bytes");
      ++snapshot->stats_.skipped_invalid;
      continue;
    }
    // The data-file checks again at open (common/data_file.h): the file listed may have been
    // replaced by a FIFO or a device since.
    absl::StatusOr<std::string> der = ReadDataFile(path.string(), "OCSP response");
    if (!der.ok()) {
      LogWarning("ocsp: skipping: %s", der.status().message());
      ++snapshot->stats_.skipped_invalid;
      continue;
    }
    response.der = *std::move(der);
    snapshot->Add(std::move(response), now, options);
  }
  const OcspLoadStats& stats = snapshot->stats_;
  if (stats.loaded + stats.skipped_expired == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no OCSP response in '", directory, "' (", paths.size(),
        " files, none a successful DER OCSPResponse): is --ocsp-responses the right directory?"));
  }
  if (stats.loaded == 0) {
    LogError(
        "ocsp: every response in %s has expired: every request will get 'unauthorized' "
        "until they are re-signed",
        directory);
  }
  LogInfo("ocsp: %d responses (%d CertIDs) from %s; skipped %d expired, %d unusable", stats.loaded,
          stats.cert_ids, directory, stats.skipped_expired, stats.skipped_invalid);
  return std::shared_ptr<const OcspSnapshot>(std::move(snapshot));
}

}  // namespace onepass::ocsp
