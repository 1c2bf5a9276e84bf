// The Whois database in memory: every reply rendered once at load time, indexed for lookup.
//
// A WhoisSnapshot is immutable once built and shared by all workers through
// std::shared_ptr<const WhoisSnapshot>; a reload builds a new one and swaps the pointer.
//
// Memory: a domain reply is assembled from pieces so that what many domains share is stored
// once. Per domain the snapshot keeps only its own text (the "Domain Name" and "Registry Domain
// ID" lines and the three date lines, ~200 bytes), a 32-byte entry and a 4-byte index slot;
// the registrar's lines, the status lines, the contact blocks and the name server block are
// interned (stored once per distinct text), and the ">>> Last update" line and terms-of-use
// footer once for the whole snapshot. Serving is one hash lookup and up to eight memcpys.
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_SNAPSHOT_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_SNAPSHOT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "handlers/whois/interned_text.h"
#include "handlers/whois/whois_records.h"

namespace onepass::whois {

// A reply's body as views into the snapshot, in order (the tail is added by the caller).
using ReplyPieces = PieceList<8>;
using WhoisSnapshotStats = RegistryStats;

class WhoisSnapshot {
 public:
  // The index functors point at domains_: a snapshot never moves or copies.
  WhoisSnapshot(const WhoisSnapshot&) = delete;
  WhoisSnapshot& operator=(const WhoisSnapshot&) = delete;

  // Lookups by normalized key (see whois_query.h): upper-case name or handle. On a match,
  // adds the reply body's pieces to `*reply` and returns true.
  bool FindDomain(absl::string_view name, ReplyPieces* reply) const;
  bool FindNameserver(absl::string_view name, ReplyPieces* reply) const;
  // By name (blanks folded, ASCII upper-case) or, for a key of digits, by IANA ID.
  bool FindRegistrar(absl::string_view key, ReplyPieces* reply) const;
  bool FindContact(absl::string_view handle, ReplyPieces* reply) const;

  // The end of every reply: the "Last update" line and the terms-of-use footer.
  absl::string_view tail() const { return tail_; }
  absl::string_view last_update() const { return last_update_; }
  const WhoisSnapshotStats& stats() const { return stats_; }

 private:
  friend class WhoisSnapshotBuilder;

  struct DomainEntry {
    const char* text;    // head then dates, contiguous in arena_
    uint32_t registrar;  // index in registrars_
    uint32_t statuses;   // numbers in text_
    uint32_t contacts;
    uint32_t nameservers;
    uint16_t head_bytes;
    uint16_t dates_bytes;
    uint8_t name_bytes;  // the name is at text + kDomainNameLinePrefix
  };
  struct RegistrarEntry {
    absl::string_view top;     // WHOIS Server, URL lines of a domain reply
    absl::string_view middle;  // Registrar .. Abuse Contact Phone lines of a domain reply
    absl::string_view reply;   // the reply to "registrar NAME"
  };

  // The domain index holds entry numbers only (4 bytes a slot); hashing and comparing look
  // the name up in the entry, and a lookup by name uses the same functors (is_transparent).
  struct DomainKeyHash {
    using is_transparent = void;
    const std::vector<DomainEntry>* entries;
    size_t operator()(uint32_t index) const;
    size_t operator()(absl::string_view name) const;
  };
  struct DomainKeyEq {
    using is_transparent = void;
    const std::vector<DomainEntry>* entries;
    bool operator()(uint32_t a, uint32_t b) const {
      return DomainName((*entries)[a]) == DomainName((*entries)[b]);
    }
    bool operator()(uint32_t a, absl::string_view b) const;
    bool operator()(absl::string_view a, uint32_t b) const { return (*this)(b, a); }
  };
  static absl::string_view DomainName(const DomainEntry& entry) {
    return absl::string_view(entry.text + kDomainNameLinePrefix, entry.name_bytes);
  }

  WhoisSnapshot();

  InternedText text_;  // every reply's text; the shared blocks numbered
  std::vector<DomainEntry> domains_;
  absl::flat_hash_set<uint32_t, DomainKeyHash, DomainKeyEq> domain_index_;
  std::vector<RegistrarEntry> registrars_;
  absl::flat_hash_map<absl::string_view, uint32_t> registrar_by_name_;
  absl::flat_hash_map<uint32_t, uint32_t> registrar_by_iana_id_;
  absl::flat_hash_map<absl::string_view, absl::string_view> nameservers_;
  absl::flat_hash_map<absl::string_view, absl::string_view> contacts_;
  absl::string_view tail_;
  absl::string_view last_update_;
  WhoisSnapshotStats stats_;
};

// Where WhoisDbParser (whois_db.h) puts the records it reads, in file order: the Whois
// snapshot builder below, or another protocol's (RDAP's, handlers/rdap/) over the same file.
// Records are views into the current line: a sink copies what it keeps. Errors say what is
// wrong without the file position; the parser adds it.
class WhoisRecordSink {
 public:
  virtual ~WhoisRecordSink() = default;
  virtual absl::Status AddRegistrar(const RegistrarRecord& registrar) = 0;
  virtual absl::Status AddContact(const ContactRecord& contact) = 0;
  virtual absl::Status AddNameserver(const NameserverRecord& nameserver) = 0;
  virtual absl::Status AddDomain(const DomainRecord& domain) = 0;
  // The time of the data's last update (RFC 3339 UTC).
  virtual void SetLastUpdate(absl::string_view time) = 0;
  virtual bool has_last_update() const = 0;
  // One line of the terms of use replacing the default footer.
  virtual void AddFooterLine(absl::string_view line) = 0;
  // A hint: about how many domains the data holds.
  virtual void ReserveDomains(size_t count) {}
};

// Builds a snapshot from records in file order. Registrars and contacts must be added before
// the domains and name servers that name them (one pass, and an error names the line).
// Errors say what is wrong without the file position; the caller adds it.
class WhoisSnapshotBuilder final : public WhoisRecordSink {
 public:
  WhoisSnapshotBuilder();
  WhoisSnapshotBuilder(const WhoisSnapshotBuilder&) = delete;
  WhoisSnapshotBuilder& operator=(const WhoisSnapshotBuilder&) = delete;

  // Interface
  absl::Status AddRegistrar(const RegistrarRecord& registrar) override;
  absl::Status AddContact(const ContactRecord& contact) override;
  absl::Status AddNameserver(const NameserverRecord& nameserver) override;
  absl::Status AddDomain(const DomainRecord& domain) override;
  // Interface: the time shown as "Last update of whois database" (RFC 3339 UTC).
  void SetLastUpdate(absl::string_view time) override {
    last_update_.assign(time.data(), time.size());
  }
  bool has_last_update() const override { return !last_update_.empty(); }
  // Interface: replaces the default terms-of-use footer, one line per call.
  void AddFooterLine(absl::string_view line) override { footer_.emplace_back(line); }
  // Interface: sizes the domain index for about `count` domains, so that it does not rehash
  // (each rehash rereads every entry) while a large file loads.
  void ReserveDomains(size_t count) override { snapshot_->domain_index_.reserve(count); }

  // Finishes the snapshot; the builder is spent. Requires SetLastUpdate() to have been called.
  std::shared_ptr<const WhoisSnapshot> Build();

 private:
  uint32_t InternContacts(const DomainRecord& domain);

  std::unique_ptr<WhoisSnapshot> snapshot_;
  // Load-time only: per-contact data for domain blocks.
  // Status and name server blocks by the fields they were rendered from ("s" + statuses,
  // DNSSEC + hosts), to skip rendering what was seen before.
  absl::flat_hash_map<std::string, uint32_t> blocks_by_fields_;
  std::string key_;
  // Contacts and registrars by their fields (views into the snapshot's arena), for the
  // domain and name server replies that name them.
  absl::flat_hash_map<absl::string_view, uint32_t> contact_index_;  // handle -> contacts_
  std::vector<ContactRecord> contacts_;
  std::vector<RegistrarRecord> registrars_;
  absl::flat_hash_map<std::array<uint32_t, 3>, uint32_t> contact_blocks_;
  std::string scratch_;
  std::string last_update_;
  std::vector<std::string> footer_;
};

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_SNAPSHOT_H_
