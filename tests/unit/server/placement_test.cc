#include "server/placement.h"

#include <vector>

#include "gtest/gtest.h"

namespace onepass {
namespace {

TEST(PlacementTest, DefaultIsOnePinnedWorkerPerAllowedCpuWithCpuSteering) {
  ServerConfig config;
  absl::StatusOr<WorkerPlacement> placement = PlaceWorkers(config, std::vector<int>{0, 1, 2, 3});
  ASSERT_TRUE(placement.ok()) << placement.status();
  EXPECT_EQ(placement->worker_cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(placement->pinned);
  EXPECT_TRUE(placement->cpu_steering);
  EXPECT_TRUE(placement->note.empty());
}

TEST(PlacementTest, CpusListPinsInOrder) {
  ServerConfig config;
  config.cpus = {3, 1};
  absl::StatusOr<WorkerPlacement> placement = PlaceWorkers(config, std::vector<int>{0, 1, 2, 3});
  ASSERT_TRUE(placement.ok()) << placement.status();
  EXPECT_EQ(placement->worker_cpus, (std::vector<int>{3, 1}));
  EXPECT_TRUE(placement->cpu_steering);
  // CPUs 0 and 2 have no worker: the log says their connections are hashed.
  EXPECT_NE(placement->note.find("0,2"), std::string::npos) << placement->note;
}

TEST(PlacementTest, FewerWorkersThanCpusStayPinned) {
  ServerConfig config;
  config.workers = 1;
  absl::StatusOr<WorkerPlacement> placement = PlaceWorkers(config, std::vector<int>{4, 5});
  ASSERT_TRUE(placement.ok());
  EXPECT_EQ(placement->worker_cpus, (std::vector<int>{4}));
  EXPECT_TRUE(placement->cpu_steering);
}

TEST(PlacementTest, MoreWorkersThanCpusAreNotPinnedAndHash) {
  ServerConfig config;
  config.workers = 3;
  absl::StatusOr<WorkerPlacement> placement = PlaceWorkers(config, std::vector<int>{0, 1});
  ASSERT_TRUE(placement.ok());
  EXPECT_EQ(placement->worker_cpus, (std::vector<int>{-1, -1, -1}));
  EXPECT_FALSE(placement->pinned);
  EXPECT_FALSE(placement->cpu_steering);
  EXPECT_NE(placement->note.find("hash"), std::string::npos);

  config.steering = Steering::kCpu;
  EXPECT_FALSE(PlaceWorkers(config, std::vector<int>{0, 1}).ok());
}

TEST(PlacementTest, HashSteeringOnRequest) {
  ServerConfig config;
  config.steering = Steering::kHash;
  absl::StatusOr<WorkerPlacement> placement = PlaceWorkers(config, std::vector<int>{0, 1});
  ASSERT_TRUE(placement.ok());
  EXPECT_TRUE(placement->pinned);
  EXPECT_FALSE(placement->cpu_steering);
}

TEST(PlacementTest, ErrorsSayWhatToChange) {
  ServerConfig outside;
  outside.cpus = {0, 7};
  absl::StatusOr<WorkerPlacement> placement = PlaceWorkers(outside, std::vector<int>{0, 1});
  ASSERT_FALSE(placement.ok());
  EXPECT_NE(placement.status().message().find("CPU 7"), absl::string_view::npos);
  EXPECT_NE(placement.status().message().find("affinity"), absl::string_view::npos);

  ServerConfig disagree;
  disagree.cpus = {0, 1};
  disagree.workers = 3;
  EXPECT_FALSE(PlaceWorkers(disagree, std::vector<int>{0, 1}).ok());

  ServerConfig negative;
  negative.workers = -1;
  EXPECT_FALSE(PlaceWorkers(negative, std::vector<int>{0}).ok());
}

}  // namespace
}  // namespace onepass
