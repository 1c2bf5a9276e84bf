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

class Planner {
 public:
  Planner(const ZoneSnapshot& snapshot, uint16_t qtype, uint16_t qclass, AnswerPlan& plan)
      : snapshot_(snapshot), qtype_(qtype), qclass_(qclass), plan_(plan) {}

  // NSD answer_lookup_zone: find the zone of `name`, then a referral or an answer.
  void LookupZone(absl::string_view name) {
    const Zone* zone = snapshot_.FindZone(name);
    if (zone == nullptr) {
      // Only the question itself is refused; a CNAME leading out keeps what was found.
      if (cname_count_ == 0) {
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
        plan_.authoritative = qclass_ != kClassAny;
        AddNegativeSoa(*zone);
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
      Add(*zone, Section::kAuthority, cut, zone->FindNode(cut)->Find(kTypeNs));
    }
  }

 private:
  void Authoritative(const Zone& zone, absl::string_view name, absl::string_view encloser,
                     bool exact) {
    const Node* match = nullptr;
    if (exact) {
      match = zone.FindNode(name);
      if (match == nullptr) match = &kEmptyNode;  // DS cut not present in the parent
    } else {
      char buffer[kMaxNameBytes + 2];
      if (encloser.size() + 2 <= kMaxNameBytes) match = zone.FindNode(WildcardOf(encloser, buffer));
    }
    if (match == nullptr) {
      plan_.rcode = kRcodeNxDomain;
      AddNegativeSoa(zone);
      return;
    }
    AnswerDomain(zone, *match, name);
  }

  // NSD answer_domain: `owner` is the name asked for (a wildcard's RRsets get it as owner).
  void AnswerDomain(const Zone& zone, const Node& node, absl::string_view owner) {
    if (qtype_ == kTypeAny) {
      const RRset* chosen = ChooseForAny(node);
      if (chosen == nullptr) {
        AddNegativeSoa(zone);
      } else {
        Add(zone, Section::kAnswer, owner, chosen);
      }
      return;
    }
    if (const RRset* rrset = node.Find(qtype_)) {
      Add(zone, Section::kAnswer, owner, rrset);
    } else if (const RRset* cname = node.Find(kTypeCname)) {
      // Not added means it is already there: a loop. Stop (RFC 1034 §3.6.2 / NSD).
      const absl::string_view target = cname->records.front().target;
      if (Add(zone, Section::kAnswer, owner, cname) && ++cname_count_ <= kMaxCnameChain &&
          !target.empty()) {
        LookupZone(target);
      }
      return;
    } else {
      AddNegativeSoa(zone);
      return;
    }
    // NSD's answer_needs_ns: DS and DNSKEY sets are big and ANY is minimal (RFC 8482).
    if (qclass_ != kClassAny && zone.apex_ns() != nullptr && qtype_ != kTypeDnskey &&
        qtype_ != kTypeDs) {
      Add(zone, Section::kOptionalAuthority, zone.origin(), zone.apex_ns());
    }
  }

  // RFC 8482 §4.1 lets a server answer ANY with one RRset. NSD's choice: the first of
  // A/AAAA/SOA/MX/PTR in zone order, else the last other type, else the last DNSSEC one.
  static const RRset* ChooseForAny(const Node& node) {
    const RRset* normal = nullptr;
    const RRset* non_preferred = nullptr;
    for (const RRset& rrset : node.rrsets) {
      switch (rrset.type) {
        case kTypeA:
        case kTypeAaaa:
        case kTypeSoa:
        case kTypeMx:
        case kTypePtr:
          return &rrset;
        case kTypeDnskey:
        case kTypeRrsig:
        case kTypeNsec:
          non_preferred = &rrset;
          break;
        case kTypeNsec3:
          break;
        default:
          normal = &rrset;
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
    const bool added = AddOnce(section, owner, rrset);
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

  bool AddOnce(Section section, absl::string_view owner, const RRset* rrset) {
    for (PlanEntry& entry : plan_.entries) {
      if (entry.rrset == rrset && entry.owner == owner) {
        if (section < entry.section) {
          entry.section = section;
          return true;
        }
        return false;
      }
    }
    plan_.entries.push_back(PlanEntry{section, owner, rrset});
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
      if (const RRset* a = node->Find(kTypeA)) AddOnce(Section::kAdditionalA, target, a);
      if (const RRset* aaaa = node->Find(kTypeAaaa)) {
        AddOnce(Section::kAdditionalAaaa, target, aaaa);
      }
    }
  }

  const ZoneSnapshot& snapshot_;
  const uint16_t qtype_;
  const uint16_t qclass_;
  AnswerPlan& plan_;
  int cname_count_ = 0;
};

}  // namespace

void PlanAnswer(const ZoneSnapshot& snapshot, absl::string_view qname, uint16_t qtype,
                uint16_t qclass, AnswerPlan& plan) {
  plan.Clear();
  Planner(snapshot, qtype, qclass, plan).LookupZone(qname);
}

}  // namespace onepass::dns
