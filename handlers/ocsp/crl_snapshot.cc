#include "handlers/ocsp/crl_snapshot.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/data_file.h"
#include "handlers/http/http_date.h"
#include "handlers/ocsp/directory_entry.h"

namespace onepass::ocsp {
namespace {

struct CrlFree {
  void operator()(X509_CRL* crl) const { X509_CRL_free(crl); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
using CrlPtr = std::unique_ptr<X509_CRL, CrlFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;

absl::StatusOr<absl::Time> ToTime(const ASN1_TIME* time) {
  struct tm tm = {};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) {
    return absl::InvalidArgumentError("unreadable time");
  }
  return absl::FromCivil(absl::CivilSecond(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                                           tm.tm_min, tm.tm_sec),
                         absl::UTCTimeZone());
}

std::string Sha256Hex(absl::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) absl::StrAppendFormat(&hex, "%02x", digest[i]);
  return hex;
}

absl::StatusOr<std::vector<X509Ptr>> LoadIssuers(const std::string& path) {
  std::vector<X509Ptr> issuers;
  FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return absl::NotFoundError(absl::StrCat("cannot read --crl-issuers ", path));
  while (X509* cert = PEM_read_X509(file, nullptr, nullptr, nullptr)) issuers.emplace_back(cert);
  std::fclose(file);
  if (issuers.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--crl-issuers ", path, ": no PEM certificate"));
  }
  return issuers;
}

// RFC 5280 §6.3.3 (b, f, g): the issuer is one of ours and the signature is its.
absl::Status CheckIssuer(X509_CRL* crl, const std::vector<X509Ptr>& issuers) {
  for (const X509Ptr& cert : issuers) {
    if (X509_NAME_cmp(X509_CRL_get_issuer(crl), X509_get_subject_name(cert.get())) != 0) {
      continue;
    }
    EVP_PKEY* key = X509_get0_pubkey(cert.get());
    if (key != nullptr && X509_CRL_verify(crl, key) == 1) return absl::OkStatus();
    return absl::InvalidArgumentError("signature does not verify with its issuer's key");
  }
  return absl::InvalidArgumentError("issuer is not in --crl-issuers");
}

absl::StatusOr<std::unique_ptr<CrlEntry>> LoadOne(const std::filesystem::path& path,
                                                  const CrlLoadConfig& config, absl::Time now,
                                                  const std::vector<X509Ptr>& issuers,
                                                  std::vector<std::string>* warnings) {
  auto entry = std::make_unique<CrlEntry>();
  entry->name = path.filename().string();
  std::error_code size_error;
  const uintmax_t size = std::filesystem::file_size(path, size_error);
  if (size_error || size > config.max_bytes) {
    return absl::InvalidArgumentError(
        size_error ? size_error.message()
                   : absl::StrCat(size, " bytes, larger than --crl-max-bytes=", config.max_bytes));
  }
  // Through the data-file checks (a FIFO or a device in the directory cannot hang the load).
  absl::StatusOr<std::string> der = ReadDataFile(path.string(), "CRL");
  if (!der.ok()) return der.status();
  if (der->size() > config.max_bytes) {  // grew since it was sized
    return absl::InvalidArgumentError(
        absl::StrCat(der->size(), " bytes, larger than --crl-max-bytes=", config.max_bytes));
  }
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der->data());
  CrlPtr crl(d2i_X509_CRL(nullptr, &p, static_cast<long>(der->size())));
  if (crl == nullptr || p != reinterpret_cast<const unsigned char*>(der->data()) + der->size()) {
    return absl::InvalidArgumentError("not one DER CertificateList (RFC 5280 §5.1)");
  }
  absl::StatusOr<absl::Time> this_update = ToTime(X509_CRL_get0_lastUpdate(crl.get()));
  if (!this_update.ok()) return absl::InvalidArgumentError("unreadable thisUpdate");
  // RFC 5280 §5.1.2.5: conforming CRL issuers include nextUpdate; we require it (it is the
  // Expires of the answer and the date past which the CRL must not be served).
  if (X509_CRL_get0_nextUpdate(crl.get()) == nullptr) {
    return absl::InvalidArgumentError("no nextUpdate");
  }
  absl::StatusOr<absl::Time> next_update = ToTime(X509_CRL_get0_nextUpdate(crl.get()));
  if (!next_update.ok()) return absl::InvalidArgumentError("unreadable nextUpdate");
  if (*next_update <= now) {
    return absl::InvalidArgumentError(
        absl::StrCat("expired: nextUpdate ",
                     absl::FormatTime(absl::RFC3339_sec, *next_update, absl::UTCTimeZone())));
  }
  if (!issuers.empty()) {
    if (absl::Status s = CheckIssuer(crl.get(), issuers); !s.ok()) return s;
  }
  if (*next_update - now < config.warn_within) {
    warnings->push_back(absl::StrCat(
        path.string(), ": nextUpdate ",
        absl::FormatTime(absl::RFC3339_sec, *next_update, absl::UTCTimeZone()), " is within ",
        absl::FormatDuration(config.warn_within), ": publish a new CRL"));
  }
  absl::StatusOr<std::unique_ptr<const SealedBytes>> sealed = SealedBytes::Make("crl", *der);
  if (!sealed.ok()) return sealed.status();
  entry->sealed = *std::move(sealed);
  entry->der = entry->sealed->view();
  entry->this_update = *this_update;
  entry->next_update = *next_update;
  entry->etag = Sha256Hex(entry->der);
  entry->last_modified = http::HttpDate(*this_update);
  entry->expires = http::HttpDate(*next_update);
  return entry;
}

}  // namespace

const CrlEntry* CrlSnapshot::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

absl::StatusOr<std::shared_ptr<const CrlSnapshot>> LoadCrlDir(const CrlLoadConfig& config,
                                                              absl::Time now,
                                                              std::vector<std::string>* warnings) {
  namespace fs = std::filesystem;
  std::vector<X509Ptr> issuers;
  if (!config.issuers_file.empty()) {
    absl::StatusOr<std::vector<X509Ptr>> loaded = LoadIssuers(config.issuers_file);
    if (!loaded.ok()) return loaded.status();
    issuers = std::move(*loaded);
  }
  std::error_code error;
  std::vector<fs::path> paths;
  for (fs::directory_iterator it(config.dir, error); !error && it != fs::directory_iterator();
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!absl::EndsWith(name, ".crl") || name[0] == '.') continue;
    // A NAME.crl that is a FIFO, a device, a directory or a dangling symlink fails the load
    // naming it, as a zone file does: passed over, it would answer 404 after a reload that
    // reported success. Told by stat alone: a FIFO is never opened.
    if (absl::Status regular = CheckRegularFile(it->path().string()); !regular.ok()) {
      return regular;
    }
    paths.push_back(it->path());
  }
  if (error) {
    return absl::NotFoundError(
        absl::StrCat("cannot read --crl-dir '", config.dir, "': ", error.message()));
  }
  std::sort(paths.begin(), paths.end());
  auto snapshot = std::shared_ptr<CrlSnapshot>(new CrlSnapshot());
  for (const fs::path& path : paths) {
    absl::StatusOr<std::unique_ptr<CrlEntry>> entry = LoadOne(path, config, now, issuers, warnings);
    if (!entry.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path.string(), ": ", entry.status().message()));
    }
    snapshot->by_name_.emplace((*entry)->name, entry->get());
    snapshot->entries_.push_back(*std::move(entry));
  }
  return std::shared_ptr<const CrlSnapshot>(std::move(snapshot));
}

}  // namespace onepass::ocsp
