#include "server/xdp/tcp/packet.h"

#include <gtest/gtest.h>

#include <vector>

#include "server/xdp/tcp/checksum.h"

namespace onepass::xdp {
namespace {

// A frame as a peer would send it: BuildFrame writes from `local` to `peer`, so the path is
// mirrored to make the parser see it from our side.
std::vector<uint8_t> PeerFrame(bool v6, bool vlan, const SegmentOut& seg) {
  ReplyPath p;
  p.local_mac = {2, 0, 0, 0, 0, 1};  // what the peer's frame is addressed from
  p.peer_mac = {2, 0, 0, 0, 0, 2};
  p.has_vlan = vlan;
  p.vlan_tci = 7;
  p.key.v6 = v6;
  p.key.local = {10, 0, 0, 1};  // the peer's address
  p.key.peer = {10, 0, 0, 2};   // ours
  if (v6) {
    p.key.local = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    p.key.peer = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  }
  p.key.local_port = 40000;
  p.key.peer_port = 53;
  std::vector<uint8_t> f(kMaxHeaderBytes + seg.payload.size());
  f.resize(BuildFrame(p, seg, 1, f));
  return f;
}

TEST(Checksum, Rfc1071ExampleAndIncremental) {
  const uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};  // RFC 1071 §3
  EXPECT_EQ(ChecksumFinish(ChecksumAdd(0, b)), static_cast<uint16_t>(~0xddf2));
  uint8_t c[] = {0x12, 0x34, 0x56, 0x78};
  uint16_t check = ChecksumFinish(ChecksumAdd(0, c));
  uint16_t updated = ChecksumUpdate(check, 0x1234, 0xabcd);
  c[0] = 0xab;
  c[1] = 0xcd;
  EXPECT_EQ(updated, ChecksumFinish(ChecksumAdd(0, c)));
  // Pieces at even offsets sum like the whole.
  EXPECT_EQ(ChecksumAdd(ChecksumAdd(0, {b, 4}), {b + 4, 4}), ChecksumAdd(0, b));
}

class PacketRoundTrip : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(PacketRoundTrip, ParsesWhatItBuilds) {
  auto [v6, vlan] = GetParam();
  const uint8_t data[] = {'h', 'e', 'l', 'l', 'o'};
  SegmentOut s;
  s.seq = 0x01020304;
  s.ack = 0xa0b0c0d0;
  s.flags = kAck | kPsh;
  s.window = 4096;
  s.options.mss = 1400;
  s.options.wscale = 7;
  s.options.sack_permitted = true;
  s.options.has_ts = true;
  s.options.ts_val = 11;
  s.options.ts_ecr = 22;
  s.payload = data;
  std::vector<uint8_t> f = PeerFrame(v6, vlan, s);
  ASSERT_FALSE(f.empty());
  SegmentView v;
  ASSERT_EQ(ParseFrame(f, &v), ParseResult::kOk);
  EXPECT_EQ(v.seq, s.seq);
  EXPECT_EQ(v.ack, s.ack);
  EXPECT_EQ(v.flags, s.flags);
  EXPECT_EQ(v.window, 4096);
  EXPECT_EQ(v.options.mss, 1400);
  EXPECT_EQ(v.options.wscale, 7);
  EXPECT_TRUE(v.options.sack_permitted);
  EXPECT_TRUE(v.options.has_ts);
  EXPECT_EQ(v.options.ts_val, 11u);
  EXPECT_EQ(v.options.ts_ecr, 22u);
  EXPECT_EQ(v.path.key.v6, v6);
  EXPECT_EQ(v.path.has_vlan, vlan);
  EXPECT_EQ(v.path.key.local_port, 53);
  EXPECT_EQ(v.path.key.peer_port, 40000);
  EXPECT_EQ(std::vector<uint8_t>(v.payload.begin(), v.payload.end()),
            std::vector<uint8_t>(data, data + 5));
  // Every single bit flipped in the IP/TCP part is caught (checksum or a header check),
  // and every truncation is refused, never read past. IPv6's traffic class, flow label and
  // hop limit are covered by no checksum.
  size_t l3 = vlan ? 18 : 14;
  for (size_t i = l3; i < f.size(); ++i) {
    if (v6 && (i - l3 <= 3 || i - l3 == 7)) continue;
    std::vector<uint8_t> g = f;
    g[i] ^= 0x01;
    SegmentView w;
    EXPECT_NE(ParseFrame(g, &w), ParseResult::kOk) << "byte " << i;
  }
  for (size_t n = 0; n < f.size(); ++n) {
    SegmentView w;
    EXPECT_NE(ParseFrame({f.data(), n}, &w), ParseResult::kOk) << "length " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(All, PacketRoundTrip,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

// 802.1ad's single tag is read as 802.1Q's is (the XDP program steers both), and a reply built
// from the parsed path carries the tag type it came with. Two tags (QinQ) are not ours: the
// program passes those to the kernel.
TEST(Packet, Vlan8021adTagEchoedAndQinqNotOurs) {
  SegmentOut s;
  s.flags = kSyn;
  std::vector<uint8_t> f = PeerFrame(false, true, s);
  f[12] = 0x88;
  f[13] = 0xa8;
  SegmentView v;
  ASSERT_EQ(ParseFrame(f, &v), ParseResult::kOk);
  EXPECT_TRUE(v.path.has_vlan);
  EXPECT_EQ(v.path.vlan_tpid, 0x88a8);
  EXPECT_EQ(v.path.vlan_tci, 7);
  SegmentOut reply;
  reply.flags = kSyn | kAck;
  std::vector<uint8_t> r(kMaxHeaderBytes);
  r.resize(BuildFrame(v.path, reply, 0, r));
  ASSERT_GE(r.size(), 18u);
  EXPECT_EQ(r[12], 0x88);
  EXPECT_EQ(r[13], 0xa8);
  EXPECT_EQ((r[14] << 8) | r[15], 7);
  SegmentView back;
  EXPECT_EQ(ParseFrame(r, &back), ParseResult::kOk);

  std::vector<uint8_t> qinq(f.begin(), f.begin() + 16);  // S-tag, then a C-tag, then the rest
  const uint8_t c_tag[] = {0x81, 0x00, 0x00, 0x09};
  qinq.insert(qinq.end(), c_tag, c_tag + 4);
  qinq.insert(qinq.end(), f.begin() + 16, f.end());
  EXPECT_EQ(ParseFrame(qinq, &v), ParseResult::kNotOurs);
}

// Table-driven: header edits and what the parser makes of them.
struct Edit {
  const char* name;
  size_t offset;  // from the start of the IPv4 header
  uint8_t value;
  ParseResult want;
};

TEST(Packet, MalformedAndForeignHeaders) {
  SegmentOut s;
  s.flags = kSyn;
  std::vector<uint8_t> base = PeerFrame(false, false, s);
  const Edit edits[] = {
      {"udp", 9, 17, ParseResult::kNotOurs},
      {"more fragments", 6, 0x60, ParseResult::kNotOurs},
      {"ihl 4", 0, 0x44, ParseResult::kMalformed},
      {"ihl past total", 0, 0x4f, ParseResult::kMalformed},
      {"version 5", 0, 0x55, ParseResult::kMalformed},
      {"tcp data offset 4", 20 + 12, 0x40, ParseResult::kMalformed},
      {"tcp data offset past end", 20 + 12, 0xf0, ParseResult::kMalformed},
  };
  for (const Edit& e : edits) {
    std::vector<uint8_t> f = base;
    f[14 + e.offset] = e.value;
    SegmentView v;
    EXPECT_EQ(ParseFrame(f, &v), e.want) << e.name;
  }
  std::vector<uint8_t> arp = base;
  arp[12] = 0x08;
  arp[13] = 0x06;
  SegmentView v;
  EXPECT_EQ(ParseFrame(arp, &v), ParseResult::kNotOurs);
}

}  // namespace
}  // namespace onepass::xdp
