// The deadline arithmetic of parked connections (server/core/deadline.h) on a fake clock: no sleep,
// no socket. Each test parks a connection as the worker would and checks when its wait ends.
#include "server/core/deadline.h"

#include <chrono>

#include "gtest/gtest.h"

namespace onepass {
namespace {

class DeadlineTest : public ::testing::Test {
 protected:
  DeadlineTest() {
    config_.read_timeout = absl::Milliseconds(2000);
    config_.write_timeout = absl::Milliseconds(3000);
    config_.linger = absl::Milliseconds(500);
    config_.keepalive = absl::ZeroDuration();
  }

  // The fake clock: `ms` after an arbitrary start.
  static SteadyTime At(int ms) { return kStart + std::chrono::milliseconds(ms); }

  // Parks `connection_` at `now` the way Worker::Park does: computes, then keeps the result.
  SteadyTime Park(int now_ms) {
    const ParkDeadline park = ComputeParkDeadline(connection_, At(now_ms), config_, load_);
    connection_.deadlines = park.deadlines;
    connection_.message_consumed = false;  // taken by the park
    return park.at;
  }

  static inline const SteadyTime kStart = SteadyTime{} + std::chrono::hours(1);
  CoreConfig config_;
  WorkerLoad load_{.parked = 1, .max_connections = 100};
  ParkedConnection connection_;
};

TEST_F(DeadlineTest, ReadDeadlineIsPerMessageNotPerByte) {
  connection_.state = ConnectionState::kReading;
  EXPECT_EQ(Park(0), At(2000));
  // More bytes of the same request arrive: the deadline does not move (slowloris is cut).
  connection_.input_pending = true;
  EXPECT_EQ(Park(700), At(2000));
  EXPECT_EQ(Park(1900), At(2000));
  EXPECT_FALSE(connection_.deadlines.read_is_idle);
}

TEST_F(DeadlineTest, ConsumedRequestRestartsTheReadDeadline) {
  connection_.state = ConnectionState::kReading;
  EXPECT_EQ(Park(0), At(2000));
  // A whole request consumed (pipelined: the next one is already partly there).
  connection_.message_consumed = true;
  connection_.input_pending = true;
  EXPECT_EQ(Park(1500), At(3500));
}

TEST_F(DeadlineTest, KeepaliveIdleHasItsOwnDeadline) {
  config_.keepalive = absl::Milliseconds(10000);
  connection_.state = ConnectionState::kReading;
  EXPECT_EQ(Park(0), At(2000));  // the first request: read timeout
  // Answered, nothing buffered: idle until the next request, for --keepalive-ms.
  connection_.idle = true;
  connection_.message_consumed = true;
  EXPECT_EQ(Park(100), At(10100));
  EXPECT_TRUE(connection_.deadlines.read_is_idle);
}

TEST_F(DeadlineTest, IdleWithoutKeepaliveGetsTheReadTimeout) {
  connection_.state = ConnectionState::kReading;
  connection_.idle = true;
  connection_.message_consumed = true;
  EXPECT_EQ(Park(100), At(2100));
  EXPECT_FALSE(connection_.deadlines.read_is_idle);
}

TEST_F(DeadlineTest, NextRequestDuringKeepaliveGetsTheReadTimeout) {
  config_.keepalive = absl::Milliseconds(10000);
  connection_.state = ConnectionState::kReading;
  connection_.idle = true;
  connection_.message_consumed = true;
  EXPECT_EQ(Park(0), At(10000));
  // The first bytes of the next request: it must be whole within the read timeout.
  connection_.idle = false;
  connection_.input_pending = true;
  EXPECT_EQ(Park(1000), At(3000));
  EXPECT_FALSE(connection_.deadlines.read_is_idle);
  // From then on it is a per-message deadline again.
  EXPECT_EQ(Park(2500), At(3000));
}

TEST_F(DeadlineTest, RequestBegunNearTheEndOfKeepaliveKeepsTheSoonerDeadline) {
  config_.keepalive = absl::Milliseconds(1000);
  connection_.state = ConnectionState::kReading;
  connection_.idle = true;
  connection_.message_consumed = true;
  EXPECT_EQ(Park(0), At(1000));
  connection_.idle = false;
  connection_.input_pending = true;
  EXPECT_EQ(Park(900), At(1000));  // min(idle deadline, now + read timeout)
}

TEST_F(DeadlineTest, BusyWorkerShortensKeepalive) {
  config_.keepalive = absl::Milliseconds(10000);
  connection_.state = ConnectionState::kReading;
  connection_.idle = true;
  // Exactly half the pool parked: not busy yet.
  load_ = {.parked = 50, .max_connections = 100};
  connection_.message_consumed = true;
  EXPECT_EQ(Park(0), At(10000));
  // More than half: kBusyKeepalive.
  load_ = {.parked = 51, .max_connections = 100};
  connection_.message_consumed = true;
  EXPECT_EQ(Park(0), At(0) + absl::ToChronoMilliseconds(kBusyKeepalive));
  EXPECT_TRUE(connection_.deadlines.read_is_idle);
  // A keepalive already shorter than that stays as it is.
  config_.keepalive = absl::Milliseconds(50);
  connection_.message_consumed = true;
  EXPECT_EQ(Park(0), At(50));
}

TEST_F(DeadlineTest, WriteDeadlineRunsUntilTheResponseIsSentWhole) {
  connection_.state = ConnectionState::kWriting;
  EXPECT_EQ(Park(0), At(3000));
  EXPECT_EQ(Park(2000), At(3000));  // partial sends do not restart it
  // Sent whole (Connection disarms it); the next response that fills the socket gets its own.
  connection_.deadlines.write.reset();
  EXPECT_EQ(Park(5000), At(8000));
}

TEST_F(DeadlineTest, LingerHasOneDeadlineForTheWholeLinger) {
  connection_.state = ConnectionState::kLingering;
  EXPECT_EQ(Park(0), At(500));
  EXPECT_EQ(Park(300), At(500));  // discarded bytes do not restart it
}

TEST_F(DeadlineTest, StatesNotParkedChangeNothing) {
  connection_.deadlines.read = At(42);
  for (ConnectionState state : {ConnectionState::kProcessing, ConnectionState::kWaitingUpstream,
                                ConnectionState::kClosed}) {
    connection_.state = state;
    EXPECT_EQ(Park(7), At(7));
    EXPECT_EQ(connection_.deadlines.read, At(42));
    EXPECT_FALSE(connection_.deadlines.write.has_value());
    EXPECT_FALSE(connection_.deadlines.linger.has_value());
  }
}

TEST_F(DeadlineTest, EachStateKeepsItsOwnDeadline) {
  // A read deadline armed before a partial write does not shorten the write, and back.
  connection_.state = ConnectionState::kReading;
  EXPECT_EQ(Park(0), At(2000));
  connection_.state = ConnectionState::kWriting;
  EXPECT_EQ(Park(100), At(3100));
  connection_.deadlines.write.reset();
  connection_.state = ConnectionState::kReading;
  EXPECT_EQ(Park(200), At(2000));
}

// --max-connection-ms caps every wait, whatever restarts the per-state deadlines: a client
// whose requests keep getting answered (keepalive) or a slow reader is closed at the cap.
TEST_F(DeadlineTest, LifetimeCapsEveryStateFromTheFirstPark) {
  config_.max_connection_time = absl::Milliseconds(5000);
  config_.keepalive = absl::Milliseconds(10000);
  connection_.state = ConnectionState::kReading;
  EXPECT_EQ(Park(0), At(2000));
  connection_.message_consumed = true;
  connection_.idle = true;
  EXPECT_EQ(Park(1000), At(5000));  // keepalive would run to 11000
  connection_.state = ConnectionState::kWriting;
  EXPECT_EQ(Park(4000), At(5000));  // the write deadline would be 7000
  connection_.state = ConnectionState::kClosingUnsent;
  EXPECT_EQ(Park(4500), At(5000));
}

// A never-reader's last answers wait under the write deadline, like a partial write.
TEST_F(DeadlineTest, UnsentCloseWaitsForTheWriteDeadline) {
  connection_.state = ConnectionState::kClosingUnsent;
  EXPECT_EQ(Park(100), At(3100));
  EXPECT_EQ(Park(2000), At(3100));  // not restarted by a wakeup that found bytes unsent
}

}  // namespace
}  // namespace onepass
