// The run loop of one client thread, the same for every core (epoll_client.h: plain TCP and
// DNS over TLS; uring_client.h): the pinning, the schedule (RunSchedule: closed or open loop,
// the end, how long to wait), the table of connection slots (which are free, each one's
// generation), the --timeout-ms deadlines, the statistics and their publication. A core adds
// only its I/O: how a connection opens, sends and receives. It is a type with these members,
// called on the running thread by Run<Core> (a template: no virtual call per connection or
// event, on the loop that measures the server):
//
//   absl::Status SetUp(int slots);  // before the start: room for `slots` connections
//   void Start(uint32_t slot, int64_t origin_ns, int64_t now_ns);  // a connection, slot taken
//   int64_t Wait(int64_t wait_ns);  // waits for I/O up to wait_ns, handles it; returns the time
//   void Expire(uint32_t slot, int64_t now_ns);   // the slot's connection reached its deadline
//   void Abandon(uint32_t slot, int64_t now_ns);  // the run is over, the slot's still open
//
// The core arms a connection's deadline (ArmDeadline) once it is under way and gives the slot
// back (Release) when the connection has ended. Not thread-safe but for Snapshot().
#ifndef ONEPASS_LOADTEST_CLIENT_LOOP_H_
#define ONEPASS_LOADTEST_CLIENT_LOOP_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "loadtest/exchange.h"
#include "loadtest/load_config.h"
#include "loadtest/run_clock.h"
#include "loadtest/run_schedule.h"
#include "loadtest/thread_stats.h"

namespace onepass::load {

class ClientLoop {
 public:
  // Thread `index`; `start_ns`: the common start of all threads (CLOCK_MONOTONIC); `stop`: set
  // on SIGINT.
  ClientLoop(const LoadConfig& config, int index, int64_t start_ns, const std::atomic<bool>* stop);
  ClientLoop(const ClientLoop&) = delete;
  ClientLoop& operator=(const ClientLoop&) = delete;

  // Runs the thread's share with `core`'s I/O (above) until it is done; call on its own thread.
  template <typename Core>
  void Run(Core& core);

  // A copy of the statistics published so far (a few times a second, and complete after
  // Run()). Thread-safe.
  ThreadStats Snapshot();

  // What a core builds its connections' machines with (exchange.h); they outlive the run.
  const LoadConfig& config() const { return config_; }
  int index() const { return index_; }
  ThreadStats* stats() { return &stats_; }
  RequestSource* requests() { return &requests_; }
  const ExchangeConfig* exchange_config() const { return &exchange_config_; }

  // Whether a connection holds `slot`, and which one: the generation grows at each start, so a
  // core tells a late event of an earlier connection by it.
  bool busy(uint32_t slot) const { return slots_[slot].busy; }
  uint32_t generation(uint32_t slot) const { return slots_[slot].generation; }
  size_t slot_count() const { return slots_.size(); }
  int inflight() const { return inflight_; }  // connections started and not released

  // The connection in `slot` expires --timeout-ms after `now_ns` (Core::Expire).
  void ArmDeadline(uint32_t slot, int64_t now_ns) {
    deadlines_.push_back({now_ns + timeout_ns_, slot, slots_[slot].generation});
  }
  // The connection in `slot` has ended: the slot is free for the next start.
  void Release(uint32_t slot) {
    slots_[slot].busy = false;
    --inflight_;
    free_slots_.push_back(slot);
  }

 private:
  struct Slot {
    uint32_t generation = 0;
    bool busy = false;
  };
  struct Deadline {
    int64_t when_ns;
    uint32_t slot;
    uint32_t generation;
  };

  // Pins the thread (--cpus) and asks for precise timer wakeups.
  void Prepare();
  void MakeSlots(int count);
  // The next free slot, for a connection starting now (inline: once per connection).
  uint32_t Acquire() {
    const uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    Slot& slot = slots_[index];
    ++slot.generation;
    slot.busy = true;
    ++inflight_;
    return index;
  }
  std::optional<int64_t> NextDeadline() const {
    if (deadlines_.empty()) return std::nullopt;
    return deadlines_.front().when_ns;
  }
  template <typename Core>
  void ExpireDeadlines(Core& core, int64_t now_ns);
  void Publish();

  const LoadConfig& config_;
  const int index_;
  const int64_t start_ns_;
  const std::atomic<bool>* stop_;
  const int64_t timeout_ns_;
  ExchangeConfig exchange_config_;
  RequestSource requests_;

  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::deque<Deadline> deadlines_;  // in arming order: all share one timeout, so sorted
  int inflight_ = 0;

  ThreadStats stats_;  // owned by the running thread
  std::mutex published_mutex_;
  ThreadStats published_;  // guarded by published_mutex_
};

template <typename Core>
void ClientLoop::Run(Core& core) {
  Prepare();
  RunSchedule schedule(config_, index_, start_ns_, stop_);
  MakeSlots(schedule.slots());
  if (absl::Status ready = core.SetUp(schedule.slots()); !ready.ok()) {
    stats_.local_error_samples.push_back(std::string(ready.message()));
    Publish();
    return;
  }
  schedule.Begin();  // all threads begin together
  while (true) {
    int64_t now = MonotonicNs();
    const std::optional<int64_t> wait = schedule.Pass(
        now, &stats_,
        [this, &core](int64_t intended_ns, int64_t now_ns) {
          core.Start(Acquire(), intended_ns, now_ns);
        },
        [this] { return inflight_; }, [this] { return !free_slots_.empty(); },
        [this] { return NextDeadline(); });
    if (!wait.has_value()) break;
    now = core.Wait(*wait);
    ExpireDeadlines(core, now);
    if (schedule.PublishDue(now, &stats_)) Publish();
  }
  // Past the hard cap (or never reached): whatever is still open has timed out.
  const int64_t now = MonotonicNs();
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    if (slots_[slot].busy) core.Abandon(slot, now);
  }
  schedule.End(now, &stats_);
  Publish();
}

template <typename Core>
void ClientLoop::ExpireDeadlines(Core& core, int64_t now_ns) {
  while (!deadlines_.empty() && deadlines_.front().when_ns <= now_ns) {
    const Deadline deadline = deadlines_.front();
    deadlines_.pop_front();
    const Slot& slot = slots_[deadline.slot];
    if (slot.busy && slot.generation == deadline.generation) core.Expire(deadline.slot, now_ns);
  }
}

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_CLIENT_LOOP_H_
