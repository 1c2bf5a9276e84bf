// Helpers for tests of the operations listener (--metrics-listen) and of peers the tests start
// themselves (Prometheus, HAProxy): GET with curl, read one sample, pick a free port, spawn a
// program and kill it by PID.
#ifndef ONEPASS_TESTS_SUPPORT_METRICS_CLIENT_H_
#define ONEPASS_TESTS_SUPPORT_METRICS_CLIENT_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace onepass::testing {

// GET http://ADDRESS/PATH with curl (5 s at most): "<body>\n<status>", or "curl failed".
std::string HttpGet(const std::string& address, const std::string& path);

// The value of sample `name` (exact, labels included) in a Prometheus exposition, or -1.
double MetricValue(const std::string& exposition, const std::string& name);

// GET /metrics from ADDRESS and the value of `name` in it (-1 when absent or not 200).
double ScrapeValue(const std::string& address, const std::string& name);

// Starts `argv` (argv[0] searched in PATH) with stdout and stderr to `log_path`; -1 on failure.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log_path);
// SIGKILL and reap.
void KillAndReap(pid_t pid);

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_SUPPORT_METRICS_CLIENT_H_
