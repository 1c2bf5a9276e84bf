// --allow-from: the client prefixes a server answers (dnsdist's ACL, BIND's allow-query for
// TCP). A frontend of a recursive resolver is an open resolver without one. Checked once per
// connection, at accept (or on the address a trusted PROXY v2 header names), before any TLS
// work or handler call: a refused client costs an accept and a close.
#ifndef ONEPASS_SERVER_CORE_ALLOW_LIST_H_
#define ONEPASS_SERVER_CORE_ALLOW_LIST_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/address_prefix.h"

namespace onepass {

class AllowList {
 public:
  // Every entry ("192.0.2.0/24", "2001:db8::/32", "127.0.0.1"), or the first one's error
  // naming the flag. Empty: everyone is allowed.
  static absl::StatusOr<AllowList> FromList(const std::vector<std::string>& entries) {
    AllowList list;
    for (const std::string& entry : entries) {
      absl::StatusOr<std::vector<AddressPrefix>> prefixes = ParseAddressPrefixList(entry);
      if (!prefixes.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--allow-from ", entry, ": ", prefixes.status().message()));
      }
      list.prefixes_.insert(list.prefixes_.end(), prefixes->begin(), prefixes->end());
    }
    return list;
  }
  bool empty() const { return prefixes_.empty(); }
  // A handful of prefixes, scanned: cheaper than any structure at that size.
  bool Allows(const MappedAddress& peer) const {
    if (prefixes_.empty()) return true;
    for (const AddressPrefix& prefix : prefixes_) {
      if (prefix.Contains(peer)) return true;
    }
    return false;
  }

 private:
  std::vector<AddressPrefix> prefixes_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_ALLOW_LIST_H_
