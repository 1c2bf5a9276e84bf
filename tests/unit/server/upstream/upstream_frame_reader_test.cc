// The stream path's frame reassembly: frames out as the handler's framer measures them, the
// same whatever way recv cut the bytes (split invariance), and the bounds.
#include "server/upstream/upstream_frame_reader.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onepass {
namespace {

// A framer in the shape of UpstreamStreamConfig::FrameLength: a two-byte big-endian length,
// then that many bytes; a zero length is invalid.
ptrdiff_t TwoByteFrameLength(absl::Span<const uint8_t> bytes) {
  if (bytes.size() < 2) return 0;
  const size_t length = (size_t{bytes[0]} << 8) | bytes[1];
  if (length == 0) return -1;
  return bytes.size() < 2 + length ? 0 : static_cast<ptrdiff_t>(2 + length);
}

std::string Frame(size_t length, char fill) {
  std::string frame = {static_cast<char>(length >> 8), static_cast<char>(length & 0xff)};
  return frame + std::string(length, fill);
}

struct Outcome {
  std::vector<std::string> frames;
  UpstreamFrameReader::Status last = UpstreamFrameReader::Status::kIncomplete;
  size_t buffered = 0;
  bool operator==(const Outcome& other) const {
    return frames == other.frames && last == other.last && buffered == other.buffered;
  }
};

// Feeds `stream` cut at `cuts` (ascending), draining the frames after each piece as the pool
// does after each recv; stops at kInvalid.
Outcome Feed(const std::string& stream, const std::vector<size_t>& cuts, size_t max_frame) {
  UpstreamFrameReader reader(&TwoByteFrameLength, max_frame);
  Outcome outcome;
  size_t at = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(stream.size());
  for (size_t end : ends) {
    while (at < end) {
      absl::Span<uint8_t> tail = reader.WritableTail();
      EXPECT_FALSE(tail.empty());
      const size_t n = std::min(tail.size(), end - at);
      std::memcpy(tail.data(), stream.data() + at, n);
      reader.Commit(n);
      at += n;
      absl::Span<const uint8_t> frame;
      while ((outcome.last = reader.Next(frame)) == UpstreamFrameReader::Status::kFrame) {
        outcome.frames.emplace_back(frame.begin(), frame.end());
      }
      // What is buffered past an invalid frame depends on the cuts; the connection closes.
      if (outcome.last == UpstreamFrameReader::Status::kInvalid) return outcome;
    }
  }
  outcome.buffered = reader.buffered();
  return outcome;
}

TEST(UpstreamFrameReader, Table) {
  using Status = UpstreamFrameReader::Status;
  struct Case {
    std::string stream;
    size_t frames;
    Status last;
  } cases[] = {
      {"", 0, Status::kIncomplete},
      {"\x00", 0, Status::kIncomplete},
      {Frame(1, 'a'), 1, Status::kIncomplete},
      {Frame(12, 'a') + Frame(300, 'b') + Frame(17, 'c'), 3, Status::kIncomplete},
      {Frame(40, 'a') + Frame(260, 'b').substr(0, 100), 1, Status::kIncomplete},
      {Frame(20, 'a') + std::string(2, '\0'), 1, Status::kInvalid},  // zero length: invalid
      {Frame(1000, 'x'), 0, Status::kInvalid},                       // longer than the max
      {Frame(998, 'x'), 1, Status::kIncomplete},                     // exactly the max
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.stream.size());
    const Outcome outcome = Feed(c.stream, {}, 1000);
    EXPECT_EQ(outcome.frames.size(), c.frames);
    EXPECT_EQ(outcome.last, c.last);
  }
}

TEST(UpstreamFrameReader, SameFramesWhateverTheSplits) {
  const std::vector<std::string> streams = {
      Frame(12, 'a') + Frame(300, 'b') + Frame(17, 'c'),
      Frame(40, 'a') + Frame(260, 'b').substr(0, 100),
      Frame(20, 'a') + std::string(2, '\0') + Frame(12, 'z'),
      Frame(900, 'q') + Frame(900, 'r') + Frame(3, 's'),  // each near the max: compaction
  };
  for (size_t s = 0; s < streams.size(); ++s) {
    SCOPED_TRACE(s);
    const std::string& stream = streams[s];
    const Outcome whole = Feed(stream, {}, 1000);
    for (size_t cut = 0; cut <= stream.size(); ++cut) {
      ASSERT_EQ(Feed(stream, {cut}, 1000), whole) << "split at " << cut;
    }
    std::vector<size_t> every_byte;
    for (size_t i = 1; i < stream.size(); ++i) every_byte.push_back(i);
    EXPECT_EQ(Feed(stream, every_byte, 1000), whole);
  }
  EXPECT_EQ(Feed(streams[3], {}, 1000).frames.size(), 3u);
  EXPECT_EQ(Feed(streams[1], {}, 1000).buffered, 100u);
}

TEST(UpstreamFrameReader, ResetForgetsPartialFrame) {
  UpstreamFrameReader reader(&TwoByteFrameLength, 100);
  const std::string partial = Frame(10, 'a').substr(0, 5);
  absl::Span<uint8_t> tail = reader.WritableTail();
  std::memcpy(tail.data(), partial.data(), partial.size());
  reader.Commit(partial.size());
  absl::Span<const uint8_t> frame;
  EXPECT_EQ(reader.Next(frame), UpstreamFrameReader::Status::kIncomplete);
  reader.Reset();
  EXPECT_EQ(reader.buffered(), 0u);
  const std::string whole = Frame(3, 'b');
  tail = reader.WritableTail();
  std::memcpy(tail.data(), whole.data(), whole.size());
  reader.Commit(whole.size());
  ASSERT_EQ(reader.Next(frame), UpstreamFrameReader::Status::kFrame);
  EXPECT_EQ(std::string(frame.begin(), frame.end()), whole);
}

}  // namespace
}  // namespace onepass
