// Signs a zone for a test, as an operator would: keys made with ldns-keygen and the zone
// signed with ldns-signzone, in a temporary directory removed afterwards. The key set is a
// realistic multi-key one: an ECDSA P-256 KSK and ZSK plus an RSA-4096 KSK and ZSK (an
// algorithm rollover), which makes the DNSKEY RRset with its RRSIGs several KiB.
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_SIGNED_ZONE_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_SIGNED_ZONE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace onepass::dns::testing {

enum class Denial {
  kNsec,         // RFC 4034 §4
  kNsec3,        // RFC 5155, salt "beef", 5 iterations
  kNsec3OptOut,  // RFC 5155 §6, no salt, 0 iterations (RFC 9276)
};

const char* DenialName(Denial denial);

// Which tool signs: ldns (ldns-keygen, ldns-signzone) or BIND (dnssec-keygen,
// dnssec-signzone -S), so that zones from either signer are served and validated.
enum class Signer { kLdns, kBind };

class SignedZone {
 public:
  // Signs `template_path` (an unsigned master file whose origin is `origin`, e.g.
  // "example.org"). Fails when ldns-keygen or ldns-signzone is missing or fails. With
  // `sign` false only the keys are made (in dir()) and path() is the unsigned copy: for
  // onepassd --dnssec_keys, which signs at load.
  static absl::StatusOr<std::unique_ptr<SignedZone>> Make(const std::string& template_path,
                                                          const std::string& origin, Denial denial,
                                                          bool sign = true);
  // Signed by BIND's tools (package bind9-utils): an ECDSA P-256 KSK and ZSK made with
  // dnssec-keygen, their DNSKEYs added to the zone, dnssec-signzone -S.
  static absl::StatusOr<std::unique_ptr<SignedZone>> MakeWithBind(const std::string& template_path,
                                                                  const std::string& origin,
                                                                  Denial denial);
  ~SignedZone();  // removes the directory

  const std::string& path() const { return path_; }  // the signed zone file
  const std::string& dir() const { return dir_; }
  // The KSKs' DNSKEY records in presentation format (trust anchors for validators).
  const std::vector<std::string>& ksk_dnskeys() const { return ksk_dnskeys_; }

 private:
  SignedZone() = default;
  std::string dir_;
  std::string path_;
  std::vector<std::string> ksk_dnskeys_;
};

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_SIGNED_ZONE_H_
