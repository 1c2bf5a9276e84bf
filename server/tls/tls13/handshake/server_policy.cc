#include "server/tls/tls13/handshake/server_policy.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace onepass::tls::tls13 {
namespace {

// RFC 8446 §B.4, with the names OpenSSL's SSL_CTX_set_ciphersuites takes.
struct SuiteName {
  absl::string_view name;
  uint16_t value;
};
constexpr SuiteName kSuiteNames[] = {
    {"TLS_AES_128_GCM_SHA256", 0x1301},       {"TLS_AES_256_GCM_SHA384", 0x1302},
    {"TLS_CHACHA20_POLY1305_SHA256", 0x1303}, {"TLS_AES_128_CCM_SHA256", 0x1304},
    {"TLS_AES_128_CCM_8_SHA256", 0x1305},
};

}  // namespace

absl::StatusOr<ServerPolicy> MakeServerPolicy(absl::string_view ciphersuites,
                                              std::vector<std::string> alpn,
                                              int tickets_per_handshake, bool allow_tls12) {
  ServerPolicy policy;
  for (absl::string_view name : absl::StrSplit(ciphersuites, ':', absl::SkipEmpty())) {
    const SuiteName* found = nullptr;
    for (const SuiteName& known : kSuiteNames) {
      if (known.name == name) found = &known;
    }
    if (found == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tls-ciphersuites: unknown TLS 1.3 cipher suite \"", name,
                       "\"; use TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384 or "
                       "TLS_CHACHA20_POLY1305_SHA256, separated by ':'"));
    }
    policy.suites.push_back(found->value);
  }
  if (policy.suites.empty()) {
    return absl::InvalidArgumentError("--tls-ciphersuites: no cipher suite given");
  }
  policy.alpn = std::move(alpn);
  policy.tickets_per_handshake = tickets_per_handshake;
  policy.allow_tls12 = allow_tls12;
  return policy;
}

}  // namespace onepass::tls::tls13
