// The AF_XDP path end to end on a veth pair between two network namespaces (veth_namespaces.h):
// the XDP program on the server side steers TCP to port kXdpPort into an AF_XDP socket, where a
// TcpEndpoint (server/xdp/tcp) answers; a kernel TCP client in the client namespace connects,
// sends a DNS-style length-prefixed query and reads the answer, over IPv4 and IPv6. TCP to another
// port still reaches the server namespace's kernel. After each test, and after a process that
// attached is SIGKILLed and the next one starts, the interface has no XDP program left.
//
// Needs root (CAP_NET_ADMIN, CAP_BPF, CAP_SYS_ADMIN): skipped otherwise (a failure in CI, which
// runs as root). Every wait is on a condition, bounded by kDeadline.
#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/xdp/af_xdp/xdp_program.h"
#include "server/xdp/af_xdp/xsk_socket.h"
#include "server/xdp/tcp/tcp_endpoint.h"
#include "tests/support/subprocess.h"
#include "tests/unit/server/xdp/af_xdp/veth_namespaces.h"

namespace onepass::xdp {
namespace {

using onepass::testing::ScopedNetns;
using onepass::testing::VethNamespaces;

constexpr uint16_t kXdpPort = 5353;
constexpr uint16_t kKernelPort = 5354;
constexpr uint64_t kDeadlineMs = 20'000;
constexpr char kAnswerPrefix[] = "answer:";

uint64_t NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1'000'000;
}

// DNS over TCP's framing (RFC 1035 §4.2.2): a 2-byte length, then the message. The answer is
// "answer:" and the query, framed the same way.
class FixedAnswerHandler : public TcpRequestHandler {
 public:
  // Interface
  Verdict OnRequest(const TcpRequest& tcp_request, std::vector<uint8_t>* response,
                    size_t* consumed) override {
    const std::span<const uint8_t> request = tcp_request.bytes;
    if (request.size() < 2) return Verdict::kNeedMore;
    const size_t length = (size_t{request[0]} << 8) | request[1];
    if (request.size() < 2 + length) return Verdict::kNeedMore;
    *consumed = request.size();
    const std::string body = kAnswerPrefix + std::string(request.begin() + 2, request.end());
    response->assign({static_cast<uint8_t>(body.size() >> 8), static_cast<uint8_t>(body.size())});
    response->insert(response->end(), body.begin(), body.end());
    return Verdict::kRespond;
  }
};

class XskSink : public TcpFrameSink {
 public:
  explicit XskSink(XskSocket* xsk) : xsk_(xsk) {}
  // Interface
  void Send(std::span<const uint8_t> frame) override { xsk_->Send(frame); }

 private:
  XskSocket* xsk_;
};

std::string Framed(const std::string& body) {
  std::string out{static_cast<char>(body.size() >> 8), static_cast<char>(body.size())};
  return out + body;
}

// In a child: one connection to the server's `address` (IPv4 or IPv6) and `port`, `request` sent,
// everything up to the server's FIN read. Exit status 0 when that equals `expected`.
[[noreturn]] void ClientMain(int client_ns_fd, const char* address, uint16_t port,
                             const std::string& request, const std::string& expected) {
  alarm(kDeadlineMs / 1000);  // never outlive the test
  if (setns(client_ns_fd, CLONE_NEWNET) != 0) _exit(10);
  sockaddr_storage server{};
  socklen_t server_length = 0;
  if (auto* v4 = reinterpret_cast<sockaddr_in*>(&server);
      inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    server_length = sizeof(*v4);
  } else if (auto* v6 = reinterpret_cast<sockaddr_in6*>(&server);
             inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    server_length = sizeof(*v6);
  } else {
    _exit(15);
  }
  const int fd = socket(server.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<sockaddr*>(&server), server_length) != 0) {
    std::perror("client connect");
    _exit(11);
  }
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != ssize_t(request.size())) _exit(12);
  std::string got;
  char buffer[4096];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) break;
    if (n < 0) {
      std::perror("client recv");
      _exit(13);
    }
    got.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (got != expected) {
    std::fprintf(stderr, "client of %s port %u: got %zu bytes, not the %zu expected\n", address,
                 port, got.size(), expected.size());
    _exit(14);
  }
  _exit(0);
}

pid_t StartClient(int client_ns_fd, const char* address, uint16_t port, const std::string& request,
                  const std::string& expected) {
  const pid_t pid = fork();
  if (pid == 0) ClientMain(client_ns_fd, address, port, request, expected);
  return pid;
}

// A kernel listener of the server namespace on `port` of every address, IPv4 and IPv6: "ping"
// in, "pong" out.
int KernelListener(uint16_t port = kKernelPort) {
  const int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int on = 1, off = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_port = htons(port);
  address.sin6_addr = in6addr_any;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || listen(fd, 8) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void AnswerKernelClient(int listen_fd) {
  const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char buffer[16];
  if (recv(fd, buffer, 4, MSG_WAITALL) == 4 && std::memcmp(buffer, "ping", 4) == 0) {
    send(fd, "pong", 4, MSG_NOSIGNAL);
  }
  close(fd);
}

// The server's loop until every child has exited or the deadline: AF_XDP frames into the
// TcpEndpoint, its frames out, the kernel listener answered. Returns each child's exit status
// (-1 when killed at the deadline).
std::vector<int> Serve(XskSocket& xsk, TcpEndpoint& endpoint, int listen_fd,
                       const std::vector<pid_t>& children) {
  std::vector<int> status(children.size(), -2);
  std::array<XskFrame, 64> frames;
  const uint64_t deadline = NowMs() + kDeadlineMs;
  size_t running = children.size();
  while (running > 0 && NowMs() < deadline) {
    pollfd fds[2] = {{xsk.fd(), POLLIN, 0}, {listen_fd, POLLIN, 0}};
    poll(fds, 2, 10);
    const size_t n = xsk.Receive(frames);
    for (size_t i = 0; i < n; ++i) endpoint.OnFrame(frames[i].bytes, NowMs());
    xsk.Release(std::span(frames.data(), n));
    endpoint.OnTimer(NowMs());
    xsk.Flush();
    if (fds[1].revents & POLLIN) AnswerKernelClient(listen_fd);
    for (size_t i = 0; i < children.size(); ++i) {
      int wstatus = 0;
      if (status[i] != -2 || waitpid(children[i], &wstatus, WNOHANG) != children[i]) continue;
      status[i] = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
      --running;
    }
  }
  for (size_t i = 0; i < children.size(); ++i) {
    if (status[i] != -2) continue;
    kill(children[i], SIGKILL);
    waitpid(children[i], nullptr, 0);
    status[i] = -1;
  }
  return status;
}

uint32_t AttachedProgramId(int ifindex) {
  uint32_t id = 0;
  if (bpf_xdp_query_id(ifindex, 0, &id) != 0) return 0;
  return id;
}

class XdpVethTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: network namespaces, XDP and AF_XDP";
    for (const char* tool : {"ip", "ethtool"}) {
      if (!onepass::testing::ProgramExists(tool)) GTEST_SKIP() << tool << " is not installed";
    }
    absl::StatusOr<std::unique_ptr<VethNamespaces>> veth = VethNamespaces::Create();
    ASSERT_TRUE(veth.ok()) << veth.status();
    veth_ = std::move(*veth);
    in_server_ns_ = std::make_unique<ScopedNetns>(veth_->server_ns_fd());
    ASSERT_TRUE(in_server_ns_->ok());
    ifindex_ = static_cast<int>(if_nametoindex(VethNamespaces::kServerIf));
    ASSERT_NE(ifindex_, 0);
  }

  void TearDown() override {
    in_server_ns_.reset();
    veth_.reset();
  }

  // The interface as the kernel and libxdp see it: no XDP program of any kind.
  void ExpectNoXdpProgram() {
    EXPECT_EQ(AttachedProgramId(ifindex_), 0u);
    absl::StatusOr<std::string> details = veth_->ServerLinkDetails();
    ASSERT_TRUE(details.ok()) << details.status();
    // "prog/xdp id N" on the details line; "xdp", "xdpgeneric" among the link's attributes.
    EXPECT_EQ(details->find("prog/xdp"), std::string::npos) << *details;
    EXPECT_EQ(details->find(" xdp"), std::string::npos) << *details;
  }

  XdpProgramConfig Config(XdpModePreference mode) const {
    return {VethNamespaces::kServerIf, {kXdpPort}, mode};
  }

  std::unique_ptr<VethNamespaces> veth_;
  std::unique_ptr<ScopedNetns> in_server_ns_;
  int ifindex_ = 0;
};

class XdpVethModeTest : public XdpVethTest,
                        public ::testing::WithParamInterface<XdpModePreference> {};

TEST_P(XdpVethModeTest, KernelClientGetsItsAnswerOverAfXdpAndOtherPortsReachTheKernel) {
  {
    absl::StatusOr<std::unique_ptr<XdpProgram>> program = XdpProgram::Attach(Config(GetParam()));
    ASSERT_TRUE(program.ok()) << program.status();
    const XdpMode expected =
        GetParam() == XdpModePreference::kGenericOnly ? XdpMode::kGeneric : XdpMode::kNative;
    EXPECT_EQ((*program)->mode(), expected) << (*program)->mode_name();
    std::printf("XDP mode on veth: %s\n", DescribeMode(**program).c_str());
    EXPECT_NE(AttachedProgramId(ifindex_), 0u);

    absl::StatusOr<std::unique_ptr<XskSocket>> xsk =
        XskSocket::Open({.ifname = VethNamespaces::kServerIf, .queue = 0, .ring_size = 256});
    ASSERT_TRUE(xsk.ok()) << xsk.status();
    std::printf("AF_XDP socket: %s\n", (*xsk)->zero_copy() ? "zero-copy" : "copy mode");
    ASSERT_TRUE((*program)->SetSocket(0, (*xsk)->fd()).ok());

    FixedAnswerHandler handler;
    XskSink sink(xsk->get());
    TcpEndpointConfig config;
    config.ports = {kXdpPort};
    TcpEndpoint endpoint(config, &handler, &sink);
    const int listen_fd = KernelListener();
    ASSERT_GE(listen_fd, 0);

    const std::string query = Framed("what is example.com?");
    const std::string answer = Framed(kAnswerPrefix + query.substr(2));
    const int ns = veth_->client_ns_fd();
    const std::vector<pid_t> clients = {
        StartClient(ns, VethNamespaces::kServerAddress, kXdpPort, query, answer),
        StartClient(ns, VethNamespaces::kServerAddress6, kXdpPort, query, answer),
        StartClient(ns, VethNamespaces::kServerAddress, kKernelPort, "ping", "pong")};
    const std::vector<int> status = Serve(**xsk, endpoint, listen_fd, clients);
    close(listen_fd);
    EXPECT_EQ(status[0], 0) << "the IPv4 client over AF_XDP";
    EXPECT_EQ(status[1], 0) << "the IPv6 client over AF_XDP";
    EXPECT_EQ(status[2], 0) << "the client of the kernel listener";
    EXPECT_EQ(endpoint.stats().requests, 2u);
    EXPECT_EQ(endpoint.stats().responses, 2u);
    EXPECT_EQ(endpoint.stats().checksum_bad, 0u);
    // Only our port's frames reached the socket: the kernel client's went to the kernel.
    EXPECT_EQ(endpoint.stats().not_ours, 0u);
    EXPECT_EQ((*xsk)->stats().tx_no_frame, 0u);
    // The socket goes first (XdpProgram's destructor detaches after the map entry is gone).
    xsk->reset();
  }
  ExpectNoXdpProgram();
}

INSTANTIATE_TEST_SUITE_P(Modes, XdpVethModeTest,
                         ::testing::Values(XdpModePreference::kNativeOnly,
                                           XdpModePreference::kGenericOnly),
                         [](const ::testing::TestParamInfo<XdpModePreference>& info) {
                           return info.param == XdpModePreference::kNativeOnly ? "Native"
                                                                               : "Generic";
                         });

TEST_F(XdpVethTest, CopyLeftByAKilledProcessIsRemovedByTheNextAttach) {
  int ready[2];
  ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
  const pid_t child = fork();
  if (child == 0) {
    alarm(kDeadlineMs / 1000);
    absl::StatusOr<std::unique_ptr<XdpProgram>> program =
        XdpProgram::Attach(Config(XdpModePreference::kNativeThenGeneric));
    const char byte = program.ok() ? 1 : 0;
    (void)!write(ready[1], &byte, 1);
    for (;;) pause();  // until SIGKILLed: the destructor must not run
  }
  close(ready[1]);
  pollfd fd{ready[0], POLLIN, 0};
  char byte = 0;
  const bool attached = poll(&fd, 1, kDeadlineMs) == 1 && read(ready[0], &byte, 1) == 1 && byte;
  close(ready[0]);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(attached) << "the child could not attach";
  // The premise: a killed loader leaves its program running.
  EXPECT_EQ(CountXdpSteer(ifindex_).value_or(-1), 1);
  EXPECT_NE(AttachedProgramId(ifindex_), 0u);
  {
    absl::StatusOr<std::unique_ptr<XdpProgram>> program =
        XdpProgram::Attach(Config(XdpModePreference::kNativeThenGeneric));
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_EQ(CountXdpSteer(ifindex_).value_or(-1), 1) << "the stale copy was not replaced";
  }
  ExpectNoXdpProgram();
  EXPECT_EQ(CountXdpSteer(ifindex_).value_or(-1), 0);
}

// The grace period (kernel_flows_grace) is the end time in the program's map, on the clock
// the program reads, until EndKernelFlowsGrace() sets it to 0, which the program reads as none;
// BeginDrain() sets it to the end of time and raises the drain flag (SYNs to the kernel).
TEST_F(XdpVethTest, TheGracePeriodIsInTheProgramsMapUntilEnded) {
  XdpProgramConfig config = Config(XdpModePreference::kNativeThenGeneric);
  config.kernel_flows_grace = absl::Seconds(60);
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const uint64_t now_ns = static_cast<uint64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  {
    absl::StatusOr<std::unique_ptr<XdpProgram>> program = XdpProgram::Attach(config);
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<uint64_t> until = (*program)->KernelFlowsGraceEnd();
    ASSERT_TRUE(until.ok()) << until.status();
    EXPECT_GE(*until, now_ns + 60'000'000'000ull);
    EXPECT_LT(*until, now_ns + 70'000'000'000ull);
    ASSERT_TRUE((*program)->EndKernelFlowsGrace().ok());
    EXPECT_EQ((*program)->KernelFlowsGraceEnd().value_or(1), 0u);
  }
  config.kernel_flows_grace = absl::ZeroDuration();
  absl::StatusOr<std::unique_ptr<XdpProgram>> program = XdpProgram::Attach(config);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->KernelFlowsGraceEnd().value_or(1), 0u);
  EXPECT_TRUE((*program)->EndKernelFlowsGrace().ok());  // nothing to end
  EXPECT_FALSE((*program)->Draining().value_or(true));

  // A drain: the lookups until the detach, which an end of the grace does not cut short.
  ASSERT_TRUE((*program)->BeginDrain().ok());
  EXPECT_TRUE((*program)->Draining().value_or(false));
  EXPECT_EQ((*program)->KernelFlowsGraceEnd().value_or(0), UINT64_MAX);
  EXPECT_TRUE((*program)->EndKernelFlowsGrace().ok());
  EXPECT_EQ((*program)->KernelFlowsGraceEnd().value_or(0), UINT64_MAX);
}

// While this process drains, a SYN to the served port goes to the kernel's listener. When that
// listener answers with a SYN cookie (its queue full: a SYN flood during a restart; here
// tcp_syncookies = 2, a cookie for every SYN), no kernel socket has the 4-tuple until the
// client's ACK brings the cookie back: the program checks the cookie (bpf_tcp_check_syncookie)
// and passes that ACK to the kernel, instead of steering it to us, who would reset it.
TEST_F(XdpVethTest, WhileDrainingTheKernelsSynCookieHandshakesStayTheKernels) {
  absl::StatusOr<std::unique_ptr<XdpProgram>> program =
      XdpProgram::Attach(Config(XdpModePreference::kNativeOnly));
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<std::unique_ptr<XskSocket>> xsk =
      XskSocket::Open({.ifname = VethNamespaces::kServerIf, .queue = 0, .ring_size = 256});
  ASSERT_TRUE(xsk.ok()) << xsk.status();
  ASSERT_TRUE((*program)->SetSocket(0, (*xsk)->fd()).ok());
  ASSERT_TRUE((*program)->BeginDrain().ok());
  {
    // This thread is in the server namespace: the sysctl is that namespace's (gone with it).
    const int sysctl = open("/proc/sys/net/ipv4/tcp_syncookies", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(sysctl, 0);
    ASSERT_EQ(write(sysctl, "2", 1), 1);
    close(sysctl);
  }
  FixedAnswerHandler handler;
  XskSink sink(xsk->get());
  TcpEndpointConfig config;
  config.ports = {kXdpPort};
  TcpEndpoint endpoint(config, &handler, &sink);
  const int listen_fd = KernelListener(kXdpPort);
  ASSERT_GE(listen_fd, 0);

  const int ns = veth_->client_ns_fd();
  const std::vector<pid_t> clients = {
      StartClient(ns, VethNamespaces::kServerAddress, kXdpPort, "ping", "pong"),
      StartClient(ns, VethNamespaces::kServerAddress6, kXdpPort, "ping", "pong")};
  const std::vector<int> status = Serve(**xsk, endpoint, listen_fd, clients);
  close(listen_fd);
  EXPECT_EQ(status[0], 0) << "the IPv4 client of the kernel's listener";
  EXPECT_EQ(status[1], 0) << "the IPv6 client of the kernel's listener";
  // None of their segments came to us.
  EXPECT_EQ(endpoint.stats().frames_in, 0u);
  EXPECT_EQ(endpoint.stats().rsts_sent, 0u);
  xsk->reset();
}

TEST_F(XdpVethTest, NoSuchInterfaceSaysSo) {
  absl::StatusOr<std::unique_ptr<XdpProgram>> program =
      XdpProgram::Attach({"nosuch0", {kXdpPort}, XdpModePreference::kNativeThenGeneric});
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(program.status().message().find("no interface nosuch0"), std::string::npos)
      << program.status();
}

// Loopback has no native XDP: native alone fails and says so, the fallback takes generic.
TEST_F(XdpVethTest, DriverWithoutNativeXdpSaysSoAndFallsBackToGeneric) {
  absl::StatusOr<std::unique_ptr<XdpProgram>> native =
      XdpProgram::Attach({"lo", {kXdpPort}, XdpModePreference::kNativeOnly});
  ASSERT_FALSE(native.ok());
  EXPECT_EQ(native.status().code(), absl::StatusCode::kFailedPrecondition) << native.status();
  EXPECT_NE(native.status().message().find("has no XDP in this mode"), std::string::npos)
      << native.status();
  const int lo = static_cast<int>(if_nametoindex("lo"));
  EXPECT_EQ(AttachedProgramId(lo), 0u) << "a failed attach left a program";

  absl::StatusOr<std::unique_ptr<XdpProgram>> fallback =
      XdpProgram::Attach({"lo", {kXdpPort}, XdpModePreference::kNativeThenGeneric});
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_EQ((*fallback)->mode(), XdpMode::kGeneric);
  fallback->reset();
  EXPECT_EQ(AttachedProgramId(lo), 0u);
}

// Without privileges the error names them (in a child: setuid cannot be undone).
TEST_F(XdpVethTest, NotRootSaysSo) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(kDeadlineMs / 1000);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    absl::StatusOr<std::unique_ptr<XdpProgram>> program =
        XdpProgram::Attach(Config(XdpModePreference::kNativeThenGeneric));
    if (program.ok()) _exit(11);
    if (program.status().code() != absl::StatusCode::kPermissionDenied) _exit(12);
    if (program.status().message().find("run as root") == std::string::npos) _exit(13);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setuid, 11: attached, 12: code, 13: message";
  ExpectNoXdpProgram();
}

}  // namespace
}  // namespace onepass::xdp
