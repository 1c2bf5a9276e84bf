// One worker's view of the DNS frontend's backends (--dns-backend): their health, how many
// queries each has outstanding, and the in-flight table that maps the query IDs this worker
// sent to each backend back to the client's connection and ID.
//
// ID space: 65536 IDs per backend per worker (the worker's own sockets to each backend: IDs
// only need to be unique among them). RFC 5452 §9.2 asks for unpredictable IDs: each query
// takes an ID drawn uniformly (common/secure_random.h, a CSPRNG) from the free ones, and a
// freed ID rests in a quarantine of the kQuarantinedIds most recently freed before it can be
// drawn again, so an attacker who watches its own query's ID learns nothing of the next
// query's, and a late reply to a finished query cannot match a new one. Deadlines all have the same
// length, so they expire in the order they were set: a FIFO, no heap; entries of requests answered
// meanwhile are skipped by their generation.
//
// Backend choice: least outstanding queries among the backends that are up, ties rotated. Why
// not weighted round robin: over UDP the outstanding count is a direct, per-worker measure of
// how fast each backend answers right now, it needs no weights to configure, and a backend that
// slows down or stops gets fewer queries at once, before it is even marked down.
//
// Deadlines: a query not answered over UDP within `udp_timeout` is sent once more over TCP
// (same ID; RFC 7766 §5 allows it, and a backend that rate-limits UDP, as NSD's and Knot's
// RRL do, does not limit TCP), and one not answered at all within `timeout` fails (SERVFAIL).
//
// Health: a client query that times out only makes the backend suspect: it is probed at once
// (an SOA query of its own, with the query deadline), and marked down after `down_after`
// probes in a row go unanswered. So one client asking names the backend never answers, or a
// backend dropping the frontend's queries for rate, cannot take it out for every client. While
// down it gets no queries, only a probe every `probe_interval`; any answer from it (probe or
// late query) marks it up again.
//
// Slots (--dns-backends-file): a backend's index is its slot, which a reload keeps for every
// backend that stays (FrontendHandlerFactory::ArrangeAfter). A vacant slot (no backend now)
// holds no table, is never picked nor probed, and TakeOverFrom moves only the slots that keep
// their backend: the queries of a removed one stay with the old handler (TakeAbandoned).
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
#include "common/secure_random.h"

namespace onepass::dns {

// One query in flight to a backend.
struct InFlight {
  bool used = false;
  bool probe = false;          // a health probe: no client waits for it
  bool tcp = false;            // retried over TCP after a TC=1 answer: only a TCP answer counts now
  bool udp_timed_out = false;  // ...or after the UDP deadline: a late full UDP answer counts too
  // The client got the stale answer (RFC 8767 client-response timer): the backend's answer
  // only refreshes the cache, and the deadline answers nobody.
  bool answered_stale = false;
  uint32_t generation = 0;
  uint64_t connection = 0;    // the server's connection id (RequestContext::connection)
  uint16_t client_id = 0;     // the client's query ID, restored in the answer
  uint16_t client_flags = 0;  // the query's header flags, for a SERVFAIL of our own
  bool encrypted = false;     // the client's connection is (RFC 8467 padding of that SERVFAIL)
  std::string question;       // the question section as sent (empty when QDCOUNT was 0)
  size_t qname_bytes = 0;     // length of the QNAME at the front of `question`
  std::string cache_key;      // DnsCache key of the query; empty when not cacheable
  std::string query;          // the query as sent (our ID), for a retry over TCP
};

struct BackendsConfig {
  size_t backends = 1;  // slots
  // Per slot: whether a backend is in it; empty: every slot is.
  std::vector<bool> present = {};
  size_t max_in_flight = 16384;  // per worker, all backends together
  int down_after = 3;            // failed probes in a row
  absl::Duration timeout = absl::Seconds(1);
  // Over UDP; then once over TCP until `timeout`. Not below `timeout`: no TCP retry.
  absl::Duration udp_timeout = absl::Milliseconds(500);
  absl::Duration probe_interval = absl::Seconds(1);
};

// Freed IDs held back before they can be drawn again (per backend per worker).
inline constexpr size_t kQuarantinedIds = 4096;

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
  // `backend` answered (a TC=1 answer whose query goes on over TCP): it is alive.
  void NoteAlive(int backend);

  // The oldest entry whose UDP or final deadline is <= now. `retry_over_tcp`: its UDP time is
  // up; it stays in flight, marked tcp, and the caller sends it over TCP. Otherwise it is
  // freed and returned as it was (a client query makes its backend suspect; a probe counts
  // as failed, and `marked_down` says it marked the backend down).
  struct Expired {
    int backend = 0;
    uint16_t id = 0;
    InFlight entry;
    bool retry_over_tcp = false;
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

  // Moves the slots `keep` marks (true per slot; both must hold a backend, the same one) from
  // `old`, with their in-flight queries, deadlines, IDs and health; what `old` keeps is only
  // the queries of the other slots (for TakeAbandoned: PopExpired(InfiniteFuture())). Called
  // once, on a fresh instance with the same limits.
  void TakeOverFrom(FrontendBackends& old, const std::vector<bool>& keep);

  bool up(int backend) const { return backends_[backend].up; }
  bool present(int backend) const { return !backends_[backend].table.empty(); }
  size_t slots() const { return backends_.size(); }
  bool AllDown() const { return up_count_ == 0; }
  // A backend due for a probe at `now`: down, or up but suspect, with no probe in flight (its
  // next probe is then set); or -1.
  int DueProbe(absl::Time now);

 private:
  struct Backend {
    std::vector<InFlight> table;      // 65536 entries; empty in a vacant slot
    std::vector<uint16_t> free_ids;   // any order: each draw picks one at random
    std::deque<uint16_t> quarantine;  // freed, oldest first; back to free_ids after kQuarantinedIds
    bool HasFreeId() const { return !free_ids.empty() || !quarantine.empty(); }
    size_t outstanding = 0;
    bool up = true;
    bool suspect = false;  // up, but a client query timed out: being probed
    bool probe_in_flight = false;
    int failed_probes = 0;  // in a row
    absl::Time next_probe = absl::InfinitePast();
  };
  struct Deadline {
    absl::Time at;
    int backend;
    uint16_t id;
    uint32_t generation;
  };
  // The slots of `fifo` that `moved` marks, moved to the back of `into`, in order.
  static void MoveDeadlines(std::deque<Deadline>& fifo, const std::vector<bool>& moved,
                            std::deque<Deadline>& into);
  void Free(int backend, uint16_t id);
  void MarkAlive(Backend& backend);
  // The oldest deadline of `fifo` that is due and still current, popped; or nullopt.
  std::optional<Deadline> PopDue(std::deque<Deadline>& fifo, absl::Time now);

  BackendsConfig config_;
  std::vector<Backend> backends_;
  std::deque<Deadline> deadlines_;      // final (timeout)
  std::deque<Deadline> udp_deadlines_;  // UDP (udp_timeout), client queries only
  std::deque<Deadline> client_timers_;
  SecureRandom random_;
  size_t in_flight_ = 0;
  size_t up_count_ = 0;
  size_t rotate_ = 0;
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_FRONTEND_BACKENDS_H_
