#include "handlers/dns/dns_framer.h"

#include "handlers/dns/dns_wire.h"

namespace onepass::dns {

Frame NextFrame(absl::Span<const uint8_t> input) {
  Frame frame;
  if (input.size() < kLengthPrefixBytes) return frame;
  const size_t length = ReadU16(input.data());
  // A message shorter than the header can never be answered (RFC 1035 §4.1.1), and waiting
  // for more bytes would not help: say so as soon as the prefix is known.
  if (length < kHeaderBytes) {
    frame.status = FrameStatus::kInvalid;
    return frame;
  }
  if (input.size() - kLengthPrefixBytes < length) return frame;
  frame.status = FrameStatus::kFrame;
  frame.message = input.subspan(kLengthPrefixBytes, length);
  frame.frame_bytes = kLengthPrefixBytes + length;
  return frame;
}

ptrdiff_t FrameLength(absl::Span<const uint8_t> input) {
  const Frame frame = NextFrame(input);
  switch (frame.status) {
    case FrameStatus::kIncomplete:
      return 0;
    case FrameStatus::kInvalid:
      return -1;
    case FrameStatus::kFrame:
      break;
  }
  return static_cast<ptrdiff_t>(frame.frame_bytes);
}

uint64_t FrameMessageId(absl::Span<const uint8_t> frame) {
  if (frame.size() < kLengthPrefixBytes + 2) return 65536;
  return ReadU16(frame.data() + kLengthPrefixBytes);
}

uint64_t DatagramMessageId(absl::Span<const uint8_t> datagram) {
  if (datagram.size() < 2) return 65536;
  return ReadU16(datagram.data());
}

}  // namespace onepass::dns
