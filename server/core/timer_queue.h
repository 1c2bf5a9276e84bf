// The timers of one worker thread: every deadline the worker keeps (each parked connection's,
// the accept pause, the drain, the upstream tick, the heartbeat, the upstream sockets') in one
// binary min-heap, written once for every I/O driver. A driver asks for the earliest (Next) to
// bound its wait and runs the expired ones after each round of events (RunExpired); it keeps no
// timers of its own. Arming, moving and cancelling are O(log n) (each Timer knows its place in
// the heap); nothing is rescanned.
//
// Thread-confined to its worker; the clock is the caller's (a test passes a fake one).
#ifndef ONEPASS_SERVER_CORE_TIMER_QUEUE_H_
#define ONEPASS_SERVER_CORE_TIMER_QUEUE_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "absl/time/time.h"

namespace onepass {

using SteadyTime = std::chrono::steady_clock::time_point;

class TimerQueue;

// One timer, owned by its user (embedded where it is needed). Disarmed when destroyed.
class Timer {
 public:
  Timer(TimerQueue* queue, std::function<void()> on_expiry)
      : queue_(queue), on_expiry_(std::move(on_expiry)) {}
  ~Timer() { Cancel(); }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Fires once at `at` (or at the first RunExpired after it); replaces an earlier arming.
  void ArmAt(SteadyTime at);
  void Cancel();
  bool armed() const { return index_ != kNotQueued; }
  SteadyTime at() const { return at_; }

 private:
  friend class TimerQueue;
  static constexpr size_t kNotQueued = static_cast<size_t>(-1);

  TimerQueue* const queue_;
  std::function<void()> on_expiry_;
  SteadyTime at_{};
  size_t index_ = kNotQueued;  // in TimerQueue::heap_
};

class TimerQueue {
 public:
  TimerQueue() = default;
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  // When the earliest armed timer fires; empty when none is armed.
  std::optional<SteadyTime> Next() const;
  // Fires every timer due at `now`, earliest first. A callback may arm or cancel any timer
  // (its own included); one it arms for `now` or before fires in this call too, at most
  // `limit` callbacks in all, so a timer re-armed in the past cannot spin the loop.
  void RunExpired(SteadyTime now, size_t limit = 1 << 16);
  size_t size() const { return heap_.size(); }

 private:
  friend class Timer;
  void Insert(Timer* timer);
  void Remove(Timer* timer);
  void Update(Timer* timer);  // its time moved
  void SiftUp(size_t index);
  void SiftDown(size_t index);
  void Place(Timer* timer, size_t index) {
    heap_[index] = timer;
    timer->index_ = index;
  }

  std::vector<Timer*> heap_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_TIMER_QUEUE_H_
