#include "loadtest/run_schedule.h"

#include <algorithm>

#include "loadtest/cpu_accounting.h"

namespace onepass::load {
namespace {

constexpr int64_t kPublishIntervalNs = 250'000'000;

}  // namespace

RunSchedule::RunSchedule(const LoadConfig& config, int index, int64_t start_ns,
                         const std::atomic<bool>* stop)
    : config_(config),
      start_ns_(start_ns),
      stop_(stop),
      end_ns_(start_ns + static_cast<int64_t>(config.duration_s * 1e9)),
      hard_end_ns_(end_ns_ + static_cast<int64_t>(config.timeout_ms) * 1'000'000 + 1'000'000'000),
      next_publish_ns_(start_ns + kPublishIntervalNs) {
  const int threads = std::max(config.threads, 1);
  share_ = ThreadShare(config.count, index, threads);
  concurrency_ = config.concurrency / threads + (index < config.concurrency % threads ? 1 : 0);
  if (config.rate > 0) pacer_.emplace(config.rate, index, threads, start_ns);
}

int RunSchedule::slots() const {
  return pacer_ ? config_.max_inflight_per_thread : std::max(concurrency_, 1);
}

void RunSchedule::Begin() {
  WaitUntil(start_ns_);
  cpu_start_ = ThreadCpuNs();
  sched_start_ = ThreadSchedNs();
}

bool RunSchedule::Starting(int64_t now_ns, const ThreadStats& stats) {
  if (stop_->load(std::memory_order_relaxed)) stopped_ = true;
  return !stopped_ && now_ns < end_ns_ && stats.started < share_;
}

void RunSchedule::RecordLag(int64_t intended_ns, int64_t now_ns, ThreadStats* stats) const {
  const int64_t lag = std::max<int64_t>(0, now_ns - intended_ns);
  stats->start_lag.Record(static_cast<uint64_t>(lag));
  if (lag > ThreadStats::kLateStartNs) ++stats->late_starts;
}

int64_t RunSchedule::WaitNs(int64_t now_ns, bool starting, bool more_due, bool slot_free,
                            std::optional<int64_t> next_deadline_ns) const {
  if (more_due) return 0;
  int64_t wake_ns = std::min(next_publish_ns_, hard_end_ns_);
  if (next_deadline_ns) wake_ns = std::min(wake_ns, *next_deadline_ns);
  if (starting) {
    wake_ns = std::min(wake_ns, end_ns_);
    if (pacer_ && slot_free) wake_ns = std::min(wake_ns, pacer_->next_ns());
  }
  return std::max<int64_t>(0, wake_ns - now_ns);
}

void RunSchedule::CountTime(int64_t now_ns, ThreadStats* stats) const {
  stats->cpu_ns = ThreadCpuNs() - cpu_start_;
  stats->sched_ns = ThreadSchedNs() - sched_start_;
  stats->wall_ns = now_ns - start_ns_;
}

bool RunSchedule::PublishDue(int64_t now_ns, ThreadStats* stats) {
  if (now_ns < next_publish_ns_) return false;
  CountTime(now_ns, stats);
  next_publish_ns_ += kPublishIntervalNs;
  if (next_publish_ns_ <= now_ns) next_publish_ns_ = now_ns + kPublishIntervalNs;
  return true;
}

void RunSchedule::End(int64_t now_ns, ThreadStats* stats) {
  if (pacer_ && !stopped_ && stats->started < share_) {
    stats->unstarted = std::min(pacer_->PendingBefore(end_ns_), share_ - stats->started);
  }
  CountTime(now_ns, stats);
}

}  // namespace onepass::load
