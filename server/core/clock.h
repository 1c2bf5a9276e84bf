// The clocks a worker core reads, as one injectable value: the steady clock its deadlines and
// timers run on, and the wall clock handlers are given (RequestContext::now) and upstream
// expiry is judged by. Tests of the core put both on one fake clock.
#ifndef ONEPASS_SERVER_CORE_CLOCK_H_
#define ONEPASS_SERVER_CORE_CLOCK_H_

#include <chrono>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/core/timer_queue.h"

namespace onepass {

struct Clock {
  SteadyTime (*steady)() = &std::chrono::steady_clock::now;
  absl::Time (*wall)() = &absl::Now;
};

inline constexpr Clock kSystemClock{};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_CLOCK_H_
