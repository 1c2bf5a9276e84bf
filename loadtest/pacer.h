// The open-loop schedule: when each connection is MEANT to start, independent of when earlier
// ones finished. Latency is measured from these intended times, so a server that stalls shows
// up in the tail instead of silently slowing the client down (no coordinated omission, as
// wrk2 does it).
#ifndef ONEPASS_LOADTEST_PACER_H_
#define ONEPASS_LOADTEST_PACER_H_

#include <cstdint>

namespace onepass::load {

class Pacer {
 public:
  // Thread `index` of `threads` sharing a total `rate` [1/s] starting at `start_ns`: the k-th
  // start of this thread is at start + (k * threads + index) / rate, so the threads' starts
  // interleave evenly.
  Pacer(double rate, int index, int threads, int64_t start_ns);

  // Intended time of the next start [ns, CLOCK_MONOTONIC].
  int64_t next_ns() const { return next_ns_; }
  // Moves to the following start.
  void Advance();
  // Starts issued so far.
  uint64_t issued() const { return issued_; }
  // How many intended starts fall in [next_ns(), end_ns): the backlog left at the end.
  uint64_t PendingBefore(int64_t end_ns) const;

 private:
  int64_t IntendedTime(uint64_t k) const;

  double period_ns_;  // between two starts of this thread
  double offset_ns_;  // of this thread's first start
  int64_t start_ns_;
  uint64_t issued_ = 0;
  int64_t next_ns_;
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_PACER_H_
