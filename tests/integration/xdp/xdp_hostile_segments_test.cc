// onepassd --xdp against segments an off-path attacker can send (issue 40's hostile cases), end
// to end over a veth pair (tests/unit/server/xdp/af_xdp/veth_namespaces.h): frames written with
// our own BuildFrame and sent raw (AF_PACKET) from the client's namespace, beside a real kernel
// TCP connection held open halfway through its request.
//   - RSTs, SYNs, bare ACKs and data at random sequence numbers on that connection's 4-tuple
//     (RFC 5961: only an exact RST may end it; the rest gets challenge ACKs or is dropped);
//   - a SYN flood from 20,000 ports of the client's address (SYN cookies: no state held);
//   - malformed frames: bad TCP checksums, a data offset past the frame, truncated options.
// Afterwards the held connection completes its request and gets its answer, kdig is answered,
// and onepassd's counters show the flood was seen and held no slot.
//
// Needs root (namespaces, XDP, raw sockets): skipped otherwise (CI runs as root).
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/xdp/tcp/packet.h"
#include "tests/support/metrics_client.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_for.h"
#include "tests/unit/server/xdp/af_xdp/veth_namespaces.h"

namespace onepass::testing {
namespace {

constexpr int kPort = 5300;
using xdp::kAck;
using xdp::kRst;
using xdp::kSyn;

std::array<uint8_t, 6> Mac(const char* text) {
  std::array<uint8_t, 6> mac{};
  unsigned b[6];
  std::sscanf(text, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]);
  for (int i = 0; i < 6; ++i) mac[i] = static_cast<uint8_t>(b[i]);
  return mac;
}

// A DNS query for example.com A over TCP (RFC 1035 §4.2.2: the two-byte length first).
std::vector<uint8_t> QueryExampleComA() {
  const std::vector<uint8_t> message = {0x12, 0x34, 0x01, 0x00, 0,   1,   0,   0,   0,   0,
                                        0,    0,    7,    'e',  'x', 'a', 'm', 'p', 'l', 'e',
                                        3,    'c',  'o',  'm',  0,   0,   1,   0,   1};
  std::vector<uint8_t> framed = {0, static_cast<uint8_t>(message.size())};
  framed.insert(framed.end(), message.begin(), message.end());
  return framed;
}

// A segment with these fields, a full window, and an MSS option on a SYN.
xdp::SegmentOut Segment(uint32_t seq, uint32_t ack, uint8_t flags) {
  xdp::SegmentOut segment;
  segment.seq = seq;
  segment.ack = ack;
  segment.flags = flags;
  segment.window = 65535;
  if (flags & kSyn) segment.options.mss = 1460;
  return segment;
}

// `segment` carrying `payload` (which must outlive it).
xdp::SegmentOut WithPayload(xdp::SegmentOut segment, const std::string& payload) {
  segment.payload = {reinterpret_cast<const uint8_t*>(payload.data()), payload.size()};
  return segment;
}

// Raw frames onto the client's end of the veth, as if the client sent them.
class Injector {
 public:
  // In the client's namespace (the caller's thread is there).
  bool Open() {
    fd_ = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
    if (fd_ < 0) return false;
    sockaddr_ll address{};
    address.sll_family = AF_PACKET;
    address.sll_protocol = htons(ETH_P_ALL);
    address.sll_ifindex = static_cast<int>(if_nametoindex(VethNamespaces::kClientIf));
    return bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~Injector() {
    if (fd_ >= 0) close(fd_);
  }
  // The path from the client's `port` to the server's kPort.
  static xdp::ReplyPath PathFrom(uint16_t port) {
    xdp::ReplyPath path;
    path.local_mac = Mac(VethNamespaces::kClientMac);
    path.peer_mac = Mac(VethNamespaces::kServerMac);
    inet_pton(AF_INET, VethNamespaces::kClientAddress, path.key.local.data());
    inet_pton(AF_INET, VethNamespaces::kServerAddress, path.key.peer.data());
    path.key.local_port = port;
    path.key.peer_port = kPort;
    return path;
  }
  // Builds and sends one segment; `mutate` may spoil the built frame first.
  template <typename Mutate>
  bool Send(const xdp::ReplyPath& path, const xdp::SegmentOut& segment, Mutate mutate) {
    std::vector<uint8_t> frame(xdp::kMaxHeaderBytes + segment.payload.size());
    frame.resize(xdp::BuildFrame(path, segment, 0, frame));
    if (frame.empty()) return false;
    mutate(frame);
    // A burst fills the veth's queue (ENOBUFS): the frame waits its turn, as a NIC's would.
    for (int tries = 0; tries < 100000; ++tries) {
      if (send(fd_, frame.data(), frame.size(), 0) == static_cast<ssize_t>(frame.size())) {
        return true;
      }
      if (errno != ENOBUFS && errno != EAGAIN) return false;
      sched_yield();
    }
    return false;
  }
  bool Send(const xdp::ReplyPath& path, const xdp::SegmentOut& segment) {
    return Send(path, segment, [](std::vector<uint8_t>&) {});
  }

 private:
  int fd_ = -1;
};

class XdpHostileSegmentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: network namespaces, XDP and raw sockets";
    for (const char* tool : {"ip", "ethtool", "kdig"}) {
      if (!ProgramExists(tool)) GTEST_SKIP() << tool << " is not installed";
    }
    absl::StatusOr<std::unique_ptr<VethNamespaces>> veth = VethNamespaces::Create();
    ASSERT_TRUE(veth.ok()) << veth.status();
    veth_ = std::move(*veth);
  }
  std::unique_ptr<VethNamespaces> veth_;
};

TEST_F(XdpHostileSegmentsTest, InjectedSegmentsAndASynFloodBreakNothing) {
  std::unique_ptr<ServerProcess> server;
  {
    ScopedNetns in_server(veth_->server_ns_fd());
    ASSERT_TRUE(in_server.ok());
    absl::StatusOr<std::unique_ptr<ServerProcess>> started = ServerProcess::Start(
        {"--handler=dns", absl::StrCat("--listen=", VethNamespaces::kServerAddress, ":", kPort),
         "--workers=1", absl::StrCat("--xdp=", VethNamespaces::kServerIf),
         "--read-timeout-ms=10000", "--metrics-listen=127.0.0.1:0"});
    ASSERT_TRUE(started.ok()) << started.status();
    server = *std::move(started);
  }
  ScopedNetns in_client(veth_->client_ns_fd());
  ASSERT_TRUE(in_client.ok());

  // The held connection: connected over the AF_XDP path, one byte of its request sent.
  const int held = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(held, 0);
  timeval five_s{.tv_sec = 5, .tv_usec = 0};
  setsockopt(held, SOL_SOCKET, SO_RCVTIMEO, &five_s, sizeof(five_s));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(kPort);
  inet_pton(AF_INET, VethNamespaces::kServerAddress, &to.sin_addr);
  ASSERT_EQ(connect(held, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0) << strerror(errno);
  const std::vector<uint8_t> query = QueryExampleComA();
  ASSERT_EQ(send(held, query.data(), 1, 0), 1);
  sockaddr_in from{};
  socklen_t from_size = sizeof(from);
  ASSERT_EQ(getsockname(held, reinterpret_cast<sockaddr*>(&from), &from_size), 0);
  const uint16_t held_port = ntohs(from.sin_port);

  Injector inject;
  ASSERT_TRUE(inject.Open()) << strerror(errno);
  // Frames go in bursts of 256, each once the server has taken the last (its metrics: the
  // frames its AF_XDP socket received), so none is lost to a full ring on the way: every
  // injected frame reaches our TCP. The client kernel's RSTs to our SYN-ACKs count there too.
  int sent = 0;
  int sent_at_last_wait = 0;
  const auto paced = [&](bool ok) {
    sent += ok ? 1 : 0;
    if (sent - sent_at_last_wait < 256) return;
    sent_at_last_wait = sent;
    ScopedNetns in_server(veth_->server_ns_fd());  // its metrics listener is on its loopback
    EXPECT_TRUE(WaitFor(
        [&] {
          return ScrapeValue(server->metrics_address(), "onepass_xdp_packets_in_total") >= sent;
        },
        absl::Seconds(10)))
        << "frames lost on the way to the server after " << sent;
  };
  std::mt19937 random(12345);
  const xdp::ReplyPath held_path = Injector::PathFrom(held_port);
  const std::string junk = "\x12\x34junk";
  for (int i = 0; i < 1000; ++i) {
    const xdp::SegmentOut rst = Segment(random(), 0, kRst);
    const xdp::SegmentOut syn = Segment(random(), 0, kSyn);
    const xdp::SegmentOut ack = Segment(random(), random(), kAck);
    const xdp::SegmentOut data = WithPayload(ack, junk);
    const xdp::SegmentOut rst_ack = Segment(ack.seq, ack.ack, kRst | kAck);
    for (const xdp::SegmentOut* segment : {&rst, &syn, &ack, &data, &rst_ack}) {
      paced(inject.Send(held_path, *segment));
    }
  }
  // The flood: SYNs from 20,000 ports of the client's address. Our SYN-ACKs go to the client's
  // kernel, which has no socket for them and answers each with a RST.
  for (int i = 0; i < 20000; ++i) {
    const xdp::SegmentOut syn = Segment(random(), 0, kSyn);
    paced(inject.Send(Injector::PathFrom(static_cast<uint16_t>(20000 + i)), syn));
  }
  // Malformed: the TCP checksum spoiled, a data offset past the frame, options cut short.
  constexpr size_t kTcpAt = 14 + 20;  // Ethernet, IPv4 without options
  for (int i = 0; i < 1000; ++i) {
    const xdp::SegmentOut syn = Segment(random(), 0, kSyn);
    const xdp::ReplyPath path = Injector::PathFrom(static_cast<uint16_t>(50000 + i));
    paced(inject.Send(path, syn, [](std::vector<uint8_t>& f) { f[kTcpAt + 16] ^= 0x5a; }));
    paced(inject.Send(path, syn, [](std::vector<uint8_t>& f) { f[kTcpAt + 12] = 0xf0; }));
    paced(inject.Send(path, syn, [](std::vector<uint8_t>& f) {
      f[kTcpAt + 20] = 2;   // MSS ...
      f[kTcpAt + 21] = 40;  // ... of a length past the options
    }));
  }
  EXPECT_EQ(sent, 5000 + 20000 + 3000);

  // The held connection survived all of it: the rest of its request gets the answer.
  ASSERT_EQ(send(held, query.data() + 1, query.size() - 1, 0),
            static_cast<ssize_t>(query.size() - 1));
  std::vector<uint8_t> answer(512);
  size_t got = 0;
  while (got < 2 || got < 2 + ((size_t{answer[0]} << 8) | answer[1])) {
    const ssize_t n = recv(held, answer.data() + got, answer.size() - got, 0);
    ASSERT_GT(n, 0) << "the held connection got no answer: " << (n < 0 ? strerror(errno) : "EOF");
    got += static_cast<size_t>(n);
  }
  close(held);
  EXPECT_EQ(answer[2], 0x12);  // our ID
  EXPECT_EQ(answer[3], 0x34);
  EXPECT_EQ(answer[5] & 0x0f, 0);              // NOERROR
  EXPECT_GE((answer[8] << 8) | answer[9], 1);  // an answer record

  // New clients are served as before.
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<CommandResult> kdig = RunCommand(
        {"kdig", absl::StrCat("@", VethNamespaces::kServerAddress), "-p", absl::StrCat(kPort),
         "+tcp", "+short", "+retry=0", "+time=3", "example.com", "A"},
        absl::Seconds(10));
    ASSERT_TRUE(kdig.ok()) << kdig.status();
    EXPECT_EQ(kdig->out, "192.0.2.1\n") << kdig->err;
  }

  ASSERT_EQ(server->Stop(), 0) << server->ReadStderr();
  const std::string out = server->ReadStdout();
  std::printf("%s", out.c_str());
  // Only the held connection and kdig's five held slots: a flood of SYNs holds none.
  EXPECT_EQ(StatValue(out, "xdp_connections"), 1 + 5) << out;
  EXPECT_EQ(StatValue(out, "xdp_requests"), 1 + 5) << out;
  // Every injected frame reached our TCP (paced), and the client kernel's RSTs beside them.
  EXPECT_GE(StatValue(out, "xdp_packets_in"), sent) << out;
  EXPECT_EQ(StatValue(out, "xdp_ring_drops"), 0) << out;
  // Each flood SYN got its SYN-ACK (a cookie, no state); the 3,000 malformed frames, and
  // only they, were dropped unanswered.
  EXPECT_GE(StatValue(out, "xdp_packets_out"), 20000) << out;
  EXPECT_EQ(StatValue(out, "xdp_drops"), 3000) << out;
  EXPECT_EQ(StatValue(out, "xdp_rsts_sent"), 0) << out;
}

}  // namespace
}  // namespace onepass::testing
