#include "tests/support/wait_for.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace onepass::testing {
namespace {

TEST(WaitForTest, ReturnsOnceTheConditionHolds) {
  int calls = 0;
  EXPECT_TRUE(WaitFor([&] { return ++calls == 3; }, absl::Seconds(5), absl::Milliseconds(1)));
  EXPECT_EQ(calls, 3);
}

TEST(WaitForTest, GivesUpAtTheDeadline) {
  const absl::Time start = absl::Now();
  EXPECT_FALSE(WaitFor([] { return false; }, absl::Milliseconds(50)));
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(50));
  EXPECT_LT(took, absl::Seconds(5));
}

TEST(WaitForTest, IsListeningSeesAListenerComeAndGo) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int port = ntohs(address.sin_port);
  EXPECT_FALSE(IsListening(port)) << "bound, not listening yet";
  ASSERT_EQ(listen(fd, 1), 0);
  EXPECT_TRUE(IsListening(port));
  close(fd);
  EXPECT_FALSE(IsListening(port));
}

}  // namespace
}  // namespace onepass::testing
