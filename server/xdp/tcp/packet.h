// One frame's headers, read and written: Ethernet (one optional 802.1Q tag), IPv4 or IPv6,
// TCP with its options. Parsing never reads past the frame; the view points into it.
#ifndef ONEPASS_SERVER_XDP_TCP_PACKET_H_
#define ONEPASS_SERVER_XDP_TCP_PACKET_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace onepass::xdp {

// TCP flags (RFC 9293 §3.1).
inline constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10;

// A connection's 4-tuple, seen from us: `peer` sent the frame to `local`. IPv4 addresses use
// the first 4 bytes, the rest zero, so that keys compare bytewise.
struct FlowKey {
  bool v6 = false;
  std::array<uint8_t, 16> peer{};
  std::array<uint8_t, 16> local{};
  uint16_t peer_port = 0;
  uint16_t local_port = 0;
  bool operator==(const FlowKey&) const = default;
};

// TCP options we read and write: MSS (RFC 9293 §3.7.1), window scale and timestamps
// (RFC 7323 §2, §3), SACK-permitted (RFC 2018; read and ignored: we never send SACKs).
struct TcpOptions {
  uint16_t mss = 0;    // 0: absent
  int8_t wscale = -1;  // -1: absent
  bool sack_permitted = false;
  bool has_ts = false;
  uint32_t ts_val = 0;
  uint32_t ts_ecr = 0;
};

// The link and address half of a frame, kept per connection to address replies.
struct ReplyPath {
  std::array<uint8_t, 6> local_mac{};  // the received frame's destination
  std::array<uint8_t, 6> peer_mac{};   // its source
  bool has_vlan = false;
  uint16_t vlan_tpid = 0x8100;  // 802.1Q, or 802.1ad's 0x88a8: a reply carries the tag it came with
  uint16_t vlan_tci = 0;
  FlowKey key;
};

// A parsed TCP segment. `payload` points into the frame passed to ParseFrame.
struct SegmentView {
  ReplyPath path;
  uint32_t seq = 0;
  uint32_t ack = 0;
  uint8_t flags = 0;
  uint16_t window = 0;  // unscaled, as on the wire
  TcpOptions options;
  std::span<const uint8_t> payload;
};

enum class ParseResult {
  kOk,
  kNotOurs,      // not IPv4/IPv6 TCP, a fragment, IPv6 with extension headers
  kMalformed,    // lengths or options that do not fit
  kChecksumBad,  // IPv4 header or TCP checksum wrong
};

ParseResult ParseFrame(std::span<const uint8_t> frame, SegmentView* out);

// What we send: header fields and the options to write.
struct SegmentOut {
  uint32_t seq = 0;
  uint32_t ack = 0;
  uint8_t flags = 0;
  uint16_t window = 0;  // as written (already scaled down)
  TcpOptions options;   // mss/wscale/sack_permitted only on SYN-ACKs; has_ts on any
  std::span<const uint8_t> payload;
};

// Largest headers BuildFrame writes: Ethernet+VLAN 18, IPv6 40, TCP 20 + 40 options.
inline constexpr size_t kMaxHeaderBytes = 18 + 40 + 60;

// Writes the frame for `seg` to `path`'s peer (addresses and ports swapped back), checksums
// computed, IPv4 id `ip_id`, TTL / hop limit 64. Returns its length; 0 when `out` is too small.
size_t BuildFrame(const ReplyPath& path, const SegmentOut& seg, uint16_t ip_id,
                  std::span<uint8_t> out);

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_TCP_PACKET_H_
