#include "server/core/client_limits.h"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "absl/hash/hash.h"
#include "common/address_prefix.h"

namespace onepass {
namespace {

// Clears every bit of `key` past the first `bits`.
void KeepPrefix(ClientKey& key, int bits) {
  for (int byte = 0; byte < 16; ++byte) {
    const int keep = bits - byte * 8;
    if (keep >= 8) continue;
    key[byte] &= keep <= 0 ? 0 : static_cast<uint8_t>(0xff << (8 - keep));
  }
}

}  // namespace

ClientKey ClientKeyOf(const std::array<uint8_t, 16>& address, int v4_prefix, int v6_prefix) {
  ClientKey key = address;
  // A v4-mapped address (an IPv4 peer, or one on a dual-stack socket) is an IPv4 client.
  const bool v4_mapped =
      key[10] == 0xff && key[11] == 0xff &&
      std::all_of(key.begin(), key.begin() + 10, [](uint8_t b) { return b == 0; });
  KeepPrefix(key, v4_mapped ? 96 + v4_prefix : v6_prefix);
  return key;
}

ClientKey ClientKeyOf(const sockaddr_storage& address, int v4_prefix, int v6_prefix) {
  if (address.ss_family != AF_INET && address.ss_family != AF_INET6) return ClientKey{};
  return ClientKeyOf(MapAddress(address), v4_prefix, v6_prefix);
}

ClientTable::Shard& ClientTable::ShardOf(const ClientKey& key) {
  return shards_[absl::Hash<ClientKey>()(key) % kShards];
}

bool ClientTable::TryAcquire(const ClientKey& key) {
  Shard& shard = ShardOf(key);
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto [it, inserted] = shard.counts.try_emplace(key, 0);
  if (it->second >= limit_) return false;
  ++it->second;
  return true;
}

void ClientTable::Release(const ClientKey& key) {
  Shard& shard = ShardOf(key);
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto it = shard.counts.find(key);
  if (it != shard.counts.end() && --it->second <= 0) shard.counts.erase(it);
}

int ClientTable::Count(const ClientKey& key) {
  Shard& shard = ShardOf(key);
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto it = shard.counts.find(key);
  return it == shard.counts.end() ? 0 : it->second;
}

}  // namespace onepass
