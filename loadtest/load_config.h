// Settings of one load run (one ramp step is one run), filled from the flags in main.cc.
#ifndef ONEPASS_LOADTEST_LOAD_CONFIG_H_
#define ONEPASS_LOADTEST_LOAD_CONFIG_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "loadtest/protocol.h"
#include "loadtest/source_addresses.h"

namespace onepass::load {

class TlsClientContext;

// Which client core drives the sockets (--engine).
enum class Engine { kUring, kEpoll };

struct LoadConfig {
  SocketAddress target;
  const ProtocolClient* protocol = nullptr;  // not owned; shared read-only by every thread

  int threads = 1;
  std::vector<int> cpus;  // thread i pinned to cpus[i % size]; empty: not pinned

  // Exactly one of the two loops: closed (concurrency > 0) or open (rate > 0).
  int concurrency = 0;  // connections in flight in total, started back to back
  double rate = 0;      // new connections per second in total, paced evenly [1/s]

  double duration_s = 10;  // stop starting connections after this long [s]
  uint64_t count = 0;      // stop after this many connections in total; 0: no bound
  int timeout_ms = 1000;   // per connection, from connect to the whole response [ms]

  const TlsClientContext* tls = nullptr;  // --proto dot: not owned; else null (plain TCP)

  Engine engine = Engine::kUring;
  int queries_per_conn = 1;  // queries sent on each connection (uring core)
  int pipeline = 1;          // of those, in flight at once

  // The server whose CPU the summary prints beside the client's (0: none), and the CPUs
  // whose ksoftirqd it is charged (the client is charged those of `cpus`).
  pid_t server_pid = 0;
  std::vector<int> server_cpus;

  std::vector<SocketAddress> sources;  // empty: the kernel picks the source address
  size_t max_response_bytes = 1 << 20;
  int max_inflight_per_thread = 20000;  // open loop: starts wait when this many are open
  int mismatch_samples = 5;             // per thread: details of the first wrong answers kept
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_LOAD_CONFIG_H_
