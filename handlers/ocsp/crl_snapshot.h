// The CRLs served beside the OCSP responses (--crl-dir): each DER file DIR/NAME.crl, parsed
// and checked at load, immutable once built and shared by the workers. A reload (SIGHUP)
// builds a new snapshot and the server swaps the factory; a load that fails (a file that does
// not parse, is expired, fails the issuer check, or a NAME.crl that is no regular file: a FIFO,
// a device, a directory) fails the reload, so the old data keeps serving (docs/design.md
// "Reloads and restarts").
//
// The CA/Browser Forum made CRLs mandatory and OCSP optional (ballot SC-063): a revocation
// endpoint serves both, often on one host.
#ifndef ONEPASS_HANDLERS_OCSP_CRL_SNAPSHOT_H_
#define ONEPASS_HANDLERS_OCSP_CRL_SNAPSHOT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/sealed_bytes.h"

namespace onepass::ocsp {

struct CrlEntry {
  std::string name;  // "NAME.crl", the file's name and the URL's last segment
  // The file's bytes, in sealed memory (common/sealed_bytes.h): a large CRL is sent from there
  // by sendfile, never copied per request (crl_responder.h).
  std::unique_ptr<const SealedBytes> sealed;
  absl::string_view der;  // sealed->view()
  absl::Time this_update;
  absl::Time next_update;
  std::string etag;           // hex SHA-256 of `der` (strong: RFC 9110 §8.8.3)
  std::string last_modified;  // thisUpdate as an HTTP date (RFC 9110 §8.8.2)
  std::string expires;        // nextUpdate as an HTTP date
};

struct CrlLoadConfig {
  std::string dir;
  // A nextUpdate closer than this to the load time is logged as a warning (the CA must
  // publish a new CRL before it); a nextUpdate already past fails the load.
  absl::Duration warn_within = absl::Hours(24 * 7);
  // PEM file of the CA certificates whose CRLs these are; when set, each CRL's issuer must be
  // one of them and its signature must verify with that certificate's key.
  std::string issuers_file;
  // CRLs above this many bytes fail the load (--crl-max-bytes): a bound on the memory a
  // directory of runaway files can take. Nothing else depends on it: large CRLs are not copied
  // into output buffers (crl_responder.h), so a CRL that grows needs no restart.
  size_t max_bytes = size_t{64} << 20;
};

class CrlSnapshot {
 public:
  // The CRL called `name` ("NAME.crl"), or null.
  const CrlEntry* Find(absl::string_view name) const;
  size_t size() const { return entries_.size(); }
  const std::vector<std::unique_ptr<CrlEntry>>& entries() const { return entries_; }

 private:
  friend absl::StatusOr<std::shared_ptr<const CrlSnapshot>> LoadCrlDir(
      const CrlLoadConfig& config, absl::Time now, std::vector<std::string>* warnings);
  std::vector<std::unique_ptr<CrlEntry>> entries_;
  absl::flat_hash_map<absl::string_view, const CrlEntry*> by_name_;
};

// Loads every DIR/*.crl; any file that fails a check fails the load with "FILE: what", and an
// entry that is not a regular file (or a symlink to one) with "FILE is a FIFO, not a regular
// file" (directory_entry.h: it is never opened).
// Warnings (nextUpdate soon) are appended to `*warnings`, one line each.
absl::StatusOr<std::shared_ptr<const CrlSnapshot>> LoadCrlDir(const CrlLoadConfig& config,
                                                              absl::Time now,
                                                              std::vector<std::string>* warnings);

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_CRL_SNAPSHOT_H_
