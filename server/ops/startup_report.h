// The one start-up report onepassd logs once it serves: everything an operator checks after a
// deploy in one block (version, workers and CPUs, steering and why, listeners, data, limits),
// so that later lines can be only what needs acting on.
#ifndef ONEPASS_SERVER_OPS_STARTUP_REPORT_H_
#define ONEPASS_SERVER_OPS_STARTUP_REPORT_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "handlers/handler_counters.h"
#include "server/server.h"
#include "server/server_config.h"

namespace onepass {

struct StartupFacts {
  std::string version;
  std::string handler;
  std::string metrics_listen;  // empty: off
  std::vector<std::string> proxy_protocol_from;
  absl::Duration data_load_time;
  std::string data_load_phases;  // "read 20ms, parse 750ms, ..." (load_phases.h); may be empty
  std::vector<DataGauge> data;
};

// Lines "key: value", without a trailing newline; includes the descriptor limit
// (getrlimit(RLIMIT_NOFILE)) against what --max-connections may need.
std::vector<std::string> StartupReport(const Server& server, const ServerConfig& config,
                                       const StartupFacts& facts);

}  // namespace onepass

#endif  // ONEPASS_SERVER_OPS_STARTUP_REPORT_H_
