#include "loadtest/client_loop.h"

#include <sys/prctl.h>

#include <algorithm>

#include "common/cpu_list.h"

namespace onepass::load {

ClientLoop::ClientLoop(const LoadConfig& config, int index, int64_t start_ns,
                       const std::atomic<bool>* stop)
    : config_(config),
      index_(index),
      start_ns_(start_ns),
      stop_(stop),
      timeout_ns_(static_cast<int64_t>(config.timeout_ms) * 1'000'000),
      // Each thread, and each run, its own message IDs.
      requests_(config.protocol, 0x9E3779B97F4A7C15ULL ^ (static_cast<uint64_t>(index + 1) << 32) ^
                                     static_cast<uint64_t>(MonotonicNs())) {
  exchange_config_.queries_per_conn = std::max(config.queries_per_conn, 1);
  exchange_config_.pipeline = std::clamp(config.pipeline, 1, exchange_config_.queries_per_conn);
  exchange_config_.max_response_bytes = config.max_response_bytes;
  exchange_config_.max_samples = static_cast<size_t>(std::max(config.mismatch_samples, 0));
}

void ClientLoop::Prepare() {
  if (!config_.cpus.empty()) {
    const int cpu = config_.cpus[index_ % config_.cpus.size()];
    if (PinCurrentThread(cpu).ok()) stats_.cpu = cpu;
  }
  // Open-loop starts are paced in microseconds: ask for precise wakeups (default slack 50 us).
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

void ClientLoop::MakeSlots(int count) {
  slots_.resize(static_cast<size_t>(count));
  free_slots_.reserve(slots_.size());
  // Popped from the back: slot 0 first.
  for (int i = count - 1; i >= 0; --i) free_slots_.push_back(static_cast<uint32_t>(i));
}

void ClientLoop::Publish() {
  std::lock_guard<std::mutex> lock(published_mutex_);
  published_ = stats_;
}

ThreadStats ClientLoop::Snapshot() {
  std::lock_guard<std::mutex> lock(published_mutex_);
  return published_;
}

}  // namespace onepass::load
