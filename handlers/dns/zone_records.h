// The pieces a zone is made of: records, RRsets, owner-name nodes, and the arena that holds
// their bytes. Built by the loader (zone_loader.h), read by everything that answers; never
// changed once the Zone (zone_snapshot.h) that owns them is built.
#ifndef ONEPASS_HANDLERS_DNS_ZONE_RECORDS_H_
#define ONEPASS_HANDLERS_DNS_ZONE_RECORDS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"

namespace onepass::dns {

// One resource record as the master-file reader produces it (zone_text.h), owning its bytes;
// the loader copies it into the zone's compact Record.
struct ParsedRecord {
  uint32_t ttl = 0;
  // Uncompressed RDATA.
  std::string rdata;
  // Offsets in `rdata` of names that may be compressed in responses: only the RFC 1035 types
  // (RFC 3597 §4: NS, CNAME, SOA, PTR, MX, ...); never SRV (RFC 2782) or newer types.
  uint16_t compressible_offsets[2] = {0, 0};
  uint8_t compressible_count = 0;
  // Canonical name this record points at, for CNAME chasing and additional-section
  // processing (NS, CNAME, MX exchange, SRV target); empty for other types.
  std::string target;
};

// One resource record's data in wire form, ready to copy into a response. The bytes live in
// the zone's arena (NameArena below), shared between records with the same RDATA where the
// loader interns them; valid as long as the Zone. 48 bytes, no heap block of its own.
struct Record {
  // Uncompressed RDATA.
  absl::string_view rdata;
  // As ParsedRecord::target; a view into `rdata` itself when the name there is lowercase.
  absl::string_view target;
  uint32_t ttl = 0;
  // As ParsedRecord.
  uint16_t compressible_offsets[2] = {0, 0};
  uint8_t compressible_count = 0;
};

// All records of one type at one owner name (RFC 2181 §5).
struct RRset {
  uint16_t type = 0;
  // Identical RRsets of several owners (a registrar's NS set at thousands of delegations) are
  // one RRset (rrset_store.h); a shared one is never changed and never has signatures.
  bool shared = false;
  // Most RRsets of a large zone hold one record: it lives inside the RRset (no heap block of
  // its own: 1.4 M fewer allocations for a 1M-name zone).
  absl::InlinedVector<Record, 1> records;
  // The RRSIGs at the same owner whose Type Covered is `type` (RFC 4034 §3.1.1), sent after
  // the records to a DO query (RFC 4035 §3.1.1). They point into the node's RRSIG RRset (kept
  // for queries of type RRSIG), or for the SOA into copies the Zone owns (their TTL is the
  // SOA's); valid as long as the Zone.
  std::vector<const Record*> signatures;
};

// One owner name in a zone. Empty non-terminals exist as nodes without RRsets (RFC 4592 §2.2.2)
// so that they block wildcards and answer NODATA.
struct Node {
  // Where this name is in the zone's NSEC3 chain (denial_index.h): the NSEC3 whose hash
  // matches the name (RFC 5155 §7.2.3), or else the one covering it. -1 when the zone has no
  // NSEC3 chain, or for names the chain does not hash (below a zone cut).
  int32_t nsec3 = -1;
  bool nsec3_exact = false;
  // The NSEC3 covering the hash of "*." + this name (RFC 5155 §7.2.1 wildcard proof), or -1.
  int32_t nsec3_wildcard = -1;

  // In the order each type first appears in the zone file (NSD keeps the same order; it
  // decides which RRset answers QTYPE=ANY, RFC 8482 §4.1). The RRsets live in the zone's
  // RRsetStore (possibly shared with other nodes); a delegation's NS and DS fit inline.
  absl::InlinedVector<RRset*, 2> rrsets;

  const RRset* Find(uint16_t type) const {
    for (const RRset* rrset : rrsets) {
      if (rrset->type == type) return rrset;
    }
    return nullptr;
  }
};

// Owner names of a zone, stored back to back in large blocks: a node map keyed by views into
// it needs no heap block per name (a 1M-name zone: 32 MB of 32-byte blocks, and 16 bytes less
// per map slot than a std::string key). Views stay valid as long as the arena (blocks never
// move).
class NameArena {
 public:
  NameArena() = default;
  NameArena(NameArena&&) = default;
  NameArena& operator=(NameArena&&) = default;

  // A stable copy of `name` (also used for RDATA bytes).
  absl::string_view Intern(absl::string_view name);
  // Bytes taken from the allocator [bytes], for the load report.
  size_t allocated() const { return allocated_; }

 private:
  // The first blocks are 1 MiB; from the fifth on (a zone of about 100k names and more) they
  // are huge pages (common/huge_pages.h), which random lookups on large zones need.
  static constexpr size_t kSmallBlockBytes = size_t{1} << 20;
  static constexpr size_t kSmallBlocks = 4;
  struct FreeBlock {
    bool huge = false;
    void operator()(char* block) const;
  };
  std::vector<std::unique_ptr<char[], FreeBlock>> blocks_;
  size_t block_bytes_ = 0;  // of the last block
  size_t used_ = 0;         // in the last block
  size_t allocated_ = 0;
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_ZONE_RECORDS_H_
