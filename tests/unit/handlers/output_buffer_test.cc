// OutputBuffer with an attached body: the order bytes leave in, and the body's lifetime.
#include "handlers/output_buffer.h"

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace onepass {
namespace {

absl::Span<const uint8_t> Bytes(absl::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}
std::string Text(absl::Span<const uint8_t> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

TEST(OutputBufferTest, ContentsThenBodyAndNothingAfterIt) {
  auto owner = std::make_shared<const std::string>("BODY-BYTES");
  OutputBuffer out(64);
  ASSERT_TRUE(out.Append(Bytes("head:")));
  SharedBody body;
  body.bytes = Bytes(*owner);
  body.file = 7;
  body.file_offset = 100;
  body.owner = owner;
  ASSERT_TRUE(out.AttachBody(body));
  EXPECT_FALSE(out.AttachBody(body));  // one body, at the end
  body.owner.reset();
  EXPECT_FALSE(out.Append(Bytes("x")));  // nothing may follow it
  EXPECT_EQ(out.available(), 0u);
  EXPECT_EQ(out.size(), 5u);
  EXPECT_EQ(out.pending(), 15u);

  EXPECT_EQ(Text(out.front()), "head:");
  out.ConsumeFront(2);
  EXPECT_EQ(Text(out.front()), "ad:");
  out.ConsumeFront(3);
  EXPECT_EQ(Text(out.front()), "BODY-BYTES");  // the body once the contents are sent
  out.ConsumeFront(4);
  EXPECT_EQ(Text(out.front()), "-BYTES");
  EXPECT_EQ(out.body().file_offset, 104u);  // the file offset follows the bytes
  EXPECT_FALSE(out.empty());
  EXPECT_EQ(owner.use_count(), 2);
  out.ConsumeFront(6);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(owner.use_count(), 1);  // sent whole: the owner is let go at once
  EXPECT_TRUE(out.Append(Bytes("next")));
}

TEST(OutputBufferTest, ClearLetsTheOwnerGo) {
  auto owner = std::make_shared<const std::string>("B");
  OutputBuffer out(8);
  SharedBody body;
  body.bytes = Bytes(*owner);
  body.owner = owner;
  ASSERT_TRUE(out.AttachBody(body));
  EXPECT_FALSE(out.empty());  // a body alone is something to send
  EXPECT_EQ(Text(out.front()), "B");
  body.owner.reset();
  out.Clear();
  EXPECT_EQ(owner.use_count(), 1);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(out.available(), 8u);
}

TEST(OutputBufferTest, EmptyBodyIsRefused) {
  OutputBuffer out(8);
  EXPECT_FALSE(out.AttachBody(SharedBody()));
  EXPECT_FALSE(out.has_body());
}

// Message ends (EndMessage) survive partial sends: FrontMessageBytes is always what is left of
// the front message, so an encrypting transport can end a record at each.
TEST(OutputBufferTest, MessageEndsFollowTheFrontThroughPartialSends) {
  OutputBuffer out(64);
  const std::string first = "aaaa";
  const std::string second = "bbbbbb";
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>(first.data()), first.size()}));
  out.EndMessage();
  out.EndMessage();  // twice at one place: one end
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>(second.data()), second.size()}));
  out.EndMessage();
  EXPECT_EQ(out.FrontMessageBytes(), 4u);
  out.ConsumeFront(3);
  EXPECT_EQ(out.FrontMessageBytes(), 1u);
  out.ConsumeFront(1);
  EXPECT_EQ(out.FrontMessageBytes(), 6u);
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>(first.data()), first.size()}));
  EXPECT_EQ(out.FrontMessageBytes(), 6u);  // unmarked bytes join the rest after the last end
  out.ConsumeFront(6);
  EXPECT_EQ(out.FrontMessageBytes(), 4u);  // no end left: all of the contents
  out.Clear();
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>(second.data()), second.size()}));
  EXPECT_EQ(out.FrontMessageBytes(), 6u);
}

// Without marks (every protocol but DNS): the whole contents, as before.
TEST(OutputBufferTest, WithoutMessageEndsTheFrontIsAllTheContents) {
  OutputBuffer out(16);
  const std::string text = "hello";
  ASSERT_TRUE(out.Append({reinterpret_cast<const uint8_t*>(text.data()), text.size()}));
  EXPECT_EQ(out.FrontMessageBytes(), 5u);
}

}  // namespace
}  // namespace onepass
