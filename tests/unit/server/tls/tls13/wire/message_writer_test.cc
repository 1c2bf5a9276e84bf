// MessageWriter: big-endian integers, length-prefixed vectors at each width and their bounds,
// the sticky failure, and a message that does not fit leaving only the whole ones before.
#include "server/tls/tls13/wire/message_writer.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/server/tls/tls13/wire/wire_test_util.h"

namespace onepass::tls::tls13 {
namespace {

using testing::ByteVec;
using testing::Vec;

TEST(MessageWriter, IntegersAreBigEndian) {
  uint8_t buffer[16];
  MessageWriter out(buffer);
  out.U8(0x01);
  out.U16(0x0203);
  out.U24(0x040506);
  out.U32(0x0708090a);
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(out.capacity(), 16u);
  EXPECT_EQ(Vec(out.written()), (ByteVec{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

TEST(MessageWriter, U24OutOfRangeFails) {
  uint8_t buffer[16];
  MessageWriter out(buffer);
  out.U24(0xffffff);
  EXPECT_TRUE(out.ok());
  out.U24(0x1000000);
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.size(), 3u);
}

TEST(MessageWriter, VectorsCarryTheirLength) {
  uint8_t buffer[32];
  MessageWriter out(buffer);
  const ByteVec two = {0xaa, 0xbb};
  out.Vector8(two);
  out.Vector16(two);
  out.Vector24(two);
  out.Vector16({});
  const size_t at = out.OpenVector(2);
  out.U8(7);
  out.Vector8({});
  out.CloseVector(at, 2);
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(Vec(out.written()), (ByteVec{2, 0xaa, 0xbb,        //
                                         0, 2, 0xaa, 0xbb,     //
                                         0, 0, 2, 0xaa, 0xbb,  //
                                         0, 0,                 //
                                         0, 2, 7, 0}));
}

TEST(MessageWriter, VectorOverItsWidthFails) {
  std::vector<uint8_t> buffer(70000);
  MessageWriter out(absl::MakeSpan(buffer));
  out.Vector8(ByteVec(255, 1));
  EXPECT_TRUE(out.ok());
  out.Vector8(ByteVec(256, 1));
  EXPECT_FALSE(out.ok());

  out.Clear();
  out.Vector16(ByteVec(65535, 1));
  EXPECT_TRUE(out.ok());
  out.Clear();
  out.Vector16(ByteVec(65536, 1));
  EXPECT_FALSE(out.ok());
}

TEST(MessageWriter, OverflowIsStickyUntilClear) {
  uint8_t buffer[4];
  MessageWriter out(buffer);
  out.U16(1);
  out.U24(2);  // does not fit: 2 + 3 > 4
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.size(), 2u);
  out.U8(3);  // would fit, refused
  out.Bytes({});
  EXPECT_EQ(out.size(), 2u);
  EXPECT_FALSE(out.ok());
  out.Clear();
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(out.size(), 0u);
  out.U32(5);
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(Vec(out.written()), (ByteVec{0, 0, 0, 5}));
}

TEST(MessageWriter, MessageHeaderAndRollback) {
  uint8_t buffer[12];
  MessageWriter out(buffer);
  size_t start = out.BeginMessage(20);
  out.U16(0xabcd);
  const absl::Span<const uint8_t> first = out.EndMessage(start);
  EXPECT_EQ(Vec(first), (ByteVec{20, 0, 0, 2, 0xab, 0xcd}));
  EXPECT_EQ(first.data(), buffer);

  start = out.BeginMessage(24);
  out.U32(1);  // 6 + 4 + 4 > 12
  EXPECT_TRUE(out.EndMessage(start).empty());
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(Vec(out.written()), Vec(first));  // the partial header is gone

  out.Clear();
  start = out.BeginMessage(24);
  out.Fail();  // an argument no message may carry
  EXPECT_TRUE(out.EndMessage(start).empty());
  EXPECT_EQ(out.size(), 0u);
}

}  // namespace
}  // namespace onepass::tls::tls13
