// Waiting on a condition instead of sleeping a fixed time: a test then proves what it names on
// a slow or loaded machine too, and is as fast as the machine allows on a quick one.
#ifndef ONEPASS_TESTS_SUPPORT_WAIT_FOR_H_
#define ONEPASS_TESTS_SUPPORT_WAIT_FOR_H_

#include <functional>

#include "absl/time/time.h"

namespace onepass::testing {

// Evaluates `condition` until it holds (true) or `timeout` has passed (false), every `poll`.
// The condition is evaluated at least once, and once more at the deadline.
bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout,
             absl::Duration poll = absl::Milliseconds(10));

// True if a TCP socket listens on `port` on any local address, IPv4 or IPv6 (from
// /proc/net/tcp and /proc/net/tcp6). Unlike connecting, asking creates no connection the
// server would count.
bool IsListening(int port);

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_SUPPORT_WAIT_FOR_H_
