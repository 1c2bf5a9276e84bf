// One worker's view of the DNS frontend's backends (--dns-backend): their health, how many
// queries each has outstanding, and the in-flight table that maps the query IDs this worker
// sent to each backend back to the client's connection and ID.
//
// ID space: 65536 IDs per backend per worker (each worker has its own connected UDP socket per
// backend, so IDs only need to be unique per socket), handed out in a random order drawn at
// construction (RFC 5452 §9.2 asks for unpredictable IDs). Deadlines all have the same length,
// so they expire in the order they were set: a FIFO, no heap; entries of requests answered
// meanwhile are skipped by their generation.
//
// Backend choice: least outstanding queries among the backends that are up, ties rotated. Why
// not weighted round robin: over UDP the outstanding count is a direct, per-worker measure of
// how fast each backend answers right now, it needs no weights to configure, and a backend that
// slows down or stops gets fewer queries at once, before it is even marked down.
//
// Health: a backend is marked down after `down_after` consecutive timeouts; while down it gets
// no queries, only a probe (the caller sends it) every `probe_interval`, and any answer from it
// (probe or late query) marks it up again.
//
// Thread-confined: one per worker handler. No clock reads: `now` is passed in.
#ifndef ONEPASS_HANDLERS_DNS_FRONTEND_BACKENDS_H_
#define ONEPASS_HANDLERS_DNS_FRONTEND_BACKENDS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace onepass::dns {

// One query in flight to a backend.
struct InFlight {
  bool used = false;
  bool probe = false;  // a health probe: no client waits for it
  bool tcp = false;    // retried over TCP after a TC=1 answer: only a TCP answer counts now
  // The client got the stale answer (RFC 8767 client-response timer): the backend's answer
  // only refreshes the cache, and the deadline answers nobody.
  bool answered_stale = false;
  uint32_t generation = 0;
  uint64_t connection = 0;    // the server's connection id (RequestContext::connection)
  uint16_t client_id = 0;     // the client's query ID, restored in the answer
  uint16_t client_flags = 0;  // the query's header flags, for a SERVFAIL of our own
  std::string question;       // the question section as sent (empty when QDCOUNT was 0)
  size_t qname_bytes = 0;     // length of the QNAME at the front of `question`
  std::string cache_key;      // DnsCache key of the query; empty when not cacheable
  std::string query;          // the query as sent (our ID), for a retry over TCP
};

struct BackendsConfig {
  size_t backends = 1;
  size_t max_in_flight = 16384;  // per worker, all backends together
  int down_after = 3;
  absl::Duration timeout = absl::Seconds(1);
  absl::Duration probe_interval = absl::Seconds(1);
  uint64_t seed = 0;  // for the ID order
};

class FrontendBackends {
 public:
  explicit FrontendBackends(const BackendsConfig& config);

  // The backend for the next query: least outstanding among those up; -1 when all are down.
  int Pick();
  bool WindowFull() const { return in_flight_ >= config_.max_in_flight; }
  size_t in_flight() const { return in_flight_; }

  // Takes a free ID of `backend` for a query sent at `now` (deadline now + timeout) and returns
  // it; the caller fills the entry (Entry). nullopt when all 65536 are in use.
  std::optional<uint16_t> Allocate(int backend, absl::Time now, bool probe);
  InFlight& Entry(int backend, uint16_t id) { return backends_[backend].table[id]; }
  // The entry for `id` of `backend` when in flight, else nullptr.
  const InFlight* Find(int backend, uint16_t id) const;

  // An answer for `id` came from `backend`: frees the ID; the backend is healthy (marked up if
  // it was down; returns true then).
  bool Complete(int backend, uint16_t id);
  // `backend` answered (a TC=1 answer whose query goes on over TCP): it is alive, so the
  // timeouts before it no longer count towards marking it down.
  void NoteAlive(int backend) { backends_[backend].consecutive_timeouts = 0; }

  // The oldest entry whose deadline is <= now, freed and returned (with its backend), counting
  // a timeout against its backend; `marked_down` says this timeout marked the backend down.
  struct Expired {
    int backend = 0;
    InFlight entry;
    bool marked_down = false;
  };
  std::optional<Expired> PopExpired(absl::Time now);

  // RFC 8767 §5 client-response timer: `id` of `backend`, still in flight at `at`, is due
  // then (PopClientTimer). All timers have the same length, so they too are a FIFO.
  void ArmClientTimer(int backend, uint16_t id, absl::Time at);
  // The oldest armed timer whose time is <= now and whose query is still in flight (its
  // entry stays in flight), or nullopt.
  struct Due {
    int backend = 0;
    uint16_t id = 0;
  };
  std::optional<Due> PopClientTimer(absl::Time now);

  bool up(int backend) const { return backends_[backend].up; }
  bool AllDown() const { return up_count_ == 0; }
  // A down backend due for a probe at `now` (its next probe is then set), or -1.
  int DueProbe(absl::Time now);

 private:
  struct Backend {
    std::vector<InFlight> table = std::vector<InFlight>(65536);
    std::vector<uint16_t> free_ids;  // a stack, shuffled once
    size_t outstanding = 0;
    int consecutive_timeouts = 0;
    bool up = true;
    absl::Time next_probe = absl::InfinitePast();
  };
  struct Deadline {
    absl::Time at;
    int backend;
    uint16_t id;
    uint32_t generation;
  };
  void Free(int backend, uint16_t id);

  BackendsConfig config_;
  std::vector<Backend> backends_;
  std::deque<Deadline> deadlines_;
  std::deque<Deadline> client_timers_;
  size_t in_flight_ = 0;
  size_t up_count_ = 0;
  size_t rotate_ = 0;
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_FRONTEND_BACKENDS_H_
