// XDP program of the AF_XDP path (issue 40): TCP to a configured destination port goes to the
// AF_XDP socket of the receiving rx queue; everything else (ARP, ICMP, other ports, fragments,
// IPv6 with extension headers) passes to the kernel. Loaded through libxdp's dispatcher, so it
// runs beside other XDP programs (XDP_RUN_CONFIG below).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <xdp/xdp_helpers.h>

#define VLAN_HDR_LEN 4

// rx queue index -> AF_XDP socket (filled by user space).
struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, __u32);
} xsks SEC(".maps");

// Destination port (host order) -> 1 when steered.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u16);
  __type(value, __u8);
} ports SEC(".maps");

// [ns, bpf_ktime_get_ns] Until then, a segment other than a SYN whose 4-tuple is a kernel
// connection (accepted, or in its handshake, before the program came up: a start or a
// hand-over) passes to the kernel, which owns it. 0 (never set) or past: no socket lookups
// (the entry stays as written: one map read and a clock read per such segment after it).
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} kernel_flows_until SEC(".maps");

// 1 while this process drains (a stop, or a restart's old process): a SYN passes to the kernel
// (whose listeners are the new process's in a restart, or closed in a stop), so that no new
// connection comes to us while the ones we hold finish; their other segments still come here,
// past the kernel lookup (kernel_flows_until is set to the end of time with it), which passes the
// kernel's connections, and the ACKs of its SYN-cookie handshakes, to the kernel.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} draining SEC(".maps");

struct {
  __uint(priority, 20);
  __uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_steer);

// Whether the kernel owns the connection of segment `tcp` (4-tuple `tuple`, of `size`: the ipv4
// or ipv6 half; `ip` its IP header, of `ip_size`): a live kernel connection, not one in
// TIME_WAIT, whose 4-tuple a client may reuse for a new connection of ours (its SYN came to us);
// or, where the lookup finds only the kernel's listener, the ACK (or first data) that completes a
// handshake the listener answered with a SYN cookie (its queue overflowed: a SYN flood while we
// drain and SYNs go to the kernel, or at a start). Such a connection exists nowhere until the
// kernel checks that cookie; here it would be a segment of no connection of ours, reset. The
// helper answers at once when the listener sent no cookie in the last two minutes.
static __always_inline int kernel_owns(struct xdp_md *ctx, struct bpf_sock_tuple *tuple,
                                       __u32 size, void *ip, __u32 ip_size, struct tcphdr *tcp) {
  struct bpf_sock *sk = bpf_skc_lookup_tcp(ctx, tuple, size, BPF_F_CURRENT_NETNS, 0);
  if (!sk) return 0;
  int owned;
  if (sk->state == BPF_TCP_LISTEN) {
    owned = tcp->ack && !tcp->syn && !tcp->rst &&
            bpf_tcp_check_syncookie(sk, ip, ip_size, tcp, sizeof(*tcp)) == 0;
  } else {
    owned = sk->state != BPF_TCP_TIME_WAIT;
  }
  bpf_sk_release(sk);
  return owned;
}

// Only a SYN is surely a new connection of ours; during the grace period another segment
// first checks that no kernel connection has its 4-tuple.
static __always_inline int in_grace(struct tcphdr *tcp) {
  if (tcp->syn && !tcp->ack) return 0;
  __u32 zero = 0;
  __u64 *until = bpf_map_lookup_elem(&kernel_flows_until, &zero);
  return until && *until != 0 && bpf_ktime_get_ns() < *until;
}

static __always_inline int is_draining(void) {
  __u32 zero = 0;
  __u32 *on = bpf_map_lookup_elem(&draining, &zero);
  return on && *on;
}

static __always_inline int steer(struct xdp_md *ctx, struct tcphdr *tcp, void *end) {
  if ((void *)(tcp + 1) > end) return XDP_PASS;
  __u16 port = bpf_ntohs(tcp->dest);
  if (!bpf_map_lookup_elem(&ports, &port)) return XDP_PASS;
  if (tcp->syn && !tcp->ack && is_draining()) return XDP_PASS;
  return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

static __always_inline int steer4(struct xdp_md *ctx, struct iphdr *ip, struct tcphdr *tcp,
                                  void *end) {
  if ((void *)(tcp + 1) > end) return XDP_PASS;
  if (in_grace(tcp)) {
    struct bpf_sock_tuple tuple = {};
    tuple.ipv4.saddr = ip->saddr;
    tuple.ipv4.daddr = ip->daddr;
    tuple.ipv4.sport = tcp->source;
    tuple.ipv4.dport = tcp->dest;
    if (kernel_owns(ctx, &tuple, sizeof(tuple.ipv4), ip, sizeof(*ip), tcp)) return XDP_PASS;
  }
  return steer(ctx, tcp, end);
}

static __always_inline int steer6(struct xdp_md *ctx, struct ipv6hdr *ip6, struct tcphdr *tcp,
                                  void *end) {
  if ((void *)(tcp + 1) > end) return XDP_PASS;
  if (in_grace(tcp)) {
    struct bpf_sock_tuple tuple = {};
    __builtin_memcpy(tuple.ipv6.saddr, &ip6->saddr, sizeof(tuple.ipv6.saddr));
    __builtin_memcpy(tuple.ipv6.daddr, &ip6->daddr, sizeof(tuple.ipv6.daddr));
    tuple.ipv6.sport = tcp->source;
    tuple.ipv6.dport = tcp->dest;
    if (kernel_owns(ctx, &tuple, sizeof(tuple.ipv6), ip6, sizeof(*ip6), tcp)) return XDP_PASS;
  }
  return steer(ctx, tcp, end);
}

SEC("xdp")
int xdp_steer(struct xdp_md *ctx) {
  void *data = (void *)(long)ctx->data;
  void *end = (void *)(long)ctx->data_end;
  struct ethhdr *eth = data;
  if ((void *)(eth + 1) > end) return XDP_PASS;
  __u16 proto = eth->h_proto;
  void *l3 = eth + 1;
  if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
    if (l3 + VLAN_HDR_LEN > end) return XDP_PASS;
    proto = *(__u16 *)(l3 + 2);
    l3 += VLAN_HDR_LEN;
  }
  if (proto == bpf_htons(ETH_P_IP)) {
    struct iphdr *ip = l3;
    if ((void *)(ip + 1) > end) return XDP_PASS;
    if (ip->ihl < 5 || ip->protocol != IPPROTO_TCP) return XDP_PASS;
    if (ip->frag_off & bpf_htons(0x3fff)) return XDP_PASS;  // MF or an offset: a fragment
    return steer4(ctx, ip, (struct tcphdr *)((void *)ip + ip->ihl * 4), end);
  }
  if (proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr *ip6 = l3;
    if ((void *)(ip6 + 1) > end) return XDP_PASS;
    if (ip6->nexthdr != IPPROTO_TCP) return XDP_PASS;  // extension headers pass
    return steer6(ctx, ip6, (struct tcphdr *)(ip6 + 1), end);
  }
  return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
