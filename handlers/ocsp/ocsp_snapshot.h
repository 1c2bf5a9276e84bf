// The responder's data: pre-signed OCSP responses indexed by CertID, immutable once built.
//
// High-rate OCSP responders do not sign per request: an offline signer produces one response per
// certificate ahead of time (RFC 5019 §2.2.1; `openssl ocsp -respout` writes the same) and the
// responder looks them up. A snapshot is built at startup with OpenSSL (completeness matters
// there, cost does not), then shared read-only by every worker through a
// std::shared_ptr<const OcspSnapshot>. Reloading means building a new snapshot and publishing the
// new pointer; nothing in a snapshot ever changes.
//
// Expiry: a response whose nextUpdate is already past when loading is skipped with a warning. A
// response that expires while being served is not served either: the handler answers
// `unauthorized` for it (RFC 5019 §2.2.3: the responder has no valid status to give), because a
// client rejects a stale response anyway (RFC 6960 §3.2 item 6: nextUpdate must be "greater than
// the current time"), and an operator watching for unauthorized answers learns that signing lags.
#ifndef ONEPASS_HANDLERS_OCSP_OCSP_SNAPSHOT_H_
#define ONEPASS_HANDLERS_OCSP_OCSP_SNAPSHOT_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "handlers/ocsp/cert_id.h"

namespace onepass::ocsp {

// One pre-signed response, ready to send.
struct OcspResponseEntry {
  std::string name;  // where it came from (file name), for logs
  std::string der;   // the OCSPResponse, sent as the body
  // Over all its SingleResponses: the latest thisUpdate and the earliest nextUpdate (none if no
  // SingleResponse gives one, RFC 6960 §4.2.2.1).
  absl::Time this_update;
  absl::optional<absl::Time> next_update;
  std::string etag;                 // hex SHA-1 of `der`
  std::string head_prefix;          // BuildPresignedHeadPrefix(): the head up to Date
  std::string not_modified_prefix;  // BuildNotModifiedHeadPrefix(): a 304's head up to Date

  // True if it must not be served at `now` (RFC 5019 §2.2.4 / RFC 6960 §4.2.2.1).
  bool ExpiredAt(absl::Time now) const { return next_update.has_value() && *next_update <= now; }
};

struct OcspLoadOptions {
  // Responses (DER) larger than this are skipped: the output buffer is sized from it.
  size_t max_response_bytes = 16384;
};

// What loading did, for logs and tests.
struct OcspLoadStats {
  size_t loaded = 0;    // responses indexed
  size_t cert_ids = 0;  // index entries
  size_t skipped_expired = 0;
  size_t skipped_invalid = 0;     // not a successful basic OCSPResponse, too large, or no file
  size_t duplicate_cert_ids = 0;  // CertIDs in several files: the latest thisUpdate wins
};

class OcspSnapshot {
 public:
  struct NamedResponse {
    std::string name;
    std::string der;
  };

  // Loads every regular file of `directory` (not recursing, skipping names that start with '.')
  // as one DER OCSPResponse. Files that are not usable are skipped with a warning, and so are
  // entries that are not regular files (a FIFO, a device, a dangling symlink: never opened);
  // subdirectories are ignored. Fails when the directory cannot be read or holds no OCSP
  // response at all (a wrong path, most likely).
  static absl::StatusOr<std::shared_ptr<const OcspSnapshot>> LoadDirectory(
      const std::string& directory, absl::Time now, const OcspLoadOptions& options = {});

  // Builds from responses in memory (tests, fuzzers). Never fails on the responses themselves.
  static std::shared_ptr<const OcspSnapshot> FromResponses(std::vector<NamedResponse> responses,
                                                           absl::Time now,
                                                           const OcspLoadOptions& options = {});

  // The response indexed under `key` (EncodeCertIdKey), or nullptr. Thread-safe, no allocation.
  const OcspResponseEntry* Find(absl::string_view key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &entries_[it->second];
  }

  const OcspLoadStats& stats() const { return stats_; }
  const std::vector<OcspResponseEntry>& entries() const { return entries_; }
  // The largest entry's head prefix + body: what the output buffer must hold (plus the Date
  // and Cache-Control the writer adds).
  size_t max_presigned_bytes() const { return max_presigned_bytes_; }

 private:
  OcspSnapshot() = default;
  void Add(NamedResponse response, absl::Time now, const OcspLoadOptions& options);

  std::vector<OcspResponseEntry> entries_;
  absl::flat_hash_map<std::string, size_t> index_;  // EncodeCertIdKey() -> entries_ index
  OcspLoadStats stats_;
  size_t max_presigned_bytes_ = 0;
};

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_OCSP_SNAPSHOT_H_
