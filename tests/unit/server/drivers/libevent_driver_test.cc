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

#include "common/scoped_fd.h"
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

// A pipe, the socket stand-in of the watch tests: its ends closed after the watches declared
// below it are gone (each disarmed first, as the promise of set_disarms_before_close asks).
struct Pipe {
  Pipe() {
    int fds[2] = {-1, -1};
    EXPECT_EQ(pipe(fds), 0);
    read_end.Reset(fds[0]);
    write_end.Reset(fds[1]);
  }
  int in() const { return read_end.get(); }
  int out() const { return write_end.get(); }
  void Write() const { EXPECT_EQ(write(out(), "x", 1), 1); }
  ScopedFd read_end, write_end;
};

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
  Pipe p;
  int fired = 0;
  FdWatch watch(driver_.get(), [&] { ++fired; });
  watch.Arm(p.in(), Interest::kReadable);
  driver_->RunOnce();
  EXPECT_EQ(fired, 0);
  p.Write();
  ASSERT_TRUE(RunUntil([&] { return fired == 1; }));
  EXPECT_FALSE(watch.armed());  // one-shot
}

// A kept-open connection's watch (WorkerCore's slots: disarmed before their fd closes), armed
// again after each request: one epoll_ctl ADD for its first wait, none between requests, one
// DEL when it is disarmed, where a plain one-shot watch costs a DEL and an ADD per request.
TEST_F(LibeventDriverTest, AWatchDisarmedBeforeCloseStaysRegisteredBetweenItsFires) {
  Make(64);
  Pipe p;
  int fired = 0;
  FdWatch watch(driver_.get(), [&] {
    ++fired;
    char byte;
    ASSERT_EQ(read(p.in(), &byte, 1), 1);
    watch.Arm(p.in(), Interest::kReadable);  // the connection waits for its next request
  });
  watch.set_disarms_before_close();
  const int before = epoll_ctl_calls.load();
  watch.Arm(p.in(), Interest::kReadable);
  for (int request = 1; request <= 3; ++request) {
    p.Write();
    ASSERT_TRUE(RunUntil([&] { return fired == request; }));
    EXPECT_TRUE(watch.armed());
  }
  EXPECT_EQ(epoll_ctl_calls.load() - before, 1);  // the first ADD only
  watch.Disarm();
  EXPECT_EQ(epoll_ctl_calls.load() - before, 2);  // and its DEL
  // The fd's number, taken by the next socket, is that socket's: it fires.
  const int number = p.in();
  p.read_end.Reset();
  Pipe next;
  ASSERT_EQ(next.in(), number);  // the lowest free number, as accept4 would take it
  int next_fired = 0;
  FdWatch other(driver_.get(), [&] { ++next_fired; });
  other.set_disarms_before_close();
  other.Arm(next.in(), Interest::kReadable);
  next.Write();
  EXPECT_TRUE(RunUntil([&] { return next_fired == 1; }));
}

// Still one-shot: fired and not armed again, it is not called again though its fd stays
// ready, and its registration goes at that next readiness.
TEST_F(LibeventDriverTest, AFiredWatchNotArmedAgainIsNotCalledAgain) {
  Make(64);
  Pipe p;
  int fired = 0;
  FdWatch watch(driver_.get(), [&] { ++fired; });  // reads nothing: the pipe stays readable
  watch.set_disarms_before_close();
  watch.Arm(p.in(), Interest::kReadable);
  p.Write();
  ASSERT_TRUE(RunUntil([&] { return fired == 1; }));
  EXPECT_FALSE(watch.armed());
  const int before = epoll_ctl_calls.load();
  for (int i = 0; i < 5; ++i) driver_->RunOnce();
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(epoll_ctl_calls.load() - before, 1);  // the DEL at the unasked readiness
  // Armed again (another interest: the fd's writable end), it fires for that.
  watch.Arm(p.out(), Interest::kWritable);
  EXPECT_TRUE(RunUntil([&] { return fired == 2; }));
}

// Armed again while armed (the DNS frontend's connection, its read watch kept while it waits
// for the upstream's answer, parked again after writing it): the same fd and interest cost
// nothing; another interest replaces the first.
TEST_F(LibeventDriverTest, ArmingAnArmedWatchReplacesItsInterest) {
  Make(64);
  Pipe p;
  int fired = 0;
  FdWatch watch(driver_.get(), [&] { ++fired; });
  watch.set_disarms_before_close();
  watch.Arm(p.in(), Interest::kReadable);
  const int before = epoll_ctl_calls.load();
  watch.Arm(p.in(), Interest::kReadable);
  EXPECT_EQ(epoll_ctl_calls.load(), before);
  watch.Arm(p.out(), Interest::kWritable);  // the pipe's writable end: ready now
  ASSERT_TRUE(RunUntil([&] { return fired == 1; }));
  p.Write();
  for (int i = 0; i < 3; ++i) driver_->RunOnce();
  EXPECT_EQ(fired, 1);  // the read interest was replaced, and the write one was one-shot
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
