#include "server/tls/tls13/wire/handshake_reader.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "server/tls/tls13/wire/alert.h"

namespace onepass::tls::tls13 {
namespace {

std::vector<uint8_t> TwoMessages() {
  return {1, 0, 0, 3, 'a', 'b', 'c', 20, 0, 0, 0, 2, 0, 0, 1, 'x'};
}

// A message as the test keeps it: the reader's views last until its next Feed only.
struct Message {
  uint8_t type = 0;
  std::vector<uint8_t> body;
};

std::vector<Message> FeedPieces(const std::vector<uint8_t>& in, const std::vector<size_t>& cuts) {
  HandshakeReader reader;
  std::vector<Message> out;
  std::vector<HandshakeMessage> fed;
  auto feed = [&](std::span<const uint8_t> piece) {
    fed.clear();
    EXPECT_EQ(reader.Feed(piece, fed), HandshakeReader::Result::kOk);
    for (const HandshakeMessage& m : fed) out.push_back({m.type, {m.body.begin(), m.body.end()}});
  };
  size_t start = 0;
  for (size_t cut : cuts) {
    feed(std::span(in).subspan(start, cut - start));
    start = cut;
  }
  feed(std::span(in).subspan(start));
  EXPECT_TRUE(reader.AtMessageBoundary());
  return out;
}

void ExpectSame(const std::vector<Message>& a, const std::vector<Message>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].type, b[i].type);
    EXPECT_EQ(a[i].body, b[i].body);
  }
}

TEST(HandshakeReaderTest, WholeGivesEveryMessage) {
  const auto out = FeedPieces(TwoMessages(), {});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].type, 1);
  EXPECT_EQ(out[0].body, (std::vector<uint8_t>{'a', 'b', 'c'}));
  EXPECT_EQ(out[1].type, 20);
  EXPECT_TRUE(out[1].body.empty());
  EXPECT_EQ(out[2].type, 2);
  EXPECT_EQ(out[2].body, (std::vector<uint8_t>{'x'}));
}

TEST(HandshakeReaderTest, SplitInvariant) {
  const auto in = TwoMessages();
  const auto whole = FeedPieces(in, {});
  std::vector<size_t> every;
  for (size_t i = 1; i < in.size(); ++i) every.push_back(i);
  ExpectSame(whole, FeedPieces(in, every));
  for (size_t i = 0; i <= in.size(); ++i) ExpectSame(whole, FeedPieces(in, {i}));
}

TEST(HandshakeReaderTest, PartialMessageIsNotAKeyChangeBoundary) {
  // RFC 8446 §5.1: a message must not span a key change.
  HandshakeReader reader;
  std::vector<HandshakeMessage> out;
  const std::vector<uint8_t> head = {20, 0, 0, 32, 1, 2};
  ASSERT_EQ(reader.Feed(head, out), HandshakeReader::Result::kOk);
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(reader.AtMessageBoundary());
}

TEST(HandshakeReaderTest, OverBoundIsDecodeError) {
  HandshakeReader reader(100);
  std::vector<HandshakeMessage> out;
  const std::vector<uint8_t> head = {1, 0, 0, 101};
  EXPECT_EQ(reader.Feed(head, out), HandshakeReader::Result::kError);
  EXPECT_EQ(reader.error(), AlertDescription::kDecodeError);
}

TEST(AlertTest, LevelsFollowRfc8446Section6) {
  EXPECT_EQ(AlertBody(AlertDescription::kCloseNotify), (std::array<uint8_t, 2>{1, 0}));
  EXPECT_EQ(AlertBody(AlertDescription::kIllegalParameter), (std::array<uint8_t, 2>{2, 47}));
  EXPECT_EQ(AlertBody(AlertDescription::kNoApplicationProtocol), (std::array<uint8_t, 2>{2, 120}));
}

}  // namespace
}  // namespace onepass::tls::tls13
