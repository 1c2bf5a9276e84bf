// DNS over TCP framing (RFC 1035 §4.2.2, RFC 7766 §8): each message is preceded by its length
// as a two-byte big-endian integer. Pure: looks at bytes, keeps no state.
#ifndef ONEPASS_HANDLERS_DNS_DNS_FRAMER_H_
#define ONEPASS_HANDLERS_DNS_DNS_FRAMER_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace onepass::dns {

enum class FrameStatus {
  kIncomplete,  // the length prefix or the message is not all there yet
  kFrame,       // one whole message at the front
  kInvalid,     // the prefix announces a message too short to hold a DNS header
};

struct Frame {
  FrameStatus status = FrameStatus::kIncomplete;
  // With kFrame: the message without its prefix (a view into the input).
  absl::Span<const uint8_t> message;
  // With kFrame: bytes the frame takes at the front of the input (prefix + message).
  size_t frame_bytes = 0;
};

// Looks at the front of `input`.
Frame NextFrame(absl::Span<const uint8_t> input);

// The same, in the shape of UpstreamStreamConfig::FrameLength (handlers/handler.h), for the
// frontend's TCP connections to its backends: the frame's bytes (prefix included), 0 while
// incomplete, -1 when invalid.
ptrdiff_t FrameLength(absl::Span<const uint8_t> input);

// The message ID of a whole frame (prefix included), in the shape of
// UpstreamStreamConfig::RequestKey: what pairs a query sent to a backend over TCP with its
// answer. A frame too short to hold an ID gets a value no ID has (65536).
uint64_t FrameMessageId(absl::Span<const uint8_t> frame);

// The message ID of a datagram (no prefix), in the shape of UpstreamDatagramConfig::RequestKey:
// what ties a query sent over UDP to the one socket its reply may arrive on. Too short: 65536.
uint64_t DatagramMessageId(absl::Span<const uint8_t> datagram);

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DNS_FRAMER_H_
