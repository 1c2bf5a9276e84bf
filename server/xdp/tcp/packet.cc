#include "server/xdp/tcp/packet.h"

#include <cstring>

#include "server/xdp/tcp/checksum.h"

namespace onepass::xdp {
namespace {

constexpr uint16_t kEthIpv4 = 0x0800, kEthIpv6 = 0x86dd, kEthVlan = 0x8100, kEthVlanAd = 0x88a8;
constexpr uint8_t kProtoTcp = 6;

uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t Get32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void Put32(uint8_t* p, uint32_t v) {
  Put16(p, static_cast<uint16_t>(v >> 16));
  Put16(p + 2, static_cast<uint16_t>(v));
}

// The pseudo-header's sum (RFC 9293 §3.1; RFC 8200 §8.1 for IPv6) for a TCP length.
uint32_t PseudoSum(const FlowKey& k, size_t tcp_len) {
  size_t alen = k.v6 ? 16 : 4;
  uint32_t sum = ChecksumAdd(0, {k.peer.data(), alen});
  sum = ChecksumAdd(sum, {k.local.data(), alen});
  sum = ChecksumAddWord(sum, kProtoTcp);
  sum = ChecksumAddWord(sum, static_cast<uint16_t>(tcp_len >> 16));
  return ChecksumAddWord(sum, static_cast<uint16_t>(tcp_len));
}

// Options (RFC 9293 §3.2): kind 0 ends, kind 1 pads, the rest carry a length that must fit.
bool ParseOptions(std::span<const uint8_t> o, TcpOptions* out) {
  size_t i = 0;
  while (i < o.size()) {
    uint8_t kind = o[i];
    if (kind == 0) break;
    if (kind == 1) {
      ++i;
      continue;
    }
    if (i + 1 >= o.size()) return false;
    uint8_t len = o[i + 1];
    if (len < 2 || i + len > o.size()) return false;
    const uint8_t* v = o.data() + i + 2;
    switch (kind) {
      case 2:  // MSS
        if (len != 4) return false;
        out->mss = Get16(v);
        break;
      case 3:  // window scale, at most 14 (RFC 7323 §2.3)
        if (len != 3) return false;
        out->wscale = static_cast<int8_t>(v[0] > 14 ? 14 : v[0]);
        break;
      case 4:  // SACK-permitted
        if (len != 2) return false;
        out->sack_permitted = true;
        break;
      case 8:  // timestamps
        if (len != 10) return false;
        out->has_ts = true;
        out->ts_val = Get32(v);
        out->ts_ecr = Get32(v + 4);
        break;
      default:
        break;
    }
    i += len;
  }
  return true;
}

}  // namespace

ParseResult ParseFrame(std::span<const uint8_t> f, SegmentView* out) {
  *out = SegmentView{};
  if (f.size() < 14) return ParseResult::kNotOurs;
  std::memcpy(out->path.local_mac.data(), f.data(), 6);
  std::memcpy(out->path.peer_mac.data(), f.data() + 6, 6);
  size_t off = 12;
  uint16_t type = Get16(f.data() + off);
  off += 2;
  // One tag, of either type: what the XDP program steers (xdp_steer.bpf.c). Two tags (QinQ) it
  // passes to the kernel.
  if (type == kEthVlan || type == kEthVlanAd) {
    if (f.size() < off + 4) return ParseResult::kMalformed;
    out->path.has_vlan = true;
    out->path.vlan_tpid = type;
    out->path.vlan_tci = Get16(f.data() + off);
    type = Get16(f.data() + off + 2);
    off += 4;
  }
  FlowKey& k = out->path.key;
  size_t l4_off = 0, l4_len = 0;
  if (type == kEthIpv4) {
    if (f.size() < off + 20) return ParseResult::kMalformed;
    const uint8_t* ip = f.data() + off;
    if ((ip[0] >> 4) != 4) return ParseResult::kMalformed;
    size_t ihl = size_t{ip[0] & 0x0fu} * 4;
    size_t total = Get16(ip + 2);
    if (ihl < 20 || total < ihl || f.size() < off + total) return ParseResult::kMalformed;
    if (ip[9] != kProtoTcp) return ParseResult::kNotOurs;
    if ((Get16(ip + 6) & 0x3fff) != 0) return ParseResult::kNotOurs;  // MF or an offset
    if (ChecksumFinish(ChecksumAdd(0, {ip, ihl})) != 0) return ParseResult::kChecksumBad;
    std::memcpy(k.peer.data(), ip + 12, 4);
    std::memcpy(k.local.data(), ip + 16, 4);
    l4_off = off + ihl;
    l4_len = total - ihl;
  } else if (type == kEthIpv6) {
    if (f.size() < off + 40) return ParseResult::kMalformed;
    const uint8_t* ip = f.data() + off;
    if ((ip[0] >> 4) != 6) return ParseResult::kMalformed;
    if (ip[6] != kProtoTcp) return ParseResult::kNotOurs;  // extension headers: not ours
    size_t plen = Get16(ip + 4);
    if (f.size() < off + 40 + plen) return ParseResult::kMalformed;
    k.v6 = true;
    std::memcpy(k.peer.data(), ip + 8, 16);
    std::memcpy(k.local.data(), ip + 24, 16);
    l4_off = off + 40;
    l4_len = plen;
  } else {
    return ParseResult::kNotOurs;
  }
  if (l4_len < 20) return ParseResult::kMalformed;
  const uint8_t* t = f.data() + l4_off;
  size_t doff = static_cast<size_t>(t[12] >> 4) * 4;
  if (doff < 20 || doff > l4_len) return ParseResult::kMalformed;
  if (ChecksumFinish(ChecksumAdd(PseudoSum(k, l4_len), {t, l4_len})) != 0) {
    return ParseResult::kChecksumBad;
  }
  k.peer_port = Get16(t);
  k.local_port = Get16(t + 2);
  out->seq = Get32(t + 4);
  out->ack = Get32(t + 8);
  out->flags = t[13];
  out->window = Get16(t + 14);
  if (!ParseOptions({t + 20, doff - 20}, &out->options)) return ParseResult::kMalformed;
  out->payload = {t + doff, l4_len - doff};
  return ParseResult::kOk;
}

size_t BuildFrame(const ReplyPath& path, const SegmentOut& seg, uint16_t ip_id,
                  std::span<uint8_t> out) {
  const FlowKey& k = path.key;
  uint8_t opts[40];
  size_t olen = 0;
  if (seg.options.mss != 0) {
    opts[olen++] = 2;
    opts[olen++] = 4;
    Put16(opts + olen, seg.options.mss);
    olen += 2;
  }
  if (seg.options.sack_permitted) {
    opts[olen++] = 1;
    opts[olen++] = 1;
    opts[olen++] = 4;
    opts[olen++] = 2;
  }
  if (seg.options.has_ts) {
    opts[olen++] = 1;
    opts[olen++] = 1;
    opts[olen++] = 8;
    opts[olen++] = 10;
    Put32(opts + olen, seg.options.ts_val);
    Put32(opts + olen + 4, seg.options.ts_ecr);
    olen += 8;
  }
  if (seg.options.wscale >= 0) {
    opts[olen++] = 1;
    opts[olen++] = 3;
    opts[olen++] = 3;
    opts[olen++] = static_cast<uint8_t>(seg.options.wscale);
  }
  size_t eth_len = path.has_vlan ? 18 : 14;
  size_t ip_len = k.v6 ? 40 : 20;
  size_t tcp_len = 20 + olen + seg.payload.size();
  size_t total = eth_len + ip_len + tcp_len;
  if (out.size() < total || ip_len + tcp_len > 0xffff) return 0;
  uint8_t* p = out.data();
  std::memcpy(p, path.peer_mac.data(), 6);
  std::memcpy(p + 6, path.local_mac.data(), 6);
  if (path.has_vlan) {
    Put16(p + 12, path.vlan_tpid);
    Put16(p + 14, path.vlan_tci);
  }
  Put16(p + eth_len - 2, k.v6 ? kEthIpv6 : kEthIpv4);
  uint8_t* ip = p + eth_len;
  std::memset(ip, 0, ip_len);
  if (k.v6) {
    ip[0] = 0x60;
    Put16(ip + 4, static_cast<uint16_t>(tcp_len));
    ip[6] = kProtoTcp;
    ip[7] = 64;
    std::memcpy(ip + 8, k.local.data(), 16);
    std::memcpy(ip + 24, k.peer.data(), 16);
  } else {
    ip[0] = 0x45;
    Put16(ip + 2, static_cast<uint16_t>(ip_len + tcp_len));
    Put16(ip + 4, ip_id);
    Put16(ip + 6, 0x4000);  // DF
    ip[8] = 64;
    ip[9] = kProtoTcp;
    std::memcpy(ip + 12, k.local.data(), 4);
    std::memcpy(ip + 16, k.peer.data(), 4);
    Put16(ip + 10, ChecksumFinish(ChecksumAdd(0, {ip, 20})));
  }
  uint8_t* t = ip + ip_len;
  Put16(t, k.local_port);
  Put16(t + 2, k.peer_port);
  Put32(t + 4, seg.seq);
  Put32(t + 8, seg.ack);
  t[12] = static_cast<uint8_t>(((20 + olen) / 4) << 4);
  t[13] = seg.flags;
  Put16(t + 14, seg.window);
  Put16(t + 16, 0);
  Put16(t + 18, 0);
  std::memcpy(t + 20, opts, olen);
  if (!seg.payload.empty()) std::memcpy(t + 20 + olen, seg.payload.data(), seg.payload.size());
  // The pseudo-header sum is symmetric in the two addresses, so the key serves as it is.
  uint32_t sum = ChecksumAdd(PseudoSum(k, tcp_len), {t, tcp_len});
  Put16(t + 16, ChecksumFinish(sum));
  return total;
}

}  // namespace onepass::xdp
