// The ring driver alone, over a real loopback listener (a build with ONEPASS_IO_URING): the
// entry path a worker core sees from it (the accept and the connection's first recv made by
// the ring, handed over with ConnectionSink::BeginReceive and Received), the last send queued
// with the close linked after it (FinalSendQueue), --accept-burst accepts armed, and the drain.
#include "server/drivers/uring/uring_driver.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "server/core/deadline.h"
#include "tests/unit/server/drivers/recording_sink.h"

namespace onepass {
namespace {

using testing::ConnectTo;
using testing::LoopbackListener;
using testing::RecordingSink;

// What a client that sends `request` then reads until EOF gets.
std::string Exchange(int port, const std::string& request) {
  const int fd = ConnectTo(port);
  if (fd < 0) return "(connect failed)";
  timeval timeout{.tv_sec = 5, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  (void)send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string reply;
  char buffer[256];
  for (ssize_t n; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) reply.append(buffer, n);
  close(fd);
  return reply;
}

TEST(UringDriverTest, TheRingsOwnRecvAndTheLastSendLinkedWithTheClose) {
  ASSERT_TRUE(UringDriverBuilt()) << "this test is built only with ONEPASS_IO_URING";
  ASSERT_TRUE(ProbeUring().ok()) << ProbeUring();
  int port = 0;
  std::vector<ScopedFd> listeners;
  listeners.push_back(LoopbackListener(&port));
  // As onepassd's listeners: a connection is accepted once its first bytes are there, so the
  // ring's first recv (MSG_DONTWAIT) finds them.
  const int defer = 1;
  ASSERT_EQ(setsockopt(listeners[0].get(), IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof(defer)),
            0);
  TimerQueue timers;
  absl::StatusOr<std::unique_ptr<IoDriver>> made =
      MakeUringDriver(&timers, std::move(listeners), 0, {.accept_burst = 4, .backlog = 64});
  ASSERT_TRUE(made.ok()) << made.status();
  IoDriver& driver = **made;
  RecordingSink sink(&driver);
  driver.set_sink(&sink);
  ASSERT_GT(driver.receives_in_flight(), 0);
  int answered = 0;
  sink.on_received = [&](int fd, ssize_t result) {
    const std::string answer = "pong:" + std::to_string(result);
    FinalSendQueue* queue = driver.final_send();
    const bool queued =
        queue != nullptr &&
        queue->QueueFinalSend(fd, {reinterpret_cast<const uint8_t*>(answer.data()), answer.size()});
    EXPECT_TRUE(queued);
    if (!queued) driver.CloseSocket(fd, false);
    if (++answered == 3) driver.CloseListeners(/*take_queued=*/true);
  };
  // A backstop: the loop ends within five seconds whatever happens.
  Timer backstop(&timers, [&] { driver.Stop(); });
  backstop.ArmAt(After(std::chrono::steady_clock::now(), absl::Seconds(5)));
  std::vector<std::string> replies(3);
  std::thread clients([&] {
    for (int i = 0; i < 3; ++i) replies[i] = Exchange(port, "ping" + std::string(i, '!'));
  });
  driver.SetAccepting(true);
  // Stops once the listeners are closed (after the third answer), looking every 10 ms.
  std::function<void()> check;
  Timer checker(&timers, [&] { check(); });
  check = [&] {
    if (sink.listeners_closed) {
      driver.Stop();
    } else {
      checker.ArmAt(After(std::chrono::steady_clock::now(), absl::Milliseconds(10)));
    }
  };
  checker.ArmAt(After(std::chrono::steady_clock::now(), absl::Milliseconds(10)));
  ASSERT_TRUE(driver.Run().ok());
  clients.join();
  EXPECT_EQ(replies[0], "pong:4");
  EXPECT_EQ(replies[1], "pong:5");
  EXPECT_EQ(replies[2], "pong:6");
  EXPECT_EQ(sink.bytes, "pingping!ping!!");
  EXPECT_TRUE(sink.listeners_closed);
  driver.EndOnThread();
}

}  // namespace
}  // namespace onepass
