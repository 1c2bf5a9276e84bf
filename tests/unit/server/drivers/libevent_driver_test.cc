// The libevent driver alone, over real loopback listeners: each connection handed to the sink
// with its listener's index, a watch fired on readiness, the accept burst bounding one turn,
// and the drain taking what the accept queues hold before the listeners close.
#include "server/drivers/libevent/libevent_driver.h"

#include <dlfcn.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/server/drivers/recording_sink.h"

namespace {
std::atomic<int> epoll_ctl_calls{0};
}  // namespace

// Every epoll_ctl of this process, counted: libevent's calls into libc resolve to this
// definition first (the executable's symbols come first), which passes each on.
extern "C" int epoll_ctl(int epfd, int op, int fd, struct epoll_event* event) {
  using EpollCtl = int (*)(int, int, int, struct epoll_event*);
  static const EpollCtl next = reinterpret_cast<EpollCtl>(dlsym(RTLD_NEXT, "epoll_ctl"));
  epoll_ctl_calls.fetch_add(1, std::memory_order_relaxed);
  return next(epfd, op, fd, event);
}

namespace onepass {
namespace {

using testing::ConnectTo;
using testing::LoopbackListener;
using testing::RecordingSink;

class LibeventDriverTest : public ::testing::Test {
 protected:
  void Make(int accept_burst) {
    std::vector<ScopedFd> listeners;
    listeners.push_back(LoopbackListener(&ports_[0]));
    listeners.push_back(LoopbackListener(&ports_[1]));
    ASSERT_TRUE(listeners[0].valid() && listeners[1].valid());
    absl::StatusOr<std::unique_ptr<LibeventDriver>> driver =
        LibeventDriver::Create(&timers_, std::move(listeners), accept_burst, /*backlog=*/64);
    ASSERT_TRUE(driver.ok()) << driver.status();
    driver_ = *std::move(driver);
    sink_ = std::make_unique<RecordingSink>(driver_.get());
    driver_->set_sink(sink_.get());
  }
  // Runs the loop until `done` or a second has passed.
  bool RunUntil(const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!done() && std::chrono::steady_clock::now() < until) driver_->RunOnce();
    return done();
  }
  ~LibeventDriverTest() override {
    for (int fd : clients_) close(fd);
  }

  TimerQueue timers_;
  int ports_[2] = {};
  std::unique_ptr<LibeventDriver> driver_;
  std::unique_ptr<RecordingSink> sink_;
  std::vector<int> clients_;
};

TEST_F(LibeventDriverTest, EachConnectionGoesToTheSinkWithItsListener) {
  Make(/*accept_burst=*/64);
  driver_->SetAccepting(true);
  clients_.push_back(ConnectTo(ports_[1]));
  clients_.push_back(ConnectTo(ports_[0]));
  ASSERT_TRUE(RunUntil([&] { return sink_->served.size() == 2; }));
  EXPECT_EQ(sink_->served[0] + sink_->served[1], 1);  // one of each, in either order
}

TEST_F(LibeventDriverTest, AnAcceptBurstBoundsOneTurn) {
  Make(/*accept_burst=*/2);
  for (int i = 0; i < 5; ++i) clients_.push_back(ConnectTo(ports_[0]));
  driver_->SetAccepting(true);
  driver_->RunOnce();  // one readiness of the listener: two accepts
  EXPECT_EQ(sink_->served.size(), 2u);
  ASSERT_TRUE(RunUntil([&] { return sink_->served.size() == 5; }));
}

TEST_F(LibeventDriverTest, AWatchFiresOnReadiness) {
  Make(64);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  int fired = 0;
  FdWatch watch(driver_.get(), [&] { ++fired; });
  watch.Arm(fds[0], Interest::kReadable);
  driver_->RunOnce();
  EXPECT_EQ(fired, 0);
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  ASSERT_TRUE(RunUntil([&] { return fired == 1; }));
  EXPECT_FALSE(watch.armed());  // one-shot
  close(fds[0]);
  close(fds[1]);
}

// A kept-open connection's watch (WorkerCore's slots: disarmed before their fd closes), armed
// again after each request: one epoll_ctl ADD for its first wait, none between requests, one
// DEL when it is disarmed, where a plain one-shot watch costs a DEL and an ADD per request.
TEST_F(LibeventDriverTest, AWatchDisarmedBeforeCloseStaysRegisteredBetweenItsFires) {
  Make(64);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  int fired = 0;
  FdWatch watch(driver_.get(), [&] {
    ++fired;
    char byte;
    ASSERT_EQ(read(fds[0], &byte, 1), 1);
    watch.Arm(fds[0], Interest::kReadable);  // the connection waits for its next request
  });
  watch.set_disarms_before_close();
  const int before = epoll_ctl_calls.load();
  watch.Arm(fds[0], Interest::kReadable);
  for (int request = 1; request <= 3; ++request) {
    ASSERT_EQ(write(fds[1], "x", 1), 1);
    ASSERT_TRUE(RunUntil([&] { return fired == request; }));
    EXPECT_TRUE(watch.armed());
  }
  EXPECT_EQ(epoll_ctl_calls.load() - before, 1);  // the first ADD only
  watch.Disarm();
  EXPECT_EQ(epoll_ctl_calls.load() - before, 2);  // and its DEL
  close(fds[0]);
  // The fd's number, taken by the next socket, is that socket's: it fires.
  int next[2];
  ASSERT_EQ(pipe(next), 0);
  int next_fired = 0;
  FdWatch other(driver_.get(), [&] { ++next_fired; });
  other.set_disarms_before_close();
  other.Arm(next[0], Interest::kReadable);
  ASSERT_EQ(write(next[1], "y", 1), 1);
  EXPECT_TRUE(RunUntil([&] { return next_fired == 1; }));
  other.Disarm();
  close(next[0]);
  close(next[1]);
  close(fds[1]);
}

// Still one-shot: fired and not armed again, it is not called again though its fd stays
// ready, and its registration goes at that next readiness.
TEST_F(LibeventDriverTest, AFiredWatchNotArmedAgainIsNotCalledAgain) {
  Make(64);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  int fired = 0;
  FdWatch watch(driver_.get(), [&] { ++fired; });  // reads nothing: the pipe stays readable
  watch.set_disarms_before_close();
  watch.Arm(fds[0], Interest::kReadable);
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  ASSERT_TRUE(RunUntil([&] { return fired == 1; }));
  EXPECT_FALSE(watch.armed());
  const int before = epoll_ctl_calls.load();
  for (int i = 0; i < 5; ++i) driver_->RunOnce();
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(epoll_ctl_calls.load() - before, 1);  // the DEL at the unasked readiness
  // Armed again (another interest: the fd's writable end), it fires for that.
  watch.Arm(fds[1], Interest::kWritable);
  EXPECT_TRUE(RunUntil([&] { return fired == 2; }));
  watch.Disarm();
  close(fds[0]);
  close(fds[1]);
}

// Armed again while armed (the DNS frontend's connection, its read watch kept while it waits
// for the upstream's answer, parked again after writing it): the same fd and interest cost
// nothing; another interest replaces the first.
TEST_F(LibeventDriverTest, ArmingAnArmedWatchReplacesItsInterest) {
  Make(64);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  int fired = 0;
  FdWatch watch(driver_.get(), [&] { ++fired; });
  watch.set_disarms_before_close();
  watch.Arm(fds[0], Interest::kReadable);
  const int before = epoll_ctl_calls.load();
  watch.Arm(fds[0], Interest::kReadable);
  EXPECT_EQ(epoll_ctl_calls.load(), before);
  watch.Arm(fds[1], Interest::kWritable);  // the pipe's writable end: ready now
  ASSERT_TRUE(RunUntil([&] { return fired == 1; }));
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  for (int i = 0; i < 3; ++i) driver_->RunOnce();
  EXPECT_EQ(fired, 1);  // the read interest was replaced, and the write one was one-shot
  watch.Disarm();
  close(fds[0]);
  close(fds[1]);
}

TEST_F(LibeventDriverTest, TheDrainTakesWhatIsQueuedThenCloses) {
  Make(64);
  for (int i = 0; i < 3; ++i) clients_.push_back(ConnectTo(ports_[i % 2]));
  driver_->CloseListeners(/*take_queued=*/true);
  EXPECT_EQ(sink_->served.size(), 3u);
  EXPECT_TRUE(sink_->listeners_closed);
  EXPECT_TRUE(driver_->listener_fds().empty());
}

}  // namespace
}  // namespace onepass
