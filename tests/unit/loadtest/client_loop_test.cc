// The run loop every client core shares (loadtest/client_loop.h), driven through a scripted
// core that does no I/O: connections that end at the next wait, that never end (their
// deadline ends them), or that refuse to end (the hard end abandons them); a slot reused
// before its old deadline; a core that cannot set up. The clock is the real one: the runs are
// short.
#include "loadtest/client_loop.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "loadtest/load_config.h"
#include "loadtest/run_clock.h"
#include "loadtest/thread_stats.h"

namespace onepass::load {
namespace {

// What a connection of the scripted core does once started.
enum class Script {
  kEndAtNextWait,  // answered: ok at the next Wait
  kHang,           // never answers: its deadline ends it
  kStubborn,       // never answers, and Expire only re-arms its deadline (as a missed cancel)
};

class ScriptedCore {
 public:
  ScriptedCore(ClientLoop* loop, std::vector<Script> scripts)
      : loop_(loop), scripts_(std::move(scripts)) {}

  // The core's side of ClientLoop::Run.
  absl::Status SetUp(int slots) {
    slots_ = slots;
    return setup_error_;
  }
  void Start(uint32_t slot, int64_t origin_ns, int64_t now_ns) {
    EXPECT_LT(slot, static_cast<uint32_t>(slots_));
    EXPECT_TRUE(loop_->busy(slot));
    ++loop_->stats()->started;
    const Script script = scripts_[std::min(starts_.size(), scripts_.size() - 1)];
    starts_.push_back({slot, loop_->generation(slot), now_ns});
    max_inflight_ = std::max(max_inflight_, loop_->inflight());
    loop_->ArmDeadline(slot, now_ns);
    if (script == Script::kEndAtNextWait) to_end_.push_back(slot);
    script_of_[slot] = script;
  }
  int64_t Wait(int64_t wait_ns) {
    if (to_end_.empty()) {
      timespec pause = {0, static_cast<long>(std::min<int64_t>(wait_ns, 1'000'000))};
      nanosleep(&pause, nullptr);
    }
    for (uint32_t slot : to_end_) {
      ++loop_->stats()->ok;
      loop_->Release(slot);
    }
    to_end_.clear();
    return MonotonicNs();
  }
  void Expire(uint32_t slot, int64_t now_ns) {
    expired_.push_back({slot, loop_->generation(slot), now_ns});
    if (script_of_[slot] == Script::kStubborn) {
      loop_->ArmDeadline(slot, now_ns);
      return;
    }
    ++loop_->stats()->errors[static_cast<int>(ErrorKind::kTimeout)];
    loop_->Release(slot);
  }
  void Abandon(uint32_t slot, int64_t now_ns) { abandoned_.push_back(slot); }

  struct Event {
    uint32_t slot;
    uint32_t generation;
    int64_t when_ns;
  };
  absl::Status setup_error_;
  int slots_ = 0;
  int max_inflight_ = 0;
  std::vector<Event> starts_;
  std::vector<Event> expired_;
  std::vector<uint32_t> abandoned_;

 private:
  ClientLoop* loop_;
  std::vector<Script> scripts_;
  std::vector<uint32_t> to_end_;
  std::map<uint32_t, Script> script_of_;
};

LoadConfig ClosedLoop(int concurrency, uint64_t count, int timeout_ms) {
  LoadConfig config;
  config.concurrency = concurrency;
  config.count = count;
  config.timeout_ms = timeout_ms;
  config.duration_s = 10;
  return config;
}

struct LoopRun {
  LoopRun(const LoadConfig& given, std::vector<Script> scripts)
      : config(given), loop(config, 0, MonotonicNs(), &stop), core(&loop, std::move(scripts)) {}
  // Kept here: the loop holds a reference to its configuration for as long as it runs.
  LoadConfig config;
  std::atomic<bool> stop{false};
  ClientLoop loop;
  ScriptedCore core;
};

TEST(ClientLoopTest, ClosedLoopStartsItsShareNeverMoreThanItsConcurrency) {
  LoopRun run(ClosedLoop(4, 100, 1000), {Script::kEndAtNextWait});
  run.loop.Run(run.core);
  const ThreadStats stats = run.loop.Snapshot();
  EXPECT_EQ(stats.started, 100u);
  EXPECT_EQ(stats.ok, 100u);
  EXPECT_EQ(run.core.slots_, 4);
  EXPECT_EQ(run.core.max_inflight_, 4);
  EXPECT_EQ(run.loop.inflight(), 0);
  EXPECT_TRUE(run.core.expired_.empty());
  EXPECT_TRUE(run.core.abandoned_.empty());
  // Each start in a slot is a new generation of it.
  std::map<uint32_t, uint32_t> last_generation;
  for (const ScriptedCore::Event& start : run.core.starts_) {
    EXPECT_GT(start.generation, last_generation[start.slot]);
    last_generation[start.slot] = start.generation;
  }
}

TEST(ClientLoopTest, AConnectionThatNeverEndsIsExpiredAtItsDeadline) {
  LoopRun run(ClosedLoop(3, 3, 20), {Script::kHang});
  run.loop.Run(run.core);
  ASSERT_EQ(run.core.starts_.size(), 3u);
  ASSERT_EQ(run.core.expired_.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(run.core.expired_[i].slot, run.core.starts_[i].slot);
    EXPECT_GE(run.core.expired_[i].when_ns - run.core.starts_[i].when_ns, 20'000'000);
  }
  EXPECT_EQ(run.loop.Snapshot().errors[static_cast<int>(ErrorKind::kTimeout)], 3u);
  EXPECT_TRUE(run.core.abandoned_.empty());
}

TEST(ClientLoopTest, ASlotReusedBeforeItsOldDeadlineKeepsItsNewOne) {
  // One slot: the first connection ends at once, the second hangs in the same slot. The first
  // one's deadline passes first and must not end the second early.
  LoopRun run(ClosedLoop(1, 2, 50), {Script::kEndAtNextWait, Script::kHang});
  run.loop.Run(run.core);
  ASSERT_EQ(run.core.starts_.size(), 2u);
  EXPECT_EQ(run.core.starts_[0].slot, run.core.starts_[1].slot);
  ASSERT_EQ(run.core.expired_.size(), 1u);
  EXPECT_EQ(run.core.expired_[0].generation, run.core.starts_[1].generation);
  EXPECT_GE(run.core.expired_[0].when_ns - run.core.starts_[1].when_ns, 50'000'000);
}

TEST(ClientLoopTest, PastTheHardEndWhatIsStillOpenIsAbandoned) {
  // The hard end: --duration + --timeout-ms + 1 s.
  LoadConfig config = ClosedLoop(2, 0, 10);
  config.duration_s = 0.05;
  LoopRun run(config, {Script::kStubborn});
  const int64_t start = MonotonicNs();
  run.loop.Run(run.core);
  EXPECT_GE(MonotonicNs() - start, 1'000'000'000);
  EXPECT_EQ(run.core.starts_.size(), 2u);
  EXPECT_GT(run.core.expired_.size(), 2u);  // re-armed, again and again
  EXPECT_EQ(run.core.abandoned_.size(), 2u);
}

TEST(ClientLoopTest, ACoreThatCannotSetUpStartsNothingAndSaysWhy) {
  LoopRun run(ClosedLoop(2, 10, 1000), {Script::kEndAtNextWait});
  run.core.setup_error_ = absl::UnavailableError("io_uring: not here");
  run.loop.Run(run.core);
  const ThreadStats stats = run.loop.Snapshot();
  EXPECT_EQ(stats.started, 0u);
  ASSERT_EQ(stats.local_error_samples.size(), 1u);
  EXPECT_EQ(stats.local_error_samples[0], "io_uring: not here");
}

TEST(ClientLoopTest, StopEndsTheStartsAndTheRunDrains) {
  LoopRun run(ClosedLoop(2, 0, 1000), {Script::kEndAtNextWait});
  run.stop = true;  // SIGINT before the start
  run.loop.Run(run.core);
  EXPECT_EQ(run.loop.Snapshot().started, 0u);
}

}  // namespace
}  // namespace onepass::load
