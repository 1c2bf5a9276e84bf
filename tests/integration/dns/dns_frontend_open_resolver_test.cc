// The open-resolver warning end to end: onepassd --dns-backend without --allow-from asks each
// backend ". NS" with RD=1 before serving (handlers/dns/open_resolver_probe.h, sent by
// server/startup_probe.h) and warns, at start-up and in --check, when the answer has RA=1.
// The backend is a fake inside the test that answers with RA set or clear; the server side's
// bound (a silent or closed port) is checked on RunStartupProbes itself.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/open_resolver_probe.h"
#include "server/startup_probe.h"
#include "tests/integration/dns/fake_udp_backend.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_for.h"

namespace onepass::dns {
namespace {

using testing::FakeUdpBackend;
using testing::LoopbackBackend;

constexpr char kWarning[] = "offers recursion";

// A backend that answers every query (the echo: QR set, no records) with RA set when `ra`,
// and counts the open-resolver probes (". NS" with RD=1) apart from other queries.
class RecursionBackend {
 public:
  explicit RecursionBackend(bool ra)
      : ra_(ra),
        backend_([this](FakeUdpBackend& backend, uint16_t from_port,
                        absl::Span<const uint8_t> query) { Answer(backend, from_port, query); }) {}

  int port() const { return backend_.port(); }
  int probes() const { return probes_; }

 private:
  void Answer(FakeUdpBackend& backend, uint16_t from_port, absl::Span<const uint8_t> query) {
    const std::vector<uint8_t> probe = OpenResolverQuery(0);
    if (query.size() == probe.size() &&
        std::equal(query.begin() + 2, query.end(), probe.begin() + 2)) {
      ++probes_;
    }
    std::vector<uint8_t> answer = backend.Echo(query);
    if (ra_) answer[3] |= 0x80;  // RA: the low byte of the flags
    backend.SendFrom(from_port, answer);
  }

  const bool ra_;
  std::atomic<int> probes_{0};
  FakeUdpBackend backend_;  // last: its thread calls Answer until it is destroyed
};

onepass::testing::CommandResult Check(int backend_port,
                                      const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {
      onepass::testing::OnepassdPath(), "--check", "--handler", "dns", "--dns-backend",
      LoopbackBackend(backend_port)};
  args.insert(args.end(), extra.begin(), extra.end());
  absl::StatusOr<onepass::testing::CommandResult> result =
      onepass::testing::RunCommand(args, absl::Seconds(20));
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : onepass::testing::CommandResult{};
}

// What onepassd, a frontend of the backend at `backend_port` serving every client unless
// `extra` says otherwise (testing::StartFrontend would add --allow-from), wrote to stderr up to
// "ready" (the probes are asked before it); then it is stopped.
std::string StartUpLog(int backend_port, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {
      "--handler", "dns", "--listen",      "127.0.0.1:0",
      "--workers", "1",   "--dns-backend", LoopbackBackend(backend_port)};
  args.insert(args.end(), extra.begin(), extra.end());
  auto frontend = onepass::testing::ServerProcess::Start(args);
  EXPECT_TRUE(frontend.ok()) << frontend.status();
  if (!frontend.ok()) return "";
  const std::string log = (*frontend)->ReadStderr();
  EXPECT_EQ((*frontend)->Stop(), 0);
  return log;
}

TEST(FrontendOpenResolver, RecursingBackendIsReportedByCheckAndAtStartUp) {
  RecursionBackend backend(/*ra=*/true);
  ASSERT_GT(backend.port(), 0);
  const onepass::testing::CommandResult check = Check(backend.port());
  EXPECT_EQ(check.exit_code, 0) << check.err;  // a warning, not an error
  const std::string expected =
      absl::StrCat("warning: DNS backend ", LoopbackBackend(backend.port()), " ", kWarning);
  EXPECT_TRUE(absl::StrContains(check.out, expected)) << check.out;
  EXPECT_TRUE(absl::StrContains(check.out, "give --allow-from")) << check.out;

  const std::string log = StartUpLog(backend.port());
  EXPECT_TRUE(absl::StrContains(log, absl::StrCat("onepassd: warning: DNS backend ",
                                                  LoopbackBackend(backend.port()), " ", kWarning)))
      << log;
  EXPECT_EQ(backend.probes(), 2);  // one by --check, one at start-up
}

TEST(FrontendOpenResolver, NonRecursingBackendIsAskedAndNotReported) {
  RecursionBackend backend(/*ra=*/false);
  ASSERT_GT(backend.port(), 0);
  const onepass::testing::CommandResult check = Check(backend.port());
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_FALSE(absl::StrContains(check.out + check.err, kWarning)) << check.out;
  EXPECT_FALSE(absl::StrContains(StartUpLog(backend.port()), kWarning));
  EXPECT_TRUE(onepass::testing::WaitFor([&] { return backend.probes() == 2; }, absl::Seconds(2)))
      << backend.probes();
}

TEST(FrontendOpenResolver, WithAllowFromNoProbeIsSent) {
  RecursionBackend backend(/*ra=*/true);
  ASSERT_GT(backend.port(), 0);
  const onepass::testing::CommandResult check =
      Check(backend.port(), {"--allow-from", "127.0.0.1"});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_FALSE(absl::StrContains(check.out + check.err, kWarning)) << check.out;
  const std::string log = StartUpLog(backend.port(), {"--allow-from", "127.0.0.0/8"});
  EXPECT_FALSE(absl::StrContains(log, kWarning)) << log;
  // A probe would have been sent before "ready": give the backend's thread time to count it.
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(backend.probes(), 0);
}

// A UDP port on 127.0.0.1 with nothing bound to it: a datagram there gets ICMP port unreachable.
int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

std::vector<StartupProbe> ProbesOf(const std::vector<int>& ports) {
  std::vector<SocketAddress> backends;
  for (const int port : ports) {
    absl::StatusOr<SocketAddress> address = ParseSocketAddress(LoopbackBackend(port));
    EXPECT_TRUE(address.ok()) << address.status();
    if (address.ok()) backends.push_back(*address);
  }
  return OpenResolverProbes(backends);
}

TEST(StartupProbes, SilentBackendCostsTheTimeoutOnlyAndOthersStillCount) {
  FakeUdpBackend silent;  // never answers
  RecursionBackend recursing(/*ra=*/true);
  ASSERT_GT(silent.port(), 0);
  ASSERT_GT(recursing.port(), 0);
  const absl::Time start = absl::Now();
  const std::vector<std::string> warnings =
      RunStartupProbes(ProbesOf({silent.port(), recursing.port()}), absl::Milliseconds(300));
  const absl::Duration took = absl::Now() - start;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(absl::StrContains(warnings[0], LoopbackBackend(recursing.port()))) << warnings[0];
  EXPECT_TRUE(onepass::testing::WaitFor([&] { return silent.received == 1; }, absl::Seconds(1)));
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(silent.received, 1);  // asked once: no retries
  EXPECT_GE(took, absl::Milliseconds(290));
  EXPECT_LT(took, absl::Seconds(2));
}

TEST(StartupProbes, EndsAsSoonAsEveryProbeIsSettled) {
  RecursionBackend a(/*ra=*/false);
  RecursionBackend b(/*ra=*/true);
  const int closed = ClosedPort();
  ASSERT_GT(closed, 0);
  const absl::Time start = absl::Now();
  // Two answers and one ICMP port unreachable, well before the timeout.
  const std::vector<std::string> warnings =
      RunStartupProbes(ProbesOf({a.port(), closed, b.port()}), absl::Seconds(10));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(absl::StrContains(warnings[0], LoopbackBackend(b.port()))) << warnings[0];
  EXPECT_TRUE(RunStartupProbes({}).empty());
}

}  // namespace
}  // namespace onepass::dns
