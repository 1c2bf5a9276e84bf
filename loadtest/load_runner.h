// Runs one load (one ramp step is one load): starts the client threads, prints the live
// progress line once a second, joins them and merges their statistics.
#ifndef ONEPASS_LOADTEST_LOAD_RUNNER_H_
#define ONEPASS_LOADTEST_LOAD_RUNNER_H_

#include <atomic>

#include "loadtest/load_config.h"
#include "loadtest/report.h"

namespace onepass::load {

// `stop` is set by a signal handler: threads stop starting connections and drain.
// `progress`: print a live line to stderr once a second.
RunResult RunLoad(const LoadConfig& config, const std::atomic<bool>& stop, bool progress);

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_LOAD_RUNNER_H_
