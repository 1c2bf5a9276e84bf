// The output buffers lent turn by turn: the single pass's ready buffer, a connection that keeps
// its buffer (it waits to write) and the bound on how many are ever made.
#include "server/core/output_pool.h"

#include "gtest/gtest.h"

namespace onepass {
namespace {

TEST(OutputPoolTest, LentBufferComesBackClearedAndIsLentAgain) {
  OutputPool pool(128, /*max_kept=*/1);
  Connection connection(64, /*output_capacity=*/0);
  ASSERT_TRUE(pool.ready());
  pool.Lend(connection);
  ASSERT_TRUE(connection.has_output());
  EXPECT_FALSE(pool.ready());
  OutputBuffer* lent = &connection.out();
  ASSERT_TRUE(connection.out().Append({reinterpret_cast<const uint8_t*>("x"), 1}));
  pool.TakeBack(connection);
  EXPECT_FALSE(connection.has_output());
  ASSERT_TRUE(pool.ready());
  pool.Lend(connection);
  EXPECT_EQ(&connection.out(), lent);  // the same buffer: no allocation per turn
  EXPECT_TRUE(connection.out().empty());
}

TEST(OutputPoolTest, KeptBuffersAreBoundedAndComeBackAsSpares) {
  OutputPool pool(128, /*max_kept=*/1);
  Connection writing1(64, 0), writing2(64, 0), writing3(64, 0);
  pool.Lend(writing1);
  ASSERT_TRUE(pool.CanKeepOne());
  ASSERT_TRUE(pool.Replenish());  // writing1 keeps its buffer: a second one is made
  pool.Lend(writing2);
  // Two made, one kept beyond the ready one: a third cannot be made.
  EXPECT_FALSE(pool.CanKeepOne());
  EXPECT_FALSE(pool.Replenish());
  pool.TakeBack(writing1);  // back as the ready one
  EXPECT_TRUE(pool.ready());
  pool.TakeBack(writing2);  // a spare
  EXPECT_TRUE(pool.CanKeepOne());
  pool.Lend(writing3);
  EXPECT_TRUE(pool.Replenish());  // from the spare, nothing made
  EXPECT_TRUE(pool.ready());
}

}  // namespace
}  // namespace onepass
