#include "server/core/waiting_room.h"

#include <algorithm>

namespace onepass {

WaitingRoom::WaitingRoom(int capacity, int per_client)
    : capacity_(std::max(1, capacity)), per_client_(per_client) {
  head_.prev = head_.next = &head_;
}

void WaitingRoom::Add(Entry& entry, const ClientKey& client) {
  if (entry.in_room) return;
  entry.client = client;
  entry.in_room = true;
  entry.prev = head_.prev;
  entry.next = &head_;
  head_.prev->next = &entry;
  head_.prev = &entry;
  ++size_;
  if (per_client_ > 0) ++per_client_counts_[client];  // no share: no hash per park
}

void WaitingRoom::Remove(Entry& entry) {
  if (!entry.in_room) return;
  entry.prev->next = entry.next;
  entry.next->prev = entry.prev;
  entry.prev = entry.next = nullptr;
  entry.in_room = false;
  --size_;
  if (per_client_ <= 0) return;
  const auto it = per_client_counts_.find(entry.client);
  if (it != per_client_counts_.end() && --it->second <= 0) per_client_counts_.erase(it);
}

bool WaitingRoom::ClientMayHoldAnother(const ClientKey& client, const Entry* self) const {
  if (per_client_ <= 0) return true;
  int held = CountOf(client);
  if (self != nullptr && self->in_room && self->client == client) --held;
  return held < per_client_;
}

bool WaitingRoom::FullWithout(const Entry* self) const {
  const int others = size_ - (self != nullptr && self->in_room ? 1 : 0);
  return others >= capacity_;
}

WaitingRoom::Entry* WaitingRoom::Oldest(const Entry* self) const {
  for (Entry* entry = head_.next; entry != &head_; entry = entry->next) {
    if (entry != self) return entry;
  }
  return nullptr;
}

int WaitingRoom::CountOf(const ClientKey& client) const {
  const auto it = per_client_counts_.find(client);
  return it == per_client_counts_.end() ? 0 : it->second;
}

}  // namespace onepass
