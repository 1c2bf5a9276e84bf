// The schedule of one client thread's run, the same for both cores (the run loop of
// client_loop.h): when its connections start (closed loop: back to back up to its share of
// --concurrency; open loop: at the Pacer's intended times while a slot is free), how long its
// loop may wait, when it ends, and what it records of the starts (lag, late starts, waits for a
// slot, starts never made) and of its own CPU and wall time.
#ifndef ONEPASS_LOADTEST_RUN_SCHEDULE_H_
#define ONEPASS_LOADTEST_RUN_SCHEDULE_H_

#include <atomic>
#include <cstdint>
#include <optional>

#include "loadtest/load_config.h"
#include "loadtest/pacer.h"
#include "loadtest/run_clock.h"
#include "loadtest/thread_stats.h"

namespace onepass::load {

class RunSchedule {
 public:
  // Open loop: at most this many starts per pass, so a late client still reaps its answers.
  static constexpr int kMaxStartsPerPass = 256;

  // Thread `index`; `start_ns`: the threads' common start; `stop`: set on SIGINT.
  RunSchedule(const LoadConfig& config, int index, int64_t start_ns, const std::atomic<bool>* stop);

  bool open_loop() const { return pacer_.has_value(); }
  // Connection slots the thread needs: --max-inflight (open loop) or its concurrency.
  int slots() const;

  // Waits for the common start and begins counting CPU.
  void Begin();

  // Whether starts remain at `now_ns` (not stopped, before the end, share not done).
  bool Starting(int64_t now_ns, const ThreadStats& stats);

  // Starts what is due: start(intended_ns, now_ns) for each, while inflight() is below the
  // concurrency (closed loop) or slot_free() (open loop; a full table is counted in
  // inflight_cap_waits). Returns whether more are due at once (the pass's limit was reached).
  template <typename Start, typename Inflight, typename SlotFree>
  bool StartDue(int64_t now_ns, ThreadStats* stats, Start start, Inflight inflight,
                SlotFree slot_free) {
    int started_now = 0;
    if (pacer_) {
      while (pacer_->next_ns() <= now_ns && stats->started < share_) {
        if (started_now == kMaxStartsPerPass) return true;
        if (!slot_free()) {
          ++stats->inflight_cap_waits;
          return false;
        }
        RecordLag(pacer_->next_ns(), now_ns, stats);
        start(pacer_->next_ns(), now_ns);
        pacer_->Advance();
        ++started_now;
      }
      return false;
    }
    while (inflight() < concurrency_ && stats->started < share_ && slot_free() &&
           started_now < kMaxStartsPerPass) {
      start(now_ns, now_ns);
      ++started_now;
      now_ns = MonotonicNs();
    }
    return inflight() < concurrency_ && stats->started < share_ && slot_free();
  }

  // One pass of a thread's loop up to its wait: starts what is due (StartDue) and returns how
  // long the loop may wait [ns] (WaitNs), or nullopt when the loop is over (nothing left to
  // start and none in flight, or past the hard end). `next_deadline()`: the earliest deadline
  // of a connection in flight, or nullopt.
  template <typename Start, typename Inflight, typename SlotFree, typename NextDeadline>
  std::optional<int64_t> Pass(int64_t now_ns, ThreadStats* stats, Start start, Inflight inflight,
                              SlotFree slot_free, NextDeadline next_deadline) {
    const bool starting = Starting(now_ns, *stats);
    bool more_due = false;
    if (starting) {
      more_due = StartDue(now_ns, stats, start, inflight, slot_free);
    } else if (inflight() == 0) {
      return std::nullopt;
    }
    if (PastHardEnd(now_ns)) return std::nullopt;
    return WaitNs(now_ns, starting, more_due, slot_free(), next_deadline());
  }

  // How long the loop may wait from `now_ns` [ns]: until the next publication, deadline,
  // start or the end; 0 when more starts are due.
  int64_t WaitNs(int64_t now_ns, bool starting, bool more_due, bool slot_free,
                 std::optional<int64_t> next_deadline_ns) const;
  // Every connection ends by its own deadline; this cap only guards against a bug.
  bool PastHardEnd(int64_t now_ns) const { return now_ns >= hard_end_ns_; }

  // The CPU and wall time so far into `stats`; true when a publication is due.
  bool PublishDue(int64_t now_ns, ThreadStats* stats);
  // At the end: the starts never made (open loop), the final CPU and wall time.
  void End(int64_t now_ns, ThreadStats* stats);

 private:
  void RecordLag(int64_t intended_ns, int64_t now_ns, ThreadStats* stats) const;
  void CountTime(int64_t now_ns, ThreadStats* stats) const;

  const LoadConfig& config_;
  const int64_t start_ns_;
  const std::atomic<bool>* stop_;
  const int64_t end_ns_;
  const int64_t hard_end_ns_;
  uint64_t share_;
  int concurrency_;
  std::optional<Pacer> pacer_;
  bool stopped_ = false;
  int64_t next_publish_ns_;
  int64_t cpu_start_ = 0;
  int64_t sched_start_ = 0;
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_RUN_SCHEDULE_H_
