#include "server/xdp/tcp/tcp_table.h"

#include <algorithm>
#include <utility>

namespace onepass::xdp {
namespace {

// Empties `buffer`, keeping its allocation unless it grew past `kept` bytes (then one of
// `kept` bytes replaces it).
void EmptyKeepingCapacity(std::vector<uint8_t>& buffer, size_t kept) {
  buffer.clear();
  if (buffer.capacity() <= kept) return;
  std::vector<uint8_t> smaller;
  smaller.reserve(kept);
  buffer.swap(smaller);
}

}  // namespace

void TcpConnection::Reset() {
  std::vector<uint8_t> kept_request = std::move(request);
  std::vector<uint8_t> kept_response = std::move(response);
  *this = TcpConnection{};  // every other field: one assignment cannot forget one
  EmptyKeepingCapacity(kept_request, kKeptBufferBytes);
  EmptyKeepingCapacity(kept_response, kKeptBufferBytes);
  request = std::move(kept_request);
  response = std::move(kept_response);
}

TcpTable::TcpTable(const TcpTableConfig& config)
    : config_(config), slots_(config.max_connections), live_at_(config.max_connections, 0) {
  live_.reserve(config.max_connections);
  size_t n = 16;
  while (n < 2 * config.max_connections) n <<= 1;
  index_.assign(n, -1);
  for (size_t i = config.max_connections; i-- > 0;) free_.push_back(static_cast<uint32_t>(i));
  peers_.reserve(config.max_connections);
}

TcpTable::PeerId TcpTable::PeerOf(const FlowKey& key) {
  PeerId id{};
  std::copy(key.peer.begin(), key.peer.end(), id.begin());
  id[16] = key.v6 ? 1 : 0;
  return id;
}

size_t TcpTable::Home(const FlowKey& k) const {
  // FNV-1a: the table is not keyed by secrets, so a peer choosing ports could lengthen
  // probes; bounded by the table size. A keyed hash is the next step.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint8_t b) { h = (h ^ b) * 1099511628211ull; };
  for (uint8_t b : k.peer) mix(b);
  for (uint8_t b : k.local) mix(b);
  mix(static_cast<uint8_t>(k.peer_port));
  mix(static_cast<uint8_t>(k.peer_port >> 8));
  mix(static_cast<uint8_t>(k.local_port));
  mix(static_cast<uint8_t>(k.local_port >> 8));
  return static_cast<size_t>(h) & (index_.size() - 1);
}

TcpConnection* TcpTable::Find(const FlowKey& key, size_t home) {
  for (size_t i = home;; i = (i + 1) & (index_.size() - 1)) {
    if (index_[i] < 0) return nullptr;
    if (slots_[index_[i]].key == key) return &slots_[index_[i]];
  }
}

TcpTableInsert TcpTable::Insert(const FlowKey& key, TcpConnection** out) {
  size_t i = Home(key);
  for (; index_[i] >= 0; i = (i + 1) & (index_.size() - 1)) {
    if (slots_[index_[i]].key == key) {
      *out = &slots_[index_[i]];
      return TcpTableInsert::kExists;
    }
  }
  return InsertAt(key, i, out);
}

TcpTableInsert TcpTable::InsertAbsent(const FlowKey& key, size_t home, TcpConnection** out) {
  size_t i = home;
  while (index_[i] >= 0) i = (i + 1) & (index_.size() - 1);
  return InsertAt(key, i, out);
}

TcpTableInsert TcpTable::InsertAt(const FlowKey& key, size_t free_index, TcpConnection** out) {
  if (free_.empty()) return TcpTableInsert::kFull;
  // Looked up, not inserted: a refused peer leaves no entry behind.
  const PeerId peer = PeerOf(key);
  const auto held = peers_.find(peer);
  if ((held == peers_.end() ? 0 : held->second) >= config_.per_client_max) {
    return TcpTableInsert::kPerClientLimited;
  }
  if (held == peers_.end()) {
    peers_.try_emplace(peer, 1);
  } else {
    ++held->second;
  }
  uint32_t s = free_.back();
  free_.pop_back();
  slots_[s].Reset();
  slots_[s].key = key;
  live_at_[s] = static_cast<uint32_t>(live_.size());
  live_.push_back(s);
  index_[free_index] = static_cast<int32_t>(s);
  ++size_;
  *out = &slots_[s];
  return TcpTableInsert::kOk;
}

void TcpTable::Erase(TcpConnection* c) {
  size_t mask = index_.size() - 1;
  auto s = static_cast<int32_t>(c - slots_.data());
  size_t i = Home(c->key);
  while (index_[i] != s) i = (i + 1) & mask;
  // Backward-shift deletion: later entries of the run move up so no probe stops early.
  for (size_t j = (i + 1) & mask; index_[j] >= 0; j = (j + 1) & mask) {
    size_t home = Home(slots_[index_[j]].key);
    bool movable = (j > i) ? (home <= i || home > j) : (home <= i && home > j);
    if (movable) {
      index_[i] = index_[j];
      i = j;
    }
  }
  index_[i] = -1;
  if (auto peer = peers_.find(PeerOf(c->key)); peer != peers_.end() && --peer->second == 0) {
    peers_.erase(peer);
  }
  const uint32_t moved = live_.back();  // takes the erased slot's place in live_
  live_[live_at_[s]] = moved;
  live_at_[moved] = live_at_[s];
  live_.pop_back();
  free_.push_back(static_cast<uint32_t>(s));
  --size_;
}

}  // namespace onepass::xdp
