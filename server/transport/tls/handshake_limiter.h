// New TLS handshakes per client prefix per second, full and resumed apart (--tls-full-per-client,
// --tls-resumed-per-client): what keeps one prefix flooding full handshakes, each a signature
// and a key exchange (~270 us of CPU: server/tls/README.md), from taking a worker's CPU from
// everyone else. The TLS layer asks through its HandshakeGate (server/tls/handshake_gate.h),
// before it does the costly half.
//
// One per worker, on its thread: no lock. A fixed table of token buckets, direct-mapped by the
// prefix's hash: bounded memory whatever the number of clients. A prefix that lands on a slot
// held by another takes it over with a full bucket (so a flood from many prefixes can reset
// one another's buckets, but one prefix alone is always held to its rate).
#ifndef ONEPASS_SERVER_TRANSPORT_TLS_HANDSHAKE_LIMITER_H_
#define ONEPASS_SERVER_TRANSPORT_TLS_HANDSHAKE_LIMITER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/core/client_limits.h"

namespace onepass {

class HandshakeLimiter {
 public:
  // Per second for one prefix; 0: unlimited. A prefix may spend a second's worth at once.
  struct Rates {
    double full = 0;
    double resumed = 0;
  };
  static constexpr size_t kSlots = 16384;

  explicit HandshakeLimiter(Rates rates);

  // A handshake for `client` at `now_nanos` (monotonic): true, and charged, when its budget
  // allows one.
  bool Admit(const ClientKey& client, bool resumption, int64_t now_nanos);

 private:
  struct Bucket {
    ClientKey client{};
    bool used = false;
    float full = 0;
    float resumed = 0;
    int64_t at = 0;  // when the tokens were last topped up
  };
  const Rates rates_;
  std::vector<Bucket> buckets_;  // kSlots, made on the first Admit
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_TRANSPORT_TLS_HANDSHAKE_LIMITER_H_
