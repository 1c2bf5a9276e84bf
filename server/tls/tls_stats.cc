#include "server/tls/tls_stats.h"

namespace onepass::tls {

absl::string_view TlsFailureName(TlsFailure failure) {
  static constexpr absl::string_view kNames[] = {"none",
#define ONEPASS_TLS_NAME(name, help) #name,
                                                 ONEPASS_TLS_FAILURES(ONEPASS_TLS_NAME)
#undef ONEPASS_TLS_NAME
  };
  const auto index = static_cast<size_t>(failure);
  return index < sizeof(kNames) / sizeof(kNames[0]) ? kNames[index] : "unknown";
}

}  // namespace onepass::tls
