#include "handlers/dns/answer_plan.h"

#include <cstring>

#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {
namespace {

const Node kEmptyNode;

// "*." + encloser, in a caller's buffer (RFC 4592 §2.1.1: the source of synthesis).
absl::string_view WildcardOf(absl::string_view encloser, char (&buffer)[kMaxNameBytes + 2]) {
  buffer[0] = 1;
  buffer[1] = '*';
  std::memcpy(buffer + 2, encloser.data(), encloser.size());
  return {buffer, encloser.size() + 2};
}

// The name one label longer than `encloser` on the way down to `name` (RFC 5155 §1.3: the
// next closer name); `encloser` must be a proper suffix of `name`.
absl::string_view NextCloser(absl::string_view name, absl::string_view encloser) {
  while (Parent(name).size() > encloser.size()) name = Parent(name);
  return name;
}

bool IsWildcardName(absl::string_view name) {
  return name.size() >= 2 && name[0] == 1 && name[1] == '*';
}

class Planner {
 public:
  Planner(const ZoneSnapshot& snapshot, uint16_t qtype, uint16_t qclass, bool dnssec_ok,
          AnswerPlan& plan)
      : snapshot_(snapshot), qtype_(qtype), qclass_(qclass), dnssec_ok_(dnssec_ok), plan_(plan) {}

  // NSD answer_lookup_zone: find the zone of `name`, then a referral or an answer.
  void LookupZone(absl::string_view name) {
    const Zone* zone = snapshot_.FindZone(name);
    if (zone == nullptr) {
      // Only the question itself is refused; a CNAME leading out keeps what was found.
      if (cname_count_ == 0) {
        plan_.kind = AnswerKind::kRefused;
        plan_.rcode = kRcodeRefused;
        plan_.ede = kEdeNotAuthoritative;
      }
      return;
    }
    absl::string_view encloser = zone->ClosestEncloser(name);
    const bool exact = encloser.size() == name.size();
    if (exact && qtype_ == kTypeDs && encloser == zone->origin()) {
      // RFC 4035 §3.1.4.1: the DS RRset lives on the parent side of the cut.
      const Zone* parent = IsRoot(encloser) ? nullptr : snapshot_.FindZone(Parent(encloser));
      if (parent == nullptr) {
        // Not authoritative for the parent: NODATA from the child's apex (NSD).
        plan_.authoritative = qclass_ != kClassAny;
        SetKind(AnswerKind::kNodata);
        AddNegativeSoa(*zone);
        NodataProof(*zone, zone->origin(), zone->apex());
        return;
      }
      zone = parent;
    }
    const absl::string_view cut = zone->FindDelegation(encloser);
    if (cut.empty() || (exact && qtype_ == kTypeDs && encloser == cut)) {
      plan_.authoritative = qclass_ != kClassAny;
      Authoritative(*zone, name, encloser, exact);
    } else {
      // RFC 1034 §4.3.2 step 3b: a referral; authoritative only for the CNAMEs before it.
      plan_.authoritative = cname_count_ > 0;
      SetKind(AnswerKind::kReferral);
      Referral(*zone, cut);
    }
  }

 private:
  // The end of a CNAME chain keeps the kind kCname.
  void SetKind(AnswerKind kind) {
    if (plan_.kind != AnswerKind::kCname) plan_.kind = kind;
  }

  // With DO, a signed delegation carries its DS, an unsigned one the proof that there is
  // none (RFC 4035 §3.1.4; RFC 5155 §7.2.7 with opt-out).
  void Referral(const Zone& zone, absl::string_view cut) {
    const Node& node = *zone.FindNode(cut);
    Add(zone, Section::kAuthority, cut, node.Find(kTypeNs));
    if (!Signed(zone)) return;
    if (const RRset* ds = node.Find(kTypeDs)) {
      Add(zone, Section::kAuthority, cut, ds);
    } else if (zone.denial().has_nsec3()) {
      Nsec3NoDsProof(zone, cut);
    } else if (const RRset* nsec = node.Find(kTypeNsec)) {
      Add(zone, Section::kAuthority, cut, nsec);
    }
  }

  // NSD answer_authoritative.
  void Authoritative(const Zone& zone, absl::string_view name, absl::string_view encloser,
                     bool exact) {
    const Node* match = nullptr;
    // Where a NODATA proof looks: the name, or the wildcard when one answers (RFC 4035
    // §3.1.3.4: the wildcard is not expanded in that proof).
    absl::string_view original = name;
    const Node* original_node = nullptr;
    if (exact) {
      match = zone.FindNode(name);
      if (match == nullptr) match = &kEmptyNode;  // DS cut not present in the parent
      original_node = match;
    } else if (encloser.size() + 2 <= kMaxNameBytes) {
      char buffer[kMaxNameBytes + 2];
      auto it = zone.nodes().find(WildcardOf(encloser, buffer));
      if (it != zone.nodes().end()) {
        match = original_node = &it->second;
        original = it->first;
        plan_.wildcard = true;
        // RFC 5155 §7.2.6: the next closer name does not exist.
        if (UsesNsec3(zone)) Nsec3NextCloserProof(zone, name, encloser);
      }
    }
    if (UsesNsec3(zone)) {
      if (match == nullptr) {
        // RFC 5155 §7.2.2: closest encloser proof, then no wildcard at it.
        Nsec3NextCloserProof(zone, name, encloser);
        const Node& encloser_node = *zone.FindNode(encloser);
        if (encloser_node.nsec3_exact) AddNsec3(zone, encloser_node.nsec3);
        AddNsec3(zone, encloser_node.nsec3_wildcard);
      }
    } else if (Signed(zone)) {
      // RFC 4035 §3.1.3.2/3: the NSEC covering the name; with no match, also the one
      // covering the wildcard at the closest encloser.
      if (!exact) AddCoveringNsec(zone, name);
      if (match == nullptr && encloser.size() + 2 <= kMaxNameBytes) {
        char buffer[kMaxNameBytes + 2];
        AddCoveringNsec(zone, WildcardOf(encloser, buffer));
      }
    }
    if (plan_.rcode != kRcodeNoError) return;  // an NSEC3 hash collision
    if (match == nullptr) {
      plan_.rcode = kRcodeNxDomain;
      SetKind(AnswerKind::kNxdomain);
      AddNegativeSoa(zone);
      return;
    }
    AnswerDomain(zone, *match, name, original, *original_node);
  }

  // NSD answer_domain: `owner` is the name asked for (a wildcard's RRsets get it as owner).
  void AnswerDomain(const Zone& zone, const Node& node, absl::string_view owner,
                    absl::string_view original, const Node& original_node) {
    if (qtype_ == kTypeAny) {
      const RRset* chosen = ChooseForAny(node, /*skip_rrsig=*/Signed(zone));
      if (chosen == nullptr) {
        Nodata(zone, original, original_node);
      } else {
        SetKind(AnswerKind::kAnswer);
        Add(zone, Section::kAnswer, owner, chosen);
      }
      return;
    }
    if (qtype_ == kTypeNsec3) {
      // NSEC3 records are not data of a name (RFC 5155 §7.2.8); NSD answers NODATA.
      Nodata(zone, original, original_node);
      return;
    }
    if (const RRset* rrset = node.Find(qtype_)) {
      SetKind(AnswerKind::kAnswer);
      Add(zone, Section::kAnswer, owner, rrset);
    } else if (const RRset* cname = node.Find(kTypeCname)) {
      plan_.kind = AnswerKind::kCname;
      // Not added means it is already there: a loop. Stop (RFC 1034 §3.6.2 / NSD).
      const absl::string_view target = cname->records.front().target;
      if (Add(zone, Section::kAnswer, owner, cname) && ++cname_count_ <= kMaxCnameChain &&
          !target.empty()) {
        LookupZone(target);
      }
      return;
    } else {
      Nodata(zone, original, original_node);
      return;
    }
    // NSD's answer_needs_ns: DS and DNSKEY sets are big and ANY is minimal (RFC 8482).
    if (qclass_ != kClassAny && zone.apex_ns() != nullptr && qtype_ != kTypeDnskey &&
        qtype_ != kTypeDs) {
      Add(zone, Section::kOptionalAuthority, zone.origin(), zone.apex_ns());
    }
  }

  void Nodata(const Zone& zone, absl::string_view original, const Node& original_node) {
    SetKind(AnswerKind::kNodata);
    AddNegativeSoa(zone);
    NodataProof(zone, original, original_node);
  }

  // RFC 4035 §3.1.3.1 (NSEC at the name), RFC 5155 §7.2.3-§7.2.5 (NSEC3), as NSD picks them.
  void NodataProof(const Zone& zone, absl::string_view original, const Node& node) {
    if (UsesNsec3(zone)) {
      if (qtype_ == kTypeDs) {
        if (original == zone.origin()) {
          if (node.nsec3_exact) AddNsec3(zone, node.nsec3);
        } else {
          Nsec3NoDsProof(zone, original);
        }
      } else if (IsWildcardName(original)) {
        // §7.2.5: the closest encloser (the wildcard's parent) and the wildcard itself.
        const Node* parent = zone.FindNode(Parent(original));
        if (parent != nullptr && parent->nsec3_exact) AddNsec3(zone, parent->nsec3);
        AddNsec3(zone, node.nsec3);
      } else if (node.nsec3_exact) {
        AddNsec3(zone, node.nsec3);
      }
    } else if (Signed(zone)) {
      AddCoveringNsec(zone, original);
    }
  }

  // NSD nsec3_add_ds_proof: the NSEC3 of `name` if it has one, else the closest provable
  // encloser proof with the opt-out span covering `name` (RFC 5155 §7.2.4, §7.2.7). NSD tells
  // referrals from DS queries here, but both of its branches pick the same matching NSEC3.
  void Nsec3NoDsProof(const Zone& zone, absl::string_view name) {
    const Node* node = zone.FindNode(name);
    if (node != nullptr && node->nsec3_exact) {
      AddNsec3(zone, node->nsec3);
      return;
    }
    absl::string_view parent = Parent(name);
    absl::string_view below;  // the name one label under the provable encloser
    const Node* parent_node = zone.FindNode(parent);
    while ((parent_node == nullptr || !parent_node->nsec3_exact) &&
           parent.size() > zone.origin().size()) {
      below = parent;
      parent = Parent(parent);
      parent_node = zone.FindNode(parent);
    }
    if (parent_node != nullptr && parent_node->nsec3_exact) AddNsec3(zone, parent_node->nsec3);
    if (!below.empty()) {
      const Node* below_node = zone.FindNode(below);
      bool exact = false;
      AddNsec3(zone,
               below_node != nullptr ? below_node->nsec3 : zone.denial().FindNsec3(below, exact));
    }
    if (node != nullptr) AddNsec3(zone, node->nsec3);
  }

  // RFC 5155 §7.2.1: the NSEC3 covering the next closer name. The one hash a query computes.
  void Nsec3NextCloserProof(const Zone& zone, absl::string_view name, absl::string_view encloser) {
    bool exact = false;
    const int32_t index = zone.denial().FindNsec3(NextCloser(name, encloser), exact);
    if (exact) {
      // A hash collision with an existing name: no proof is possible (NSD answers SERVFAIL).
      plan_.rcode = kRcodeServFail;
      return;
    }
    AddNsec3(zone, index);
  }

  void AddNsec3(const Zone& zone, int32_t index) {
    if (index < 0) return;
    const DenialIndex::Nsec3Entry& entry = zone.denial().nsec3(index);
    Add(zone, Section::kAuthority, entry.owner, entry.rrset);
  }

  void AddCoveringNsec(const Zone& zone, absl::string_view name) {
    if (const DenialIndex::NsecEntry* nsec = zone.denial().CoveringNsec(name)) {
      Add(zone, Section::kAuthority, nsec->owner, nsec->rrset);
    }
  }

  // DNSSEC records go out for a DO query from a signed zone (NSD's zone_is_secure).
  bool Signed(const Zone& zone) const { return dnssec_ok_ && zone.secure(); }
  bool UsesNsec3(const Zone& zone) const { return Signed(zone) && zone.denial().has_nsec3(); }

  // RFC 8482 §4.1 lets a server answer ANY with one RRset. NSD's choice: the first of
  // A/AAAA/SOA/MX/PTR in zone order, else the last other type, else the last DNSSEC one.
  // RRSIGs are not a choice when they come with every RRset anyway (DO, signed zone).
  static const RRset* ChooseForAny(const Node& node, bool skip_rrsig) {
    const RRset* normal = nullptr;
    const RRset* non_preferred = nullptr;
    for (const RRset* rrset : node.rrsets) {
      switch (rrset->type) {
        case kTypeA:
        case kTypeAaaa:
        case kTypeSoa:
        case kTypeMx:
        case kTypePtr:
          return rrset;
        case kTypeRrsig:
          if (!skip_rrsig) non_preferred = rrset;
          break;
        case kTypeDnskey:
        case kTypeNsec:
          non_preferred = rrset;
          break;
        case kTypeNsec3:
          break;
        default:
          normal = rrset;
      }
    }
    return normal != nullptr ? normal : non_preferred;
  }

  void AddNegativeSoa(const Zone& zone) {
    // RFC 2308 §3 (NXDOMAIN/NODATA); NSD leaves it out for QCLASS=ANY.
    if (qclass_ != kClassAny) {
      Add(zone, Section::kAuthority, zone.origin(), &zone.negative_soa());
    }
  }

  // NSD add_rrset: adds once (an RRset already present moves up to the earlier section), then
  // adds the A/AAAA of in-zone targets of NS (glue allowed), MX and SRV (not glue).
  bool Add(const Zone& zone, Section section, absl::string_view owner, const RRset* rrset) {
    const bool added = AddOnce(section, owner, rrset, Signed(zone));
    switch (rrset->type) {
      case kTypeNs:
        AddTargetAddresses(zone, *rrset, /*allow_glue=*/true);
        break;
      case kTypeMx:
      case kTypeSrv:
        AddTargetAddresses(zone, *rrset, /*allow_glue=*/false);
        break;
      default:
        break;
    }
    return added;
  }

  bool AddOnce(Section section, absl::string_view owner, const RRset* rrset, bool signed_zone) {
    for (PlanEntry& entry : plan_.entries) {
      if (entry.rrset == rrset && entry.owner == owner) {
        if (section < entry.section) {
          entry.section = section;
          return true;
        }
        return false;
      }
    }
    plan_.entries.push_back(
        PlanEntry{section, owner, rrset,
                  signed_zone && rrset->type != kTypeRrsig && !rrset->signatures.empty()});
    return true;
  }

  void AddTargetAddresses(const Zone& zone, const RRset& rrset, bool allow_glue) {
    for (const Record& record : rrset.records) {
      const absl::string_view target = record.target;
      if (target.empty() || !IsSubdomain(target, zone.origin())) continue;
      if (!allow_glue && !zone.FindDelegation(target).empty()) continue;
      const Node* node = zone.FindNode(target);
      if (node == nullptr) {
        // The target may exist only through a wildcard (RFC 4592 §4.1 expansion).
        char buffer[kMaxNameBytes + 2];
        const absl::string_view encloser = zone.ClosestEncloser(target);
        if (encloser.size() + 2 > kMaxNameBytes) continue;
        node = zone.FindNode(WildcardOf(encloser, buffer));
        if (node == nullptr) continue;
      }
      if (const RRset* a = node->Find(kTypeA)) {
        AddOnce(Section::kAdditionalA, target, a, Signed(zone));
      }
      if (const RRset* aaaa = node->Find(kTypeAaaa)) {
        AddOnce(Section::kAdditionalAaaa, target, aaaa, Signed(zone));
      }
    }
  }

  const ZoneSnapshot& snapshot_;
  const uint16_t qtype_;
  const uint16_t qclass_;
  const bool dnssec_ok_;
  AnswerPlan& plan_;
  int cname_count_ = 0;
};

}  // namespace

void PlanAnswer(const ZoneSnapshot& snapshot, absl::string_view qname, uint16_t qtype,
                uint16_t qclass, bool dnssec_ok, AnswerPlan& plan) {
  plan.Clear();
  Planner(snapshot, qtype, qclass, dnssec_ok, plan).LookupZone(qname);
}

}  // namespace onepass::dns
