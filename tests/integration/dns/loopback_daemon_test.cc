// StartOnFreePort: a daemon that lost its port to a test beside it is started again on another
// port, any other failure is returned as it is, and three ports are the most it tries.
#include "tests/integration/dns/loopback_daemon.h"

#include <string>
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

// How many ports StartOnFreePort tries for a daemon whose every start fails with `error`, and
// what it returns.
int PortsTriedFailingWith(const std::string& error, absl::Status* returned) {
  int calls = 0;
  absl::StatusOr<int> started = StartOnFreePort<int>([&](int) -> absl::StatusOr<int> {
    ++calls;
    return absl::FailedPreconditionError(error);
  });
  *returned = started.status();
  return calls;
}

TEST(StartOnFreePortTest, ReturnsAnyOtherFailureAtOnce) {
  absl::Status returned;
  EXPECT_EQ(PortsTriedFailingWith("nsd-checkconf: syntax error", &returned), 1);
  EXPECT_EQ(returned.message(), "nsd-checkconf: syntax error");
}

TEST(StartOnFreePortTest, GivesUpAfterThreePorts) {
  absl::Status returned;
  EXPECT_EQ(PortsTriedFailingWith("nsd: can't bind udp socket: Address already in use", &returned),
            3);
  EXPECT_FALSE(returned.ok());
}

}  // namespace
}  // namespace onepass::dns::testing
