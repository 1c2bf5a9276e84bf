// StartOnFreePort: a daemon that lost its port to a test beside it is started again on another
// port, any other failure is returned as it is, and three ports are the most it tries.
#include "tests/integration/dns/loopback_daemon.h"

#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace onepass::dns::testing {
namespace {

TEST(StartOnFreePortTest, StartsAgainOnAnotherPortWhenThePortWasTaken) {
  std::vector<int> ports;
  absl::StatusOr<int> started = StartOnFreePort<int>([&](int port) -> absl::StatusOr<int> {
    ports.push_back(port);
    if (ports.size() == 1) {
      return absl::FailedPreconditionError("unbound exited: error: bind: address already in use");
    }
    return port;
  });
  ASSERT_TRUE(started.ok()) << started.status();
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(*started, ports[1]);
  EXPECT_NE(ports[0], ports[1]);
}

TEST(StartOnFreePortTest, ReturnsAnyOtherFailureAtOnce) {
  int calls = 0;
  absl::StatusOr<int> started = StartOnFreePort<int>([&](int) -> absl::StatusOr<int> {
    ++calls;
    return absl::FailedPreconditionError("nsd-checkconf: syntax error");
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(started.status().message(), "nsd-checkconf: syntax error");
}

TEST(StartOnFreePortTest, GivesUpAfterThreePorts) {
  int calls = 0;
  absl::StatusOr<int> started = StartOnFreePort<int>([&](int) -> absl::StatusOr<int> {
    ++calls;
    return absl::FailedPreconditionError("nsd: can't bind udp socket: Address already in use");
  });
  EXPECT_EQ(calls, 3);
  EXPECT_FALSE(started.ok());
}

}  // namespace
}  // namespace onepass::dns::testing
