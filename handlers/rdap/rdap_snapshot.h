// The registry database as RDAP answers (RFC 9083), every answer's JSON rendered once at load.
//
// Built from the same file as the Whois snapshot (whois_db.h), as a WhoisRecordSink. Immutable
// once built and shared by all workers (std::shared_ptr<const RdapSnapshot>); a reload builds
// a new one.
//
// Memory: a domain answer is assembled from the pieces of rdap_render.h so that what many
// domains share is stored once: per domain the snapshot keeps only its own members (~500
// bytes: handle, names, links, events), a 56-byte entry and its index slots; the status list,
// the registrar entity, the contact entities and the name server block are interned, the top
// and bottom (conformance, notices) stored once. Name servers, entities and help are stored
// whole. A lookup is one hash probe and up to nine memcpys; each answer's strong ETag is
// computed at load from its pieces.
#ifndef ONEPASS_HANDLERS_RDAP_RDAP_SNAPSHOT_H_
#define ONEPASS_HANDLERS_RDAP_RDAP_SNAPSHOT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "handlers/rdap/rdap_render.h"
#include "handlers/whois/whois_snapshot.h"

namespace onepass::rdap {

// An answer's body as views into the snapshot, in order, and its ETag (16 hex digits).
struct RdapAnswer : whois::PieceList<9> {
  uint64_t etag = 0;
};

struct RdapSnapshotStats : whois::RegistryStats {
  size_t max_domain_bytes = 0;  // the largest domain answer, whole
  // gTLD RDAP Response Profile gaps in the data (reported by --check, not fatal):
  size_t registrars_without_abuse = 0;     // §2.4.5: abuse email and phone
  size_t registrars_without_rdap_url = 0;  // §2.2: no "related" link for their domains
};

class RdapSnapshot {
 public:
  RdapSnapshot(const RdapSnapshot&) = delete;
  RdapSnapshot& operator=(const RdapSnapshot&) = delete;

  // Lookups by normalized key: an upper-case A-label name, an upper-case handle or an IANA ID.
  bool FindDomain(absl::string_view name, RdapAnswer* answer) const;
  bool FindNameserver(absl::string_view name, RdapAnswer* answer) const;
  bool FindEntity(absl::string_view handle, RdapAnswer* answer) const;
  void Help(RdapAnswer* answer) const;

  // Domain search (RFC 9082 §3.2.1): the domains whose upper-case name starts with `prefix`
  // (equals it when `exact`), in name order, at most `max` of them into `*ids`; true when
  // there were more. Visits at most max + 1 names after one binary search: the cost is
  // bounded by the result cap whatever the pattern.
  bool SearchDomains(absl::string_view prefix, bool exact, size_t max,
                     std::vector<uint32_t>* ids) const;
  // A domain as a search result embeds it: "{", its pieces but top and bottom, "}".
  void SearchResult(uint32_t id, RdapAnswer* answer) const;
  // The top and the bottom of a search answer; the bottom with the truncation notice or not.
  absl::string_view top() const { return top_; }
  absl::string_view search_bottom(bool truncated) const {
    return truncated ? truncated_bottom_ : bottom_;
  }

  absl::string_view last_update() const { return last_update_; }
  const RdapSnapshotStats& stats() const { return stats_; }

 private:
  friend class RdapSnapshotBuilder;

  struct DomainEntry {
    absl::string_view key;  // upper-case name
    const char* own;
    uint64_t own_hash;  // Fnv1a of the own piece
    uint32_t own_bytes;
    uint32_t status;  // numbers in text_
    uint32_t registrar;
    uint32_t contacts;
    uint32_t redacted;
    uint32_t hosts;
  };
  struct Whole {
    absl::string_view body;
    uint64_t etag;
  };

  RdapSnapshot() = default;
  uint64_t DomainEtag(const DomainEntry& entry) const;

  whois::InternedText text_;            // every answer's text; the shared pieces numbered
  std::vector<uint64_t> piece_hashes_;  // Fnv1a of each numbered piece
  std::vector<DomainEntry> domains_;
  absl::flat_hash_map<absl::string_view, uint32_t> domain_index_;
  std::vector<uint32_t> domains_by_name_;  // sorted by key, for search
  absl::flat_hash_map<absl::string_view, Whole> nameservers_;
  absl::flat_hash_map<absl::string_view, Whole> entities_;  // contacts and registrars
  Whole help_{};
  absl::string_view top_;
  absl::string_view events_end_;  // the last event of every domain, closing "events"
  uint64_t shared_hash_ = 0;      // of top_, events_end_ and bottom_
  absl::string_view bottom_;
  absl::string_view truncated_bottom_;
  absl::string_view last_update_;
  RdapSnapshotStats stats_;
};

// FNV-1a (64-bit) of `text`, and the mixing of piece hashes into an answer's ETag.
uint64_t Fnv1a(absl::string_view text, uint64_t seed = 0xcbf29ce484222325ULL);

class RdapSnapshotBuilder final : public whois::WhoisRecordSink {
 public:
  // `base_url` ends in '/' (rdap_render.h).
  explicit RdapSnapshotBuilder(std::string base_url);

  // Interface
  absl::Status AddRegistrar(const whois::RegistrarRecord& registrar) override;
  absl::Status AddContact(const whois::ContactRecord& contact) override;
  absl::Status AddNameserver(const whois::NameserverRecord& nameserver) override;
  absl::Status AddDomain(const whois::DomainRecord& domain) override;
  void SetLastUpdate(absl::string_view time) override { config_.last_update = std::string(time); }
  bool has_last_update() const override { return !config_.last_update.empty(); }
  void AddFooterLine(absl::string_view line) override { config_.terms.emplace_back(line); }
  void ReserveDomains(size_t count) override;

  // Finishes the snapshot (requires the last update set); the builder is spent.
  std::shared_ptr<const RdapSnapshot> Build();

  // For the test that compares precompiled answers with RenderDomain.
  const RdapRenderConfig& config() const { return config_; }

 private:
  uint32_t Intern(absl::string_view text);
  void StoreWhole(absl::string_view key, absl::string_view text,
                  absl::flat_hash_map<absl::string_view, RdapSnapshot::Whole>& map);

  std::unique_ptr<RdapSnapshot> snapshot_;
  RdapRenderConfig config_;
  // Load-time only. The last update and the terms of use may come after the objects in the
  // file (or from the file's time, at the end), so what shows them is rendered in Build:
  // name servers and entities whole (their records are kept in the arena until then), and
  // the pieces every domain shares. A domain's own pieces do not show them.
  std::vector<whois::RegistrarRecord> registrars_;
  std::vector<uint32_t> registrar_piece_;  // per registrar: its interned entity piece
  absl::flat_hash_map<uint32_t, uint32_t> registrar_by_iana_id_;
  std::vector<whois::ContactRecord> contacts_;
  absl::flat_hash_map<std::string, uint32_t> contact_by_handle_;
  struct StoredNameserver {
    absl::string_view name;
    uint32_t registrar_iana_id;
    std::vector<std::string> addresses;  // RFC 5952 text
  };
  std::vector<StoredNameserver> nameservers_;
  absl::flat_hash_map<absl::string_view, uint32_t> nameserver_by_name_;
  std::string scratch_;
};

}  // namespace onepass::rdap

#endif  // ONEPASS_HANDLERS_RDAP_RDAP_SNAPSHOT_H_
