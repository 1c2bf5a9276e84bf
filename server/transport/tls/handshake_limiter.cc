#include "server/transport/tls/handshake_limiter.h"

#include <algorithm>

#include "absl/hash/hash.h"

namespace onepass {
namespace {

// A second's worth, and at least one handshake.
float Burst(double rate) { return static_cast<float>(std::max(rate, 1.0)); }

}  // namespace

HandshakeLimiter::HandshakeLimiter(Rates rates) : rates_(rates) {}

bool HandshakeLimiter::Admit(const ClientKey& client, bool resumption, int64_t now_nanos) {
  const double rate = resumption ? rates_.resumed : rates_.full;
  if (rate <= 0) return true;
  if (buckets_.empty()) buckets_.resize(kSlots);
  Bucket& bucket = buckets_[absl::Hash<ClientKey>()(client) % kSlots];
  if (!bucket.used || bucket.client != client) {
    bucket = {.client = client,
              .used = true,
              .full = Burst(rates_.full),
              .resumed = Burst(rates_.resumed),
              .at = now_nanos};
  }
  const double elapsed = static_cast<double>(now_nanos - bucket.at) * 1e-9;
  if (elapsed > 0) {
    bucket.full =
        std::min(Burst(rates_.full), bucket.full + static_cast<float>(elapsed * rates_.full));
    bucket.resumed = std::min(Burst(rates_.resumed),
                              bucket.resumed + static_cast<float>(elapsed * rates_.resumed));
    bucket.at = now_nanos;
  }
  float& tokens = resumption ? bucket.resumed : bucket.full;
  if (tokens < 1) return false;
  tokens -= 1;
  return true;
}

}  // namespace onepass
