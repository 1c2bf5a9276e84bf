// The DNS-over-TCP framer alone (RFC 1035 §4.2.2): table cases, then split invariance: a
// stream cut anywhere must yield the same frames as the stream whole.
#include "handlers/dns/dns_framer.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onepass::dns {
namespace {

// A framed message of `length` bytes whose content is recognisable (each byte = `fill`).
std::string Framed(size_t length, char fill) {
  std::string out;
  out.push_back(static_cast<char>(length >> 8));
  out.push_back(static_cast<char>(length & 0xff));
  out.append(length, fill);
  return out;
}

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

struct Case {
  const char* name;
  std::string input;
  FrameStatus status;
  size_t frame_bytes = 0;
};

TEST(DnsFramerTest, Table) {
  const std::vector<Case> cases = {
      {"empty", "", FrameStatus::kIncomplete},
      {"one_prefix_byte", std::string(1, '\0'), FrameStatus::kIncomplete},
      {"prefix_only", Framed(12, 'a').substr(0, 2), FrameStatus::kIncomplete},
      {"one_byte_short", Framed(12, 'a').substr(0, 13), FrameStatus::kIncomplete},
      {"header_only", Framed(12, 'a'), FrameStatus::kFrame, 14},
      {"largest", Framed(65535, 'a'), FrameStatus::kFrame, 65537},
      {"frame_then_more", Framed(20, 'a') + Framed(30, 'b'), FrameStatus::kFrame, 22},
      {"frame_then_partial", Framed(20, 'a') + "\x00", FrameStatus::kFrame, 22},
      {"zero_length", std::string(2, '\0'), FrameStatus::kInvalid},
      {"zero_length_with_data", std::string(2, '\0') + "abcdefghijklmn", FrameStatus::kInvalid},
      {"shorter_than_header", Framed(11, 'a'), FrameStatus::kInvalid},
      {"short_length_known_early", Framed(11, 'a').substr(0, 2), FrameStatus::kInvalid},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Frame frame = NextFrame(Bytes(c.input));
    EXPECT_EQ(frame.status, c.status);
    if (c.status != FrameStatus::kFrame) continue;
    EXPECT_EQ(frame.frame_bytes, c.frame_bytes);
    ASSERT_EQ(frame.message.size(), c.frame_bytes - 2);
    // A view into the input, right after the prefix.
    EXPECT_EQ(frame.message.data(), Bytes(c.input).data() + 2);
  }
}

// What a reader makes of a stream: the frames' contents in order, then how it ended.
struct Outcome {
  std::vector<std::string> messages;
  FrameStatus last = FrameStatus::kIncomplete;
  size_t left = 0;  // bytes of the stream after the last frame
  bool operator==(const Outcome& other) const {
    return messages == other.messages && last == other.last && left == other.left;
  }
};

// Feeds `stream` in the pieces given by `cuts` (ascending offsets), as a connection would:
// buffer what arrived, take every whole frame from the front, stop at the first invalid one.
Outcome Feed(const std::string& stream, const std::vector<size_t>& cuts) {
  Outcome outcome;
  std::string buffer;
  size_t consumed = 0;
  size_t from = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(stream.size());
  for (const size_t end : ends) {
    buffer.append(stream, from, end - from);
    from = end;
    while (true) {
      const Frame frame = NextFrame(Bytes(buffer));
      outcome.last = frame.status;
      if (frame.status == FrameStatus::kInvalid) {
        outcome.left = stream.size() - consumed;  // the connection would close here
        return outcome;
      }
      if (frame.status == FrameStatus::kIncomplete) break;
      outcome.messages.emplace_back(reinterpret_cast<const char*>(frame.message.data()),
                                    frame.message.size());
      buffer.erase(0, frame.frame_bytes);
      consumed += frame.frame_bytes;
    }
  }
  outcome.left = stream.size() - consumed;
  return outcome;
}

TEST(DnsFramerTest, SplitInvariance) {
  const std::vector<std::string> streams = {
      Framed(12, 'a'),                                           // a frame at the buffer's end
      Framed(12, 'a') + Framed(300, 'b') + Framed(17, 'c'),      // several frames (length > 255)
      Framed(40, 'a') + Framed(260, 'b').substr(0, 100),         // then a partial one
      Framed(20, 'a') + std::string(2, '\0') + Framed(12, 'z'),  // then a zero length
      Framed(20, 'a') + Framed(5, 'q'),                          // then one too short
  };
  for (size_t s = 0; s < streams.size(); ++s) {
    SCOPED_TRACE(s);
    const std::string& stream = streams[s];
    const Outcome whole = Feed(stream, {});
    // Every two-way split, the length prefix split at each of its bytes included.
    for (size_t cut = 0; cut <= stream.size(); ++cut) {
      ASSERT_EQ(Feed(stream, {cut}), whole) << "split at " << cut;
    }
    std::vector<size_t> every_byte;
    for (size_t i = 1; i < stream.size(); ++i) every_byte.push_back(i);
    EXPECT_EQ(Feed(stream, every_byte), whole);
  }
  // The expected outcomes themselves, so the comparison above cannot pass vacuously.
  EXPECT_EQ(Feed(streams[1], {}).messages,
            (std::vector<std::string>{std::string(12, 'a'), std::string(300, 'b'),
                                      std::string(17, 'c')}));
  EXPECT_EQ(Feed(streams[2], {}).left, 100u);
  EXPECT_EQ(Feed(streams[2], {}).last, FrameStatus::kIncomplete);
  EXPECT_EQ(Feed(streams[3], {}).messages.size(), 1u);
  EXPECT_EQ(Feed(streams[3], {}).last, FrameStatus::kInvalid);
  EXPECT_EQ(Feed(streams[4], {}).last, FrameStatus::kInvalid);
}

}  // namespace
}  // namespace onepass::dns
