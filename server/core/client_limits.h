// --max-connections-per-client for the whole server: how many connections each client holds
// parked, in one table shared by the workers.
//
// A client is its address cut to a prefix (--client-prefix-v4, 32; --client-prefix-v6, 64): a
// host given an IPv6 /64 owns 2^64 addresses, so counting single addresses would not limit it.
//
// Cost: the table is touched only when a connection is parked and when a parked connection
// closes, never on the single pass (accept, recv, send, close), which counts nothing. It is
// split into kShards shards, each a mutex and a map on its own cache line, chosen by the key's
// hash: two workers contend only when they park connections of clients in the same shard at
// the same moment, and a parked connection already costs an epoll registration and a timer.
#ifndef ONEPASS_SERVER_CORE_CLIENT_LIMITS_H_
#define ONEPASS_SERVER_CORE_CLIENT_LIMITS_H_

#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"

namespace onepass {

// A client: an IPv6 address (IPv4 as v4-mapped, ::ffff:a.b.c.d) with the bits past its prefix
// cleared.
using ClientKey = std::array<uint8_t, 16>;

// The key of the peer at `address` (AF_INET or AF_INET6; any other family: all zeros).
ClientKey ClientKeyOf(const sockaddr_storage& address, int v4_prefix, int v6_prefix);
// The same for an address already in 16-byte form (IPv4 as v4-mapped IPv6), as the worker keeps
// it from accept4 or a PROXY header.
ClientKey ClientKeyOf(const std::array<uint8_t, 16>& address, int v4_prefix, int v6_prefix);

class ClientTable {
 public:
  // `limit`: connections one client may hold parked at once, server-wide.
  explicit ClientTable(int limit) : limit_(limit) {}
  ClientTable(const ClientTable&) = delete;
  ClientTable& operator=(const ClientTable&) = delete;

  // Any thread. Counts one more connection of `key`; false (nothing counted) at the limit.
  bool TryAcquire(const ClientKey& key);
  // Any thread. Gives back one counted by TryAcquire.
  void Release(const ClientKey& key);
  // Any thread: connections counted for `key` now (tests).
  int Count(const ClientKey& key);

 private:
  static constexpr size_t kShards = 64;
  struct alignas(64) Shard {
    std::mutex mutex;
    absl::flat_hash_map<ClientKey, int> counts ABSL_GUARDED_BY(mutex);
  };
  Shard& ShardOf(const ClientKey& key);

  const int limit_;
  std::array<Shard, kShards> shards_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_CLIENT_LIMITS_H_
