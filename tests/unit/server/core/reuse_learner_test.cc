// ReuseLearner (server/core/reuse_learner.h): which clients keep their connections open.
#include "server/core/reuse_learner.h"

#include <array>
#include <cstdint>

#include "gtest/gtest.h"

namespace onepass {
namespace {

std::array<uint8_t, 16> Address(uint8_t last) {
  std::array<uint8_t, 16> address{};
  address[10] = address[11] = 0xff;  // v4-mapped 192.0.2.<last>
  address[12] = 192;
  address[14] = 2;
  address[15] = last;
  return address;
}

// Teaches `learner` that `client` closed `n` kept-open connections after one request.
void OneShots(ReuseLearner& learner, const std::array<uint8_t, 16>& client, int n) {
  for (int i = 0; i < n; ++i) learner.Learn(client, /*requests=*/1);
}

TEST(ReuseLearnerTest, NewClientsAreKeptOpen) {
  ReuseLearner learner;
  EXPECT_TRUE(learner.KeepOpen(Address(1)));
  EXPECT_TRUE(learner.KeepOpen(Address(1)));
}

TEST(ReuseLearnerTest, AClientThatAlwaysClosesAfterOneRequestGetsTheSinglePass) {
  ReuseLearner learner;
  const auto client = Address(1);
  OneShots(learner, client, ReuseLearner::kOneShotAfter - 1);
  EXPECT_TRUE(learner.KeepOpen(client)) << "one short of the streak";
  OneShots(learner, client, 1);
  EXPECT_FALSE(learner.KeepOpen(client));
  EXPECT_TRUE(learner.KeepOpen(Address(2))) << "another client is not affected";
}

TEST(ReuseLearnerTest, OneConnectionInKProbeEveryIsStillKeptOpen) {
  ReuseLearner learner;
  const auto client = Address(1);
  OneShots(learner, client, ReuseLearner::kOneShotAfter);
  for (int round = 0; round < 3; ++round) {
    int kept = 0;
    for (int i = 0; i < ReuseLearner::kProbeEvery; ++i) kept += learner.KeepOpen(client) ? 1 : 0;
    EXPECT_EQ(kept, 1) << "round " << round;
    learner.Learn(client, 1);  // the probe closed after one request too
  }
}

TEST(ReuseLearnerTest, ASecondRequestOnAProbeGivesTheClientKeepaliveAgain) {
  ReuseLearner learner;
  const auto client = Address(1);
  OneShots(learner, client, ReuseLearner::kOneShotAfter);
  ASSERT_FALSE(learner.KeepOpen(client));
  learner.Learn(client, /*requests=*/2);
  for (int i = 0; i < 2 * ReuseLearner::kProbeEvery; ++i) EXPECT_TRUE(learner.KeepOpen(client));
  // And it takes a whole new streak to go back.
  OneShots(learner, client, ReuseLearner::kOneShotAfter - 1);
  EXPECT_TRUE(learner.KeepOpen(client));
}

TEST(ReuseLearnerTest, AClientTakingTheSameSlotStartsOverAsNew) {
  ReuseLearner learner(/*entries=*/1);  // every client shares the one slot
  const auto one_shot = Address(1);
  OneShots(learner, one_shot, ReuseLearner::kOneShotAfter);
  ASSERT_FALSE(learner.KeepOpen(one_shot));
  learner.Learn(Address(2), 1);  // replaces it
  EXPECT_TRUE(learner.KeepOpen(one_shot)) << "forgotten: kept open, the side that loses nothing";
  EXPECT_TRUE(learner.KeepOpen(Address(2)));
}

}  // namespace
}  // namespace onepass
