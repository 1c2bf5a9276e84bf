// Connections a worker holds parked waiting for their clients, oldest first, and how many each
// client prefix holds: so that clients who stall cannot keep good ones out (issue "Hostile
// clients, round four"). When a room is full a newcomer makes room from the connection that
// has waited longest, as the metrics port does, and one prefix holds at most its share. Two
// rooms per worker:
//  - TLS handshakes (each waits for the client's next flight: the rest of its ClientHello, or
//    its Finished): --tls-max-handshakes, --tls-handshakes-per-client, asked at the ClientHello
//    before the costly half (server/tls/handshake_gate.h). 1,000 stalled ClientHellos from 40
//    addresses used to refuse every other DoT client;
//  - plain connections waiting for a request (incomplete, or between requests): at
//    --max-connections a new one closes the one waiting longest; a slowloris crowd filling the
//    pool used to refuse every client whose query came in two segments.
//
// One per worker, on its thread: no lock. An entry lives in the thing it counts (a connection
// slot): adding and removing are O(1), the oldest is the list's head.
#ifndef ONEPASS_SERVER_CORE_WAITING_ROOM_H_
#define ONEPASS_SERVER_CORE_WAITING_ROOM_H_

#include "absl/container/flat_hash_map.h"
#include "server/core/client_limits.h"

namespace onepass {

class WaitingRoom {
 public:
  struct Entry {
    Entry* prev = nullptr;
    Entry* next = nullptr;
    ClientKey client{};
    bool in_room = false;
    void* owner = nullptr;  // what the entry counts (the core's connection slot)
  };

  // `capacity`: handshakes held at once (at least 1); `per_client`: of them, per client prefix
  // (0: no per-client share).
  WaitingRoom(int capacity, int per_client);
  WaitingRoom(const WaitingRoom&) = delete;
  WaitingRoom& operator=(const WaitingRoom&) = delete;

  // `entry` (not in the room) joins it, the newest, for `client`.
  void Add(Entry& entry, const ClientKey& client);
  // `entry` leaves; nothing when it is not in the room.
  void Remove(Entry& entry);

  int size() const { return size_; }
  int capacity() const { return capacity_; }
  // Whether one more handshake of `client` fits its share, not counting `self` (the
  // connection asking, when it is in the room already: its ClientHello came in pieces).
  bool ClientMayHoldAnother(const ClientKey& client, const Entry* self) const;
  // Whether the room is full, not counting `self`.
  bool FullWithout(const Entry* self) const;
  // The handshake waiting longest other than `self`, or null.
  Entry* Oldest(const Entry* self) const;
  // Handshakes `client` holds now (tests, logs); 0 in a room without a per-client share.
  int CountOf(const ClientKey& client) const;

 private:
  const int capacity_;
  const int per_client_;
  int size_ = 0;
  Entry head_;  // sentinel: head_.next the oldest, head_.prev the newest
  absl::flat_hash_map<ClientKey, int> per_client_counts_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_WAITING_ROOM_H_
