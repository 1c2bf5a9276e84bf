// onepassd --xdp end to end: two network namespaces joined by a veth pair
// (tests/unit/server/xdp/af_xdp/veth_namespaces.h), onepassd in the server one with its embedded
// example.com zone, kdig +tcp and dig +tcp in the client one. Every query is asked of onepassd
// started with --xdp (its AF_XDP path answers: the counters in its exit line say so) and of the
// same onepassd without it (the kernel's sockets): the answers must be the same, header (but the
// ID), sections and EDNS; in native and in generic mode. After each XDP run the interface carries
// no XDP program.
//
// Needs root (namespaces, XDP): skipped otherwise (CI runs as root). Each command is bounded
// (RunCommand's timeout), onepassd's start waits on "ready"; the namespaces go with the fixture
// whatever happens.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/support/metrics_client.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/dns/dns_test_util.h"
#include "tests/unit/server/xdp/af_xdp/veth_namespaces.h"

namespace onepass::testing {
namespace {

constexpr int kPort = 5300;

struct Query {
  std::string name, type;
};

const std::vector<Query>& Queries() {
  static const auto* queries = new std::vector<Query>{
      {"example.com", "A"},     {"example.com", "AAAA"},     {"example.com", "MX"},
      {"example.com", "TXT"},   {"example.com", "NS"},       {"example.com", "SOA"},
      {"ns1.example.com", "A"}, {"nosuch.example.com", "A"}, {"example.org", "A"},
      {"example.com", "ANY"}};
  return *queries;
}

// The client's output with what must differ between two runs taken out: the message ID.
std::string WithoutId(const std::string& text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::string kept(line);
    if (const size_t id = kept.find("id: "); id != std::string::npos) {
      kept.erase(id + 4, kept.find_first_not_of("0123456789", id + 4) - (id + 4));
    }
    if (const size_t id = kept.find("ID: "); id != std::string::npos) {
      kept.erase(id + 4, kept.find_first_not_of("0123456789", id + 4) - (id + 4));
    }
    absl::StrAppend(&out, kept, "\n");
  }
  return out;
}

// example.com A over TCP (its two-byte length first), as bytes to send.
std::string FramedQuery() {
  const std::vector<uint8_t> query =
      dns::testing::Framed(dns::testing::MakeQuery("example.com", "A"));
  return std::string(query.begin(), query.end());
}

// One DNS-over-TCP exchange from the client's address `source6` and port `port` (fixed, so that
// a second exchange reuses the 4-tuple) to the server's IPv6 address: sends `request`, reads
// until the server closes. In the caller's network namespace.
absl::StatusOr<std::string> ExchangeFromPort(const char* source6, uint16_t port,
                                             const std::string& request) {
  const int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  timeval five_s{.tv_sec = 5, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &five_s, sizeof(five_s));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &five_s, sizeof(five_s));
  sockaddr_in6 from{};
  from.sin6_family = AF_INET6;
  from.sin6_port = htons(port);
  sockaddr_in6 to{};
  to.sin6_family = AF_INET6;
  to.sin6_port = htons(kPort);
  inet_pton(AF_INET6, source6, &from.sin6_addr);
  inet_pton(AF_INET6, VethNamespaces::kServerAddress6, &to.sin6_addr);
  std::string answer;
  absl::Status status;
  if (bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0 ||
      send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) {
    status = absl::InternalError(absl::StrCat("bind, connect or send: ", std::strerror(errno)));
  }
  char buffer[2048];
  for (ssize_t n = 1; status.ok() && n > 0;) {
    n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0) status = absl::InternalError(absl::StrCat("recv: ", std::strerror(errno)));
    if (n > 0) answer.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (!status.ok()) return status;
  return answer;
}

class XdpOnepassdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: network namespaces, XDP and AF_XDP";
    for (const char* tool : {"ip", "ethtool", "kdig", "dig"}) {
      if (!ProgramExists(tool)) GTEST_SKIP() << tool << " is not installed";
    }
    absl::StatusOr<std::unique_ptr<VethNamespaces>> veth = VethNamespaces::Create(Queues());
    ASSERT_TRUE(veth.ok()) << veth.status();
    veth_ = std::move(*veth);
  }
  virtual int Queues() const { return 1; }

  // onepassd in the server namespace (it inherits the test thread's), on kPort of the
  // server's IPv4 and IPv6 addresses, with `extra` flags.
  std::unique_ptr<ServerProcess> StartServer(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {
        absl::StrCat("--listen=", VethNamespaces::kServerAddress, ":", kPort),
        absl::StrCat("--listen=[", VethNamespaces::kServerAddress6, "]:", kPort)};
    args.insert(args.end(), extra.begin(), extra.end());
    return StartDnsServer(args);
  }
  // The same with only `args` (--listen among them).
  std::unique_ptr<ServerProcess> StartDnsServer(std::vector<std::string> args) {
    ScopedNetns in_server(veth_->server_ns_fd());
    EXPECT_TRUE(in_server.ok());
    args.insert(args.begin(), {"--handler=dns", "--workers=1"});
    absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(args);
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }

  // `client` (kdig or dig) in the client namespace, over TCP, one try of `wait_s` seconds.
  std::string Ask(const std::string& client, const std::string& address, const Query& q,
                  int wait_s = 3) {
    std::vector<std::string> argv = {"ip",   "netns",
                                     "exec", veth_->client_ns(),
                                     client, absl::StrCat("@", address),
                                     "-p",   absl::StrCat(kPort),
                                     "+tcp"};
    if (client == "kdig") {
      argv.insert(argv.end(), {"+noall", "+header", "+answer", "+authority", "+additional",
                               "+retry=0", absl::StrCat("+time=", wait_s)});
    } else {
      // +nocookie: dig's client cookie is random, and a server cookie would echo it.
      argv.insert(argv.end(), {"+noall", "+comments", "+answer", "+authority", "+additional",
                               "+nocookie", "+tries=1", absl::StrCat("+time=", wait_s)});
    }
    argv.insert(argv.end(), {q.name, q.type});
    absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(10));
    if (!result.ok())
      return absl::StrCat("(", client, " did not run: ", result.status().message(), ")");
    if (result->exit_code != 0) {
      return absl::StrCat("(", client, " exit ", result->exit_code, ": ", result->err, ")");
    }
    return WithoutId(result->out);
  }

  // Every query by `clients` to both addresses, in order.
  std::vector<std::string> AskAll(const std::vector<std::string>& clients = {"kdig", "dig"},
                                  int wait_s = 3) {
    std::vector<std::string> answers;
    for (const std::string& client : clients) {
      for (const char* address :
           {VethNamespaces::kServerAddress, VethNamespaces::kServerAddress6}) {
        for (const Query& q : Queries()) answers.push_back(Ask(client, address, q, wait_s));
      }
    }
    return answers;
  }

  std::unique_ptr<VethNamespaces> veth_;
};

// --xdp-mode native and generic.
class XdpOnepassdModeTest : public XdpOnepassdTest,
                            public ::testing::WithParamInterface<std::string> {};

TEST_P(XdpOnepassdModeTest, KdigAndDigGetTheKernelPathsAnswersOverAfXdp) {
  std::vector<std::string> kernel_answers;
  {
    std::unique_ptr<ServerProcess> kernel = StartServer({});
    ASSERT_NE(kernel, nullptr);
    kernel_answers = AskAll();
    ASSERT_EQ(kernel->Stop(), 0) << kernel->ReadStderr();
  }
  std::unique_ptr<ServerProcess> xdp =
      StartServer({absl::StrCat("--xdp=", VethNamespaces::kServerIf), "--xdp-mode=" + GetParam(),
                   "--metrics-listen=127.0.0.1:0"});
  ASSERT_NE(xdp, nullptr);
  // The kernel had no connection of the port left (the first server's are in TIME_WAIT or
  // gone): the program's socket lookups end at once.
  EXPECT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(xdp->ReadStderr(),
                                 "no kernel connection on the served ports when the AF_XDP path "
                                 "came up; the XDP program no longer looks segments up");
      },
      absl::Seconds(10)))
      << xdp->ReadStderr();
  const std::vector<std::string> xdp_answers = AskAll();
  std::string metrics;
  {
    ScopedNetns in_server(veth_->server_ns_fd());  // its metrics listener is on its loopback
    metrics = HttpGet(xdp->metrics_address(), "/metrics");
  }
  EXPECT_NE(metrics.find(absl::StrCat("onepass_xdp_requests_total ", Queries().size() * 4)),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("# HELP onepass_xdp_packets_in_total"), std::string::npos);
  EXPECT_NE(metrics.find("onepass_xdp_kick_errors_total 0"), std::string::npos) << metrics;
  ASSERT_EQ(xdp->Stop(), 0) << xdp->ReadStderr();
  const std::string out = xdp->ReadStdout();
  const std::string log = xdp->ReadStderr();
  std::printf("%s", log.c_str());  // the mode line, for the CI log

  // AskAll asks the same list both times: the answers pair up by index.
  for (size_t i = 0; i < kernel_answers.size(); ++i) {
    EXPECT_NE(kernel_answers[i].find("status: "), std::string::npos)
        << "query " << i << ": no answer from the kernel path: " << kernel_answers[i];
    EXPECT_EQ(xdp_answers[i], kernel_answers[i]) << "query " << i;
  }
  // The XDP path answered every one of them, and the kernel's listeners none.
  const int queries = static_cast<int>(kernel_answers.size());
  EXPECT_EQ(StatValue(out, "xdp_requests"), queries) << out;
  EXPECT_GE(StatValue(out, "xdp_connections"), queries) << out;
  EXPECT_GT(StatValue(out, "xdp_packets_in"), 0) << out;
  EXPECT_GT(StatValue(out, "xdp_packets_out"), 0) << out;
  EXPECT_EQ(StatValue(out, "xdp_kick_errors"), 0) << out;  // exported (-1: not), and none failed
  EXPECT_EQ(StatValue(out, "accepted"), 0) << out;
  EXPECT_NE(log.find("xdp xs0: " + GetParam() + " mode"), std::string::npos) << log;

  // Detached on SIGTERM: nothing of ours is left on the interface.
  absl::StatusOr<std::string> details = veth_->ServerLinkDetails();
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_EQ(details->find("prog/xdp"), std::string::npos) << *details;
}

INSTANTIATE_TEST_SUITE_P(Modes, XdpOnepassdModeTest, ::testing::Values("native", "generic"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// --check says which mode the interface gets, and leaves nothing attached.
TEST_F(XdpOnepassdTest, CheckSaysTheModeOfEachInterface) {
  ScopedNetns in_server(veth_->server_ns_fd());
  ASSERT_TRUE(in_server.ok());
  absl::StatusOr<CommandResult> check =
      RunCommand({OnepassdPath(), "--handler=dns", "--check",
                  absl::StrCat("--xdp=", VethNamespaces::kServerIf, ",nosuch0")},
                 absl::Seconds(20));
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->exit_code, 0) << check->err;
  EXPECT_NE(check->out.find("check: xdp xs0: native mode"), std::string::npos) << check->out;
  EXPECT_NE(check->out.find("check: xdp nosuch0: unavailable"), std::string::npos) << check->out;
  absl::StatusOr<std::string> details = veth_->ServerLinkDetails();
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_EQ(details->find("prog/xdp"), std::string::npos) << *details;
}

// `dnsperf -m tcp` in the client namespace: every query of Queries() five times, over two
// connections each kept for all of its queries (keep-alive, pipelined up to 10 outstanding).
// Returns its report's "Queries completed" and "Response codes" lines.
std::string DnsperfOverTcp(const VethNamespaces& veth, const std::string& queries_file) {
  absl::StatusOr<CommandResult> run = RunCommand({"ip",
                                                  "netns",
                                                  "exec",
                                                  veth.client_ns(),
                                                  "dnsperf",
                                                  "-m",
                                                  "tcp",
                                                  "-s",
                                                  VethNamespaces::kServerAddress,
                                                  "-p",
                                                  absl::StrCat(kPort),
                                                  "-d",
                                                  queries_file,
                                                  "-n",
                                                  "5",
                                                  "-c",
                                                  "2",
                                                  "-q",
                                                  "10",
                                                  "-t",
                                                  "5"},
                                                 absl::Seconds(30));
  if (!run.ok()) return absl::StrCat("(dnsperf did not run: ", run.status().message(), ")");
  std::string kept;
  for (absl::string_view line : absl::StrSplit(run->out, '\n')) {
    if (absl::StrContains(line, "Queries completed") || absl::StrContains(line, "Queries lost") ||
        absl::StrContains(line, "Response codes")) {
      absl::StrAppend(&kept, absl::StripAsciiWhitespace(line), "\n");
    }
  }
  return kept.empty() ? absl::StrCat("(no report: ", run->out, run->err, ")") : kept;
}

// dnsperf -m tcp keeps its connections and sends each next query without waiting for the
// answer to the last: over AF_XDP (keep-alive in our TCP, as --keepalive-ms gives the kernel
// path) every query is answered, with the same response codes as over the kernel's sockets.
TEST_F(XdpOnepassdTest, DnsperfOverTcpKeepsItsConnectionsAndLosesNothing) {
  if (!ProgramExists("dnsperf")) GTEST_SKIP() << "dnsperf is not installed";
  const std::string queries_file = ::testing::TempDir() + "xdp-dnsperf-queries.txt";
  {
    std::string text;
    for (const Query& q : Queries()) absl::StrAppend(&text, q.name, " ", q.type, "\n");
    FILE* f = std::fopen(queries_file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  std::string kernel_report;
  {
    std::unique_ptr<ServerProcess> kernel = StartServer({});
    ASSERT_NE(kernel, nullptr);
    kernel_report = DnsperfOverTcp(*veth_, queries_file);
    ASSERT_EQ(kernel->Stop(), 0) << kernel->ReadStderr();
  }
  std::unique_ptr<ServerProcess> xdp =
      StartServer({absl::StrCat("--xdp=", VethNamespaces::kServerIf)});
  ASSERT_NE(xdp, nullptr);
  const std::string xdp_report = DnsperfOverTcp(*veth_, queries_file);
  ASSERT_EQ(xdp->Stop(), 0) << xdp->ReadStderr();
  const std::string out = xdp->ReadStdout();
  std::printf("kernel:\n%sxdp:\n%s", kernel_report.c_str(), xdp_report.c_str());

  const size_t total = Queries().size() * 5;
  EXPECT_NE(kernel_report.find(absl::StrCat("Queries completed:    ", total, " (100.00%)")),
            std::string::npos)
      << kernel_report;
  EXPECT_EQ(xdp_report, kernel_report);
  // Over AF_XDP alone, on the two connections dnsperf opened (a kept connection each).
  EXPECT_EQ(StatValue(out, "accepted"), 0) << out;
  EXPECT_EQ(StatValue(out, "xdp_connections"), 2) << out;
  EXPECT_EQ(StatValue(out, "xdp_rsts_sent"), 0) << out;
}

// A kept-alive connection over AF_XDP (a kernel client: the socket is made in the client's
// namespace) gets our FIN once it has sent nothing for --keepalive-ms, as over the kernel's
// sockets; a request it sends after that FIN gets a RST. Both are counted in the exit line.
TEST_F(XdpOnepassdTest, AnIdleKeptConnectionGetsOurFinAndDataAfterItARst) {
  std::unique_ptr<ServerProcess> xdp =
      StartServer({absl::StrCat("--xdp=", VethNamespaces::kServerIf), "--keepalive-ms=300"});
  ASSERT_NE(xdp, nullptr);
  absl::StatusOr<TcpClient> client = absl::InternalError("not connected");
  {
    ScopedNetns in_client(veth_->client_ns_fd());
    ASSERT_TRUE(in_client.ok());
    client = TcpClient::Connect(VethNamespaces::kServerAddress, kPort);
  }
  ASSERT_TRUE(client.ok()) << client.status();
  const std::string bytes = FramedQuery();
  ASSERT_TRUE(client->Send(bytes).ok());
  // The answer, then our FIN after the keep-alive time (well before the 5 s read deadline).
  absl::StatusOr<std::string> answer = client->ReadUntilClose(absl::Seconds(5));
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_GT(answer->size(), 14u);
  EXPECT_EQ(answer->substr(2, 2), bytes.substr(2, 2));  // our query's ID (after the length)

  // A second request on the half-closed connection: the server's RST sets the socket's error.
  ASSERT_TRUE(client->Send(bytes).ok());
  EXPECT_TRUE(WaitFor(
      [&] {
        int error = 0;
        socklen_t length = sizeof(error);
        return getsockopt(client->fd(), SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error != 0;
      },
      absl::Seconds(5)));
  ASSERT_EQ(xdp->Stop(), 0) << xdp->ReadStderr();
  const std::string out = xdp->ReadStdout();
  EXPECT_EQ(StatValue(out, "xdp_connections"), 1) << out;
  EXPECT_EQ(StatValue(out, "xdp_requests"), 1) << out;
  EXPECT_EQ(StatValue(out, "xdp_keepalive_closes"), 1) << out;
  EXPECT_EQ(StatValue(out, "xdp_data_after_close"), 1) << out;
  EXPECT_GE(StatValue(out, "xdp_rsts_sent"), 1) << out;
  EXPECT_EQ(StatValue(out, "accepted"), 0) << out;
}

// A connection the kernel accepted before the XDP program came up (here another onepassd's,
// on kernel sockets alone; in a restart, the kernel listeners' in the gap before the new
// process takes the interface) stays the kernel's: its later segments pass to the kernel
// (the program's socket lookup while kernel connections may live), not to our TCP, which
// would reset it. New connections go over AF_XDP meanwhile.
TEST_F(XdpOnepassdTest, AKernelConnectionFromBeforeTheAttachIsLeftToTheKernel) {
  // The two cannot share a listening address: the kernel one listens on the IPv6 address, the
  // XDP one on the IPv4 address. The XDP program steers the port on every address.
  std::unique_ptr<ServerProcess> kernel =
      StartDnsServer({absl::StrCat("--listen=[", VethNamespaces::kServerAddress6, "]:", kPort)});
  ASSERT_NE(kernel, nullptr);
  const std::string bytes = FramedQuery();
  absl::StatusOr<TcpClient> held = absl::InternalError("not connected");
  {
    ScopedNetns in_client(veth_->client_ns_fd());
    ASSERT_TRUE(in_client.ok());
    held = TcpClient::Connect(VethNamespaces::kServerAddress6, kPort);
  }
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_TRUE(held->Send(bytes.substr(0, 5)).ok());  // half the request: the kernel's, parked

  std::unique_ptr<ServerProcess> xdp =
      StartDnsServer({absl::StrCat("--listen=", VethNamespaces::kServerAddress, ":", kPort),
                      absl::StrCat("--xdp=", VethNamespaces::kServerIf)});
  ASSERT_NE(xdp, nullptr);
  ASSERT_TRUE(held->Send(bytes.substr(5)).ok());
  absl::StatusOr<std::string> answer = held->ReadUntilClose(absl::Seconds(5));
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_GT(answer->size(), 14u);
  EXPECT_EQ(answer->substr(2, 2), bytes.substr(2, 2));  // our query's ID
  // A new client meanwhile: over AF_XDP.
  EXPECT_NE(Ask("kdig", VethNamespaces::kServerAddress, Queries()[0]).find("NOERROR"),
            std::string::npos);
  // Once that connection has gone (the kernel server closed first: TIME_WAIT, which no longer
  // counts), so have the program's lookups, long before its grace period would end them.
  EXPECT_FALSE(absl::StrContains(xdp->ReadStderr(), "no longer looks segments up"));
  held = absl::CancelledError("closed by the test");
  EXPECT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(xdp->ReadStderr(),
                                 "the kernel's connections on the served ports from before the "
                                 "AF_XDP path came up (1) have closed; the XDP program no longer "
                                 "looks segments up");
      },
      absl::Seconds(10)))
      << xdp->ReadStderr();

  ASSERT_EQ(xdp->Stop(), 0) << xdp->ReadStderr();
  ASSERT_EQ(kernel->Stop(), 0) << kernel->ReadStderr();
  const std::string xdp_out = xdp->ReadStdout();
  const std::string kernel_out = kernel->ReadStdout();
  EXPECT_EQ(StatValue(kernel_out, "served"), 1) << kernel_out;
  EXPECT_EQ(StatValue(xdp_out, "xdp_requests"), 1) << xdp_out;
  EXPECT_EQ(StatValue(xdp_out, "xdp_rsts_sent"), 0) << xdp_out;
  EXPECT_EQ(StatValue(xdp_out, "xdp_drops"), 0) << xdp_out;
}

// The kernel path's closed connections linger in TIME_WAIT on the server (it closes first). A
// client that reuses such a 4-tuple after the XDP program came up opens a new connection of
// ours (its SYN came to us): its segments are ours too, not the TIME_WAIT socket's, even while
// the program passes the kernel's live connections on.
TEST_F(XdpOnepassdTest, AClientReusingAFourTupleInTimeWaitIsServedOverAfXdp) {
  constexpr uint16_t kClientPort = 41234;
  const std::string bytes = FramedQuery();
  std::unique_ptr<ServerProcess> kernel =
      StartDnsServer({absl::StrCat("--listen=[", VethNamespaces::kServerAddress6, "]:", kPort),
                      "--keepalive-ms=0"});
  ASSERT_NE(kernel, nullptr);
  // One exchange from the client's namespace, always from kClientPort.
  const auto exchange = [&]() -> absl::StatusOr<std::string> {
    ScopedNetns in_client(veth_->client_ns_fd());
    if (!in_client.ok()) return absl::InternalError("cannot enter the client's namespace");
    return ExchangeFromPort(VethNamespaces::kClientAddress6, kClientPort, bytes);
  };
  absl::StatusOr<std::string> first = exchange();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_GT(first->size(), 14u);
  // The server's side of it in TIME_WAIT.
  const auto time_wait = [&] {
    absl::StatusOr<CommandResult> ss =
        RunCommand({"ip", "netns", "exec", veth_->server_ns(), "ss", "-Htan", "state", "time-wait"},
                   absl::Seconds(5));
    return ss.ok() && absl::StrContains(ss->out, absl::StrCat(":", kClientPort));
  };
  ASSERT_TRUE(WaitFor(time_wait, absl::Seconds(5)));

  std::unique_ptr<ServerProcess> xdp =
      StartDnsServer({absl::StrCat("--listen=", VethNamespaces::kServerAddress, ":", kPort),
                      absl::StrCat("--xdp=", VethNamespaces::kServerIf), "--keepalive-ms=0"});
  ASSERT_NE(xdp, nullptr);
  ASSERT_TRUE(time_wait());
  absl::StatusOr<std::string> second = exchange();
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_GT(second->size(), 14u);
  EXPECT_EQ(second->substr(2, 2), bytes.substr(2, 2));  // our query's ID
  ASSERT_EQ(xdp->Stop(), 0) << xdp->ReadStderr();
  ASSERT_EQ(kernel->Stop(), 0) << kernel->ReadStderr();
  const std::string xdp_out = xdp->ReadStdout();
  EXPECT_EQ(StatValue(xdp_out, "xdp_requests"), 1) << xdp_out;
  EXPECT_EQ(StatValue(kernel->ReadStdout(), "served"), 1);
}

// How many TCP frames the client namespace's nftables table `loss` dropped in chain `chain`.
int LossDrops(const VethNamespaces& veth, const std::string& chain) {
  absl::StatusOr<CommandResult> listed = RunCommand(
      {"ip", "netns", "exec", veth.client_ns(), "nft", "list", "chain", "inet", "loss", chain},
      absl::Seconds(10));
  if (!listed.ok() || listed->exit_code != 0) return -1;
  const size_t at = listed->out.find("counter packets ");
  if (at == std::string::npos) return -1;
  return std::atoi(listed->out.c_str() + at + std::strlen("counter packets "));
}

// Frames lost both ways: nftables in the client's namespace drops 20% of the TCP segments
// after the handshake that the client sends and of those it receives (this kernel has no netem;
// the client's side is the kernel's, so netfilter sees both directions). Every query is still
// answered, as without loss: lost answers and FINs are retransmitted by our TCP, lost requests
// and ACKs by the client's, and duplicates are answered again. SYNs and SYN-ACKs are spared:
// a lost one only costs the client's 1 s SYN timeout (our SYN-ACK holds no state to lose), and
// sparing them keeps the test a few seconds long.
TEST_F(XdpOnepassdTest, TwentyPercentLossEachWayLosesNoAnswer) {
  if (!ProgramExists("nft")) GTEST_SKIP() << "nft (nftables) is not installed";
  std::unique_ptr<ServerProcess> xdp =
      StartServer({absl::StrCat("--xdp=", VethNamespaces::kServerIf)});
  ASSERT_NE(xdp, nullptr);
  const std::vector<std::string> clean = AskAll({"kdig"});
  const std::string rules =
      "table inet loss {\n"
      "  chain out { type filter hook output priority 0; meta l4proto tcp tcp flags & syn == 0 "
      "numgen random mod 100 < 20 counter drop; }\n"
      "  chain in { type filter hook input priority 0; meta l4proto tcp tcp flags & syn == 0 "
      "numgen random mod 100 < 20 counter drop; }\n"
      "}\n";
  absl::StatusOr<CommandResult> added =
      RunCommand({"ip", "netns", "exec", veth_->client_ns(), "sh", "-c",
                  absl::StrCat("printf '", rules, "' | nft -f -")},
                 absl::Seconds(10));
  ASSERT_TRUE(added.ok() && added->exit_code == 0)
      << (added.ok() ? added->err : added.status().ToString());
  // Each loss costs a retransmission timeout (200 ms, doubling when lost again).
  const std::vector<std::string> lossy = AskAll({"kdig"}, /*wait_s=*/15);
  const int dropped_out = LossDrops(*veth_, "out");
  const int dropped_in = LossDrops(*veth_, "in");
  ASSERT_EQ(xdp->Stop(), 0) << xdp->ReadStderr();
  const std::string out = xdp->ReadStdout();
  std::printf("dropped %d frames from the client, %d to it; onepassd: %s\n", dropped_out,
              dropped_in, out.c_str());

  ASSERT_EQ(lossy.size(), clean.size());
  for (size_t i = 0; i < clean.size(); ++i) {
    EXPECT_NE(clean[i].find("status: "), std::string::npos) << clean[i];
    EXPECT_EQ(lossy[i], clean[i]) << "query " << i;
  }
  // The loss happened both ways (40 to 80 segments each way at 20%: none lost is 1 in 7,000 at
  // worst, the fewer way).
  EXPECT_GT(dropped_out, 0);
  EXPECT_GT(dropped_in, 0);
  // Every answer came over the XDP path, whatever was lost on the way.
  EXPECT_EQ(StatValue(out, "accepted"), 0) << out;
  EXPECT_GE(StatValue(out, "xdp_requests"), static_cast<int>(clean.size() * 2)) << out;
}

// A onepassd killed with SIGKILL leaves its program on the interface; the next one removes it,
// says so and serves over AF_XDP. Beside it the kernel's listeners still serve what does not
// come through the interface (here the server's own namespace, over its loopback route).
TEST_F(XdpOnepassdTest, AKilledServersProgramIsRemovedByTheNextWhileTheKernelServesBeside) {
  const std::string xdp_flag = absl::StrCat("--xdp=", VethNamespaces::kServerIf);
  {
    std::unique_ptr<ServerProcess> killed = StartServer({xdp_flag});
    ASSERT_NE(killed, nullptr);
    ASSERT_EQ(kill(killed->pid(), SIGKILL), 0);
    EXPECT_EQ(killed->Stop(), -1);  // reaps it: killed by a signal
    absl::StatusOr<std::string> details = veth_->ServerLinkDetails();
    ASSERT_TRUE(details.ok()) << details.status();
    EXPECT_NE(details->find("prog/xdp"), std::string::npos) << "SIGKILL left nothing?";
  }
  std::unique_ptr<ServerProcess> next = StartServer({xdp_flag});
  ASSERT_NE(next, nullptr);
  const Query query{"example.com", "A"};
  const std::string over_veth = Ask("kdig", VethNamespaces::kServerAddress, query);
  std::string local;
  {
    ScopedNetns in_server(veth_->server_ns_fd());
    absl::StatusOr<CommandResult> kdig = RunCommand(
        {"kdig", absl::StrCat("@", VethNamespaces::kServerAddress), "-p", absl::StrCat(kPort),
         "+tcp", "+short", "+retry=0", "+time=3", "example.com", "A"},
        absl::Seconds(10));
    ASSERT_TRUE(kdig.ok()) << kdig.status();
    local = kdig->out;
  }
  ASSERT_EQ(next->Stop(), 0) << next->ReadStderr();
  const std::string out = next->ReadStdout();
  const std::string log = next->ReadStderr();
  EXPECT_NE(log.find("removed 1 stale copy(ies) of xdp_steer from xs0"), std::string::npos) << log;
  EXPECT_NE(over_veth.find("status: NOERROR"), std::string::npos) << over_veth;
  EXPECT_EQ(local, "192.0.2.1\n");
  EXPECT_EQ(StatValue(out, "xdp_requests"), 1) << out;  // the veth's query, over AF_XDP
  EXPECT_EQ(StatValue(out, "accepted"), 1) << out;      // the local one, by the kernel's listener
  absl::StatusOr<std::string> details = veth_->ServerLinkDetails();
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_EQ(details->find("prog/xdp"), std::string::npos) << *details;
}

// Two rx queues on the server's veth, two workers: worker k serves queue k over AF_XDP (the
// XDP program redirects by rx queue), and a kernel client's flows, spread over its two tx
// queues, reach both. The per-worker series of /metrics show each worker's share.
class XdpTwoQueuesTest : public XdpOnepassdTest {
 protected:
  int Queues() const override { return 2; }
};

TEST_F(XdpTwoQueuesTest, EachRxQueueIsServedByItsOwnWorker) {
  std::unique_ptr<ServerProcess> xdp =
      StartServer({absl::StrCat("--xdp=", VethNamespaces::kServerIf), "--workers=2",
                   "--metrics-listen=127.0.0.1:0"});
  ASSERT_NE(xdp, nullptr);
  constexpr int kQueries = 40;
  int right = 0;
  for (int i = 0; i < kQueries; ++i) {
    const std::string answer = Ask("kdig", VethNamespaces::kServerAddress, {"example.com", "A"});
    right += answer.find("status: NOERROR") != std::string::npos ? 1 : 0;
  }
  std::string metrics;
  {
    ScopedNetns in_server(veth_->server_ns_fd());
    metrics = HttpGet(xdp->metrics_address(), "/metrics");
  }
  ASSERT_EQ(xdp->Stop(), 0) << xdp->ReadStderr();
  const std::string out = xdp->ReadStdout();
  const std::string log = xdp->ReadStderr();
  EXPECT_EQ(right, kQueries);
  EXPECT_NE(log.find("rx queues 0-1 of 2 by workers 0-1 (2 AF_XDP sockets)"), std::string::npos)
      << log;
  EXPECT_EQ(StatValue(out, "xdp_requests"), kQueries) << out;
  EXPECT_EQ(StatValue(out, "accepted"), 0) << out;
  // onepass_worker_xdp_requests_total{worker="W",cpu="C"} N, for each worker (its series
  // named as exposed, its value read by MetricValue).
  int total = 0;
  for (int w = 0; w < 2; ++w) {
    const size_t at =
        metrics.find(absl::StrCat("onepass_worker_xdp_requests_total{worker=\"", w, "\""));
    ASSERT_NE(at, std::string::npos) << metrics;
    const size_t end = metrics.find('}', at);
    ASSERT_NE(end, std::string::npos);
    const int served = static_cast<int>(MetricValue(metrics, metrics.substr(at, end + 1 - at)));
    EXPECT_GT(served, 0) << "worker " << w << " served nothing over AF_XDP:\n" << metrics;
    std::printf("worker %d served %d queries over AF_XDP\n", w, served);
    total += served;
  }
  EXPECT_EQ(total, kQueries);
}

// Per-client policy over AF_XDP: the handler sees each client's address as over a kernel socket,
// so the Whois rate limit counts each address apart. The Debian whois client from the client's
// address .2 goes over its burst of 3 and is refused; from a second address (.3, made the
// route's source) it is still answered.
TEST_F(XdpOnepassdTest, WhoisRateLimitCountsEachClientAddressApart) {
  if (!ProgramExists("whois")) GTEST_SKIP() << "whois is not installed";
  constexpr char kSecondClient[] = "10.201.0.3";
  std::unique_ptr<ServerProcess> server = StartServer(
      {"--handler=whois", absl::StrCat("--xdp=", VethNamespaces::kServerIf),
       "--whois-rate-limit-qps=0.5", "--whois-rate-limit-burst=3", "--whois-rate-limit-exempt="});
  ASSERT_NE(server, nullptr);
  absl::StatusOr<CommandResult> added =
      RunCommand({"ip", "-n", veth_->client_ns(), "addr", "add", absl::StrCat(kSecondClient, "/24"),
                  "dev", VethNamespaces::kClientIf, "nodad"},
                 absl::Seconds(10));
  ASSERT_TRUE(added.ok() && added->exit_code == 0);
  // One whois query from `source` (the route's source address for the server's subnet).
  const auto whois = [&](const std::string& source) -> std::string {
    absl::StatusOr<CommandResult> route =
        RunCommand({"ip", "-n", veth_->client_ns(), "route", "replace", "10.201.0.0/24", "dev",
                    VethNamespaces::kClientIf, "src", source},
                   absl::Seconds(10));
    if (!route.ok() || route->exit_code != 0) return "(the route's source did not change)";
    absl::StatusOr<CommandResult> result =
        RunCommand({"ip", "netns", "exec", veth_->client_ns(), "whois", "-h",
                    VethNamespaces::kServerAddress, "-p", absl::StrCat(kPort), "example.com"},
                   absl::Seconds(15));
    return result.ok() ? result->out : result.status().ToString();
  };
  const auto answered = [](const std::string& out) {
    return absl::StrContains(out, "   Domain Name: EXAMPLE.COM");
  };
  const auto refused = [](const std::string& out) {
    return absl::StrContains(out, "Error: query rate limit exceeded for your address.");
  };
  int first_answered = 0, first_refused = 0;
  for (int i = 0; i < 5; ++i) {
    const std::string out = whois(VethNamespaces::kClientAddress);
    first_answered += answered(out) ? 1 : 0;
    first_refused += refused(out) ? 1 : 0;
  }
  const std::string second = whois(kSecondClient);
  ASSERT_EQ(server->Stop(), 0) << server->ReadStderr();
  const std::string out = server->ReadStdout();
  EXPECT_EQ(first_answered, 3);
  EXPECT_EQ(first_refused, 2);
  EXPECT_TRUE(answered(second)) << "the second address shared the first one's limit:\n" << second;
  EXPECT_EQ(StatValue(out, "xdp_requests"), 6) << out;  // all of them over AF_XDP
  EXPECT_EQ(StatValue(out, "accepted"), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "whois_replies{result=\"rate_limited\"}=2")) << out;
}

// A restart with --xdp (server/restart/listener_handover.h, server/server_xdp.cc): the new
// process takes the kernel's listeners over at once and the interface once the old one has
// exited and let go of it; both answer every query over AF_XDP in their turn, the old one's
// program never removed under it, and the interface is clean after the last one stops.
TEST_F(XdpOnepassdTest, ARestartHandsTheInterfaceOverWhenTheOldProcessLetsGo) {
  std::string dir = ::testing::TempDir() + "onepass-xdp-handover-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::vector<std::string> flags = {absl::StrCat("--xdp=", VethNamespaces::kServerIf),
                                          absl::StrCat("--handover-socket=", dir, "/handover")};
  std::unique_ptr<ServerProcess> old_server = StartServer(flags);
  ASSERT_NE(old_server, nullptr);
  const std::vector<std::string> old_answers = AskAll();

  std::unique_ptr<ServerProcess> new_server = StartServer(flags);
  ASSERT_NE(new_server, nullptr);
  std::string old_out, new_log;
  EXPECT_TRUE(WaitFor(
      [&] {
        old_out = old_server->ReadStdout();
        return absl::StrContains(old_out, "stats ");
      },
      absl::Seconds(15)))
      << "the old server did not drain and exit: " << old_server->ReadStderr();
  EXPECT_EQ(old_server->Stop(), 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        new_log = new_server->ReadStderr();
        return absl::StrContains(new_log, "taken over from the previous process");
      },
      absl::Seconds(15)))
      << new_log;
  const std::vector<std::string> new_answers = AskAll();
  ASSERT_EQ(new_server->Stop(), 0);
  const std::string new_out = new_server->ReadStdout();
  new_log = new_server->ReadStderr();
  const std::string old_log = old_server->ReadStderr();
  std::printf("%s", new_log.c_str());  // the takeover's line, for the CI log
  (void)RunCommand({"rm", "-rf", dir}, absl::Seconds(10));

  const int queries = static_cast<int>(old_answers.size());
  for (int i = 0; i < queries; ++i) {
    EXPECT_NE(old_answers[i].find("status: "), std::string::npos) << old_answers[i];
    EXPECT_EQ(new_answers[i], old_answers[i]) << "query " << i;
  }
  // Each answered its own queries over AF_XDP (the old one's sockets were its until it exited;
  // the new one's queue came up on its worker, in that worker's descriptor table).
  EXPECT_EQ(StatValue(old_out, "xdp_requests"), queries) << old_out;
  EXPECT_EQ(StatValue(new_out, "xdp_requests"), queries) << new_out;
  EXPECT_EQ(StatValue(new_out, "accepted"), 0) << new_out;
  EXPECT_EQ(StatValue(new_out, "xdp_rsts_sent"), 0) << new_out;
  EXPECT_NE(new_log.find("xdp xs0: native mode"), std::string::npos) << new_log;
  EXPECT_NE(new_log.find("(1 AF_XDP sockets)"), std::string::npos) << new_log;
  // Nothing removed the old one's program while it ran, and it detached its own.
  EXPECT_EQ(new_log.find("stale"), std::string::npos) << new_log;
  EXPECT_EQ(old_log.find("Asked to unload"), std::string::npos) << old_log;
  absl::StatusOr<std::string> details = veth_->ServerLinkDetails();
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_EQ(details->find("prog/xdp"), std::string::npos) << *details;
}

// A restart while the old process holds a connection over AF_XDP (half its request sent): the
// old one drains as on its kernel sockets, its XDP program passing new SYNs to the kernel,
// whose listeners are the new process's now, so a new client is answered meanwhile; the held
// connection's request is still answered by the old one over AF_XDP, and only then does it
// exit and the new one take the interface over. Nothing is reset.
TEST_F(XdpOnepassdTest, ARestartLetsTheOldProcessFinishItsAfXdpConnections) {
  std::string dir = ::testing::TempDir() + "onepass-xdp-drain-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::vector<std::string> flags = {absl::StrCat("--xdp=", VethNamespaces::kServerIf),
                                          absl::StrCat("--handover-socket=", dir, "/handover"),
                                          "--drain-timeout-ms=30000", "--read-timeout-ms=30000"};
  std::unique_ptr<ServerProcess> old_server = StartServer(flags);
  ASSERT_NE(old_server, nullptr);
  const std::string bytes = FramedQuery();
  absl::StatusOr<TcpClient> held = absl::InternalError("not connected");
  {
    ScopedNetns in_client(veth_->client_ns_fd());
    ASSERT_TRUE(in_client.ok());
    held = TcpClient::Connect(VethNamespaces::kServerAddress, kPort);
  }
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_TRUE(held->Send(bytes.substr(0, 5)).ok());

  std::unique_ptr<ServerProcess> new_server = StartServer(flags);
  ASSERT_NE(new_server, nullptr);
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(old_server->ReadStderr(), "xdp xs0: draining: new connections");
      },
      absl::Seconds(15)))
      << old_server->ReadStderr();
  // The old one drains, holding `held`: a new client is the new process's, on its listeners.
  EXPECT_NE(Ask("kdig", VethNamespaces::kServerAddress, Queries()[0]).find("NOERROR"),
            std::string::npos);
  EXPECT_FALSE(absl::StrContains(old_server->ReadStdout(), "stats "))
      << "the old process did not wait for its AF_XDP connection";
  ASSERT_TRUE(held->Send(bytes.substr(5)).ok());
  absl::StatusOr<std::string> answer = held->ReadUntilClose(absl::Seconds(10));
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_GT(answer->size(), 14u);
  EXPECT_EQ(answer->substr(2, 2), bytes.substr(2, 2));  // our query's ID
  held = absl::CancelledError("closed by the test");

  std::string old_out;
  EXPECT_TRUE(WaitFor(
      [&] {
        old_out = old_server->ReadStdout();
        return absl::StrContains(old_out, "stats ");
      },
      absl::Seconds(20)))
      << "the old server did not exit after its last connection: " << old_server->ReadStderr();
  EXPECT_EQ(old_server->Stop(), 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(new_server->ReadStderr(), "taken over from the previous process");
      },
      absl::Seconds(15)))
      << new_server->ReadStderr();
  // From here the new one serves over AF_XDP.
  EXPECT_NE(Ask("kdig", VethNamespaces::kServerAddress, Queries()[0]).find("NOERROR"),
            std::string::npos);
  ASSERT_EQ(new_server->Stop(), 0) << new_server->ReadStderr();
  const std::string new_out = new_server->ReadStdout();
  (void)RunCommand({"rm", "-rf", dir}, absl::Seconds(10));

  EXPECT_EQ(StatValue(old_out, "xdp_requests"), 1) << old_out;  // the held one, over AF_XDP
  EXPECT_EQ(StatValue(old_out, "xdp_rsts_sent"), 0) << old_out;
  EXPECT_EQ(StatValue(old_out, "accepted"), 0) << old_out;
  EXPECT_EQ(StatValue(new_out, "accepted"), 1) << new_out;  // the client during the drain
  EXPECT_EQ(StatValue(new_out, "xdp_requests"), 1) << new_out;
  EXPECT_EQ(StatValue(new_out, "xdp_rsts_sent"), 0) << new_out;
}

}  // namespace
}  // namespace onepass::testing
