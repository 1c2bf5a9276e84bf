// The established connections of one endpoint: a flat, preallocated table keyed by 4-tuple
// (open addressing, linear probing, backward-shift deletion), each slot with a deadline.
// Bounded by `max_connections`; `per_client_max` bounds the slots one peer address holds
// (dnsdist's per-client limit). Thread-confined (one per worker queue).
#ifndef ONEPASS_SERVER_XDP_TCP_TCP_TABLE_H_
#define ONEPASS_SERVER_XDP_TCP_TCP_TABLE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "server/xdp/tcp/packet.h"

namespace onepass::xdp {

struct TcpTableConfig {
  size_t max_connections = 1024;
  size_t per_client_max = 16;
};

// What the endpoint keeps per connection; the table only reads `key` and `deadline_ms`.
struct TcpConnection {
  // A reused slot keeps buffers up to this many bytes each: one that grew past it (a large
  // answer) goes back to this size, so a burst of those does not stay pinned in every slot.
  static constexpr size_t kKeptBufferBytes = 4096;

  // Every field to its default, `request` and `response` emptied keeping their capacity (up
  // to kKeptBufferBytes): a slot's next connection allocates nothing.
  void Reset();

  FlowKey key;
  uint64_t deadline_ms = 0;  // [ms] the next timer of this connection
  // The endpoint's (tcp_endpoint.cc): sequence space (RFC 9293 §3.3.1), peer's window and
  // timestamps, the request and the response.
  ReplyPath path;
  uint32_t snd_una = 0, snd_nxt = 0, rcv_nxt = 0;
  uint32_t data_seq = 0;     // the sequence number of response byte 0 (ISN + 1, moved as acked)
  uint32_t peer_window = 0;  // [bytes] scaled
  uint8_t peer_wscale = 0;   // the shift of the peer's window fields (RFC 7323 §2.3)
  uint16_t mss = 536;
  bool ts = false;
  uint32_t ts_recent = 0;
  // fin_queued: our FIN goes after the response's bytes (the answer closes, or keep-alive
  // ended); fin_sent: it went (reset to resend it from snd_una).
  bool fin_queued = false, fin_sent = false, peer_fin = false;
  uint32_t retries = 0;
  uint64_t rto_ms = 0;
  std::vector<uint8_t> request;
  std::vector<uint8_t> response;
};

enum class TcpTableInsert { kOk, kFull, kPerClientLimited, kExists };

class TcpTable {
 public:
  explicit TcpTable(const TcpTableConfig& config);

  // Where `key`'s probe starts (its hash): the endpoint computes it once per segment and
  // passes it to Find and, for a new connection, to InsertAbsent.
  size_t Home(const FlowKey& key) const;
  // The connection for `key`, or nullptr. Valid until Erase of it. `home`: Home(key).
  TcpConnection* Find(const FlowKey& key, size_t home);
  TcpConnection* Find(const FlowKey& key) { return Find(key, Home(key)); }
  // Find-or-insert, hashing `key` once: a new slot for `key` (all else as after
  // TcpConnection::Reset), kExists with `*out` the connection `key` has, or why not.
  TcpTableInsert Insert(const FlowKey& key, TcpConnection** out);
  // Insert for a `key` that Find(key, home) has just missed (no Insert or Erase since): no
  // second hash, no key compared; never kExists.
  TcpTableInsert InsertAbsent(const FlowKey& key, size_t home, TcpConnection** out);
  void Erase(TcpConnection* c);

  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }
  // Calls f(TcpConnection&) for every connection whose deadline is <= now. O(size()), not
  // O(capacity): a table sized for --max-connections but holding a few connections is
  // scanned in a few steps at every timer tick. `f` must not Insert or Erase.
  template <typename F>
  void ForEachExpired(uint64_t now_ms, F&& f) {
    for (const uint32_t s : live_) {
      if (slots_[s].deadline_ms <= now_ms) f(slots_[s]);
    }
  }

 private:
  // A peer address (the v6 flag in byte 16), for the per-client counts.
  using PeerId = std::array<uint8_t, 17>;
  static PeerId PeerOf(const FlowKey& key);
  // The slot for `key`, its index entry at `free_index` (an empty one that ends key's probe).
  TcpTableInsert InsertAt(const FlowKey& key, size_t free_index, TcpConnection** out);

  TcpTableConfig config_;
  std::vector<TcpConnection> slots_;
  // The slots in use, densely (for ForEachExpired), and each slot's place in it; both
  // preallocated, an Erase swaps the last one into the freed place.
  std::vector<uint32_t> live_;
  std::vector<uint32_t> live_at_;
  std::vector<int32_t> index_;  // open-addressed: slot number or -1
  std::vector<uint32_t> free_;
  // Slots held per peer: O(1) per insert at any table size. Reserved for max_connections
  // peers at construction, so an insert never rehashes (nothing allocated per connection).
  absl::flat_hash_map<PeerId, uint32_t> peers_;
  size_t size_ = 0;
};

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_TCP_TCP_TABLE_H_
