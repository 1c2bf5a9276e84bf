#include "loadtest/load_runner.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "loadtest/cpu_accounting.h"
#include "loadtest/epoll_client.h"
#include "loadtest/uring_client.h"

namespace onepass::load {
namespace {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

RunResult RunLoad(const LoadConfig& config, const std::atomic<bool>& stop, bool progress) {
  bool terminal = isatty(STDERR_FILENO) == 1;
  double cpu_before = ProcessCpuSeconds();
  // The client: its threads' own schedstat (read by each before it exits), this thread's, and
  // the ksoftirqd of its CPUs.
  CpuMeter client_meter(0, config.cpus);
  const int64_t main_sched_start = ThreadSchedNs();
  std::optional<CpuMeter> server_meter;
  if (config.server_pid > 0) server_meter.emplace(config.server_pid, config.server_cpus);
  client_meter.Start();
  if (server_meter) server_meter->Start();
  // Threads get a moment to start and pin themselves before the common start.
  int64_t start_ns = NowNs() + 20'000'000;
  std::vector<std::unique_ptr<LoadThread>> clients;
  std::vector<std::thread> threads;
  std::atomic<int> finished{0};
  for (int i = 0; i < config.threads; ++i) {
    // --proto dot runs on the epoll core (main.cc sets the engine so).
    if (config.engine == Engine::kUring && config.tls == nullptr) {
      clients.push_back(MakeUringClientThread(config, i, start_ns, &stop));
    } else {
      clients.push_back(MakeEpollClientThread(config, i, start_ns, &stop));
    }
  }
  for (int i = 0; i < config.threads; ++i) {
    threads.emplace_back([&clients, &finished, i] {
      clients[i]->Run();
      finished.fetch_add(1, std::memory_order_release);
    });
  }
  uint64_t last_completed = 0;
  int64_t last_report_ns = start_ns;
  int64_t next_report_ns = start_ns + 1'000'000'000;
  while (finished.load(std::memory_order_acquire) < config.threads) {
    timespec pause = {0, 50'000'000};
    nanosleep(&pause, nullptr);
    int64_t now = NowNs();
    if (!progress || now < next_report_ns) continue;
    ThreadStats merged;
    for (auto& client : clients) merged.Merge(client->Snapshot(), 0);
    double interval_s = (now - last_report_ns) / 1e9;
    uint64_t completed = merged.completed();
    absl::FPrintF(stderr, "%s[%5.1fs] %8.0f conn/s  ok %d  errors %d  p99 %.0f us  in flight %d%s",
                  terminal ? "\r" : "", (now - start_ns) / 1e9,
                  (completed - last_completed) / interval_s, merged.ok, merged.errors_total(),
                  merged.latency.ValueAtPercentile(99) / 1000.0, merged.started - completed,
                  terminal ? "   " : "\n");
    last_completed = completed;
    last_report_ns = now;
    next_report_ns += 1'000'000'000;
  }
  for (std::thread& thread : threads) thread.join();
  const double ns = 1e-9;
  RunResult result;
  int64_t client_sched_ns = ThreadSchedNs() - main_sched_start;
  for (auto& client : clients) client_sched_ns += client->Snapshot().sched_ns;
  result.client_sched_cpu_s = std::max<int64_t>(0, client_sched_ns) * ns;
  result.client_softirq_cpu_s = std::max<int64_t>(0, client_meter.softirq_ns()) * ns;
  if (server_meter) {
    result.server_measured = true;
    result.server_cpu_s = std::max<int64_t>(0, server_meter->process_ns()) * ns;
    result.server_softirq_cpu_s = std::max<int64_t>(0, server_meter->softirq_ns()) * ns;
  }
  if (progress && terminal) absl::FPrintF(stderr, "\n");

  result.requested_rate = config.rate;
  result.tls = config.tls != nullptr;
  result.concurrency = config.concurrency;
  for (auto& client : clients) {
    ThreadStats stats = client->Snapshot();
    result.total.Merge(stats, static_cast<size_t>(config.mismatch_samples));
    result.threads.push_back(std::move(stats));
  }
  result.wall_s = result.total.wall_ns / 1e9;
  result.process_cpu_s = ProcessCpuSeconds() - cpu_before;
  JudgeClientLimits(&result);
  return result;
}

}  // namespace onepass::load
