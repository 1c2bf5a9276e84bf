// The Server in-process with the test line protocol (tests/support/line_handler.h): the whole
// transport over real loopback TCP, before any real protocol exists.
#include "server/server.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/cpu_list.h"
#include "gtest/gtest.h"
#include "server/drivers/uring/uring_driver.h"
#include "tests/support/in_process_server.h"
#include "tests/support/line_handler.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"

namespace onepass {
namespace {

using testing::LineHandlerFactory;
using testing::LineProtocolOptions;
using testing::TcpClient;
using testing::WaitFor;

// Every test on each I/O driver (server/drivers/): the core's behaviour must not depend on it.
class ServerTest : public testing::InProcessLineServerTest,
                   public ::testing::WithParamInterface<IoLoop> {
 protected:
  ServerTest() { config_.io = GetParam(); }

  // One request on a fresh connection, reading until the server closes.
  std::string Exchange(const std::string& request) {
    absl::StatusOr<TcpClient> client = Connect();
    if (!client.ok()) return absl::StrCat("connect failed: ", client.status().ToString());
    if (absl::Status sent = client->Send(request); !sent.ok()) return sent.ToString();
    absl::StatusOr<std::string> reply = client->ReadUntilClose();
    return reply.ok() ? *reply : reply.status().ToString();
  }
};

// Reads until the connection ends (20 s at most): true when it ends with a reset (ECONNRESET),
// false at a graceful EOF.
bool EndsWithReset(TcpClient& client) {
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  size_t bytes = 0;
  while (absl::Now() < give_up) {
    char buffer[65536];
    const ssize_t got = recv(client.fd(), buffer, sizeof(buffer), MSG_DONTWAIT);
    if (got > 0) {
      bytes += static_cast<size_t>(got);
    } else if (got == 0) {
      ADD_FAILURE() << "a graceful end after " << bytes << " bytes";
      return false;
    } else if (errno == ECONNRESET) {
      return true;
    } else if (errno == EAGAIN || errno == EINTR) {
      pollfd ready = {client.fd(), POLLIN, 0};
      poll(&ready, 1, 100);
    } else {
      ADD_FAILURE() << "recv: " << std::strerror(errno);
      return false;
    }
  }
  ADD_FAILURE() << "still open after " << bytes << " bytes";
  return false;
}

// Runs `body` on a thread pinned to `cpu`.
void OnCpu(int cpu, const std::function<void()>& body) {
  std::thread thread([&] {
    ASSERT_TRUE(PinCurrentThread(cpu).ok());
    body();
  });
  thread.join();
}

TEST_P(ServerTest, SinglePassAnswersAndClosesWithOneSendEach) {
  StartServer();
  constexpr int kConnections = 50;
  for (int i = 0; i < kConnections; ++i) {
    std::string reply = Exchange(absl::StrCat("hello ", i, "\n"));
    ASSERT_NE(reply.find(absl::StrCat(" hello ", i, "\n")), std::string::npos) << reply;
  }
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.served == kConnections; }));
  const StatsSnapshot stats = server_->Stats();
  EXPECT_EQ(stats.accepted, kConnections);
  // TCP_DEFER_ACCEPT handed every socket over with its request: no event loop involved.
  EXPECT_EQ(stats.single_pass, kConnections);
  EXPECT_EQ(stats.parked, 0u);
  // One send syscall per response: the length and the message never leave separately.
  EXPECT_EQ(stats.sends, kConnections);
  EXPECT_EQ(stats.responses, kConnections);
  EXPECT_EQ(stats.errors, 0u);
}

TEST_P(ServerTest, PipelinedRequestsAreAllAnswered) {
  StartServer();
  std::string reply = Exchange("a\nb\nc\n");
  EXPECT_EQ(std::count(reply.begin(), reply.end(), '\n'), 3) << reply;
  EXPECT_NE(reply.find(" a\n"), std::string::npos);
  EXPECT_NE(reply.find(" c\n"), std::string::npos);
}

TEST_P(ServerTest, PartialRequestIsFinishedFromTheEventLoop) {
  StartServer();
  absl::StatusOr<TcpClient> client = Connect();
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE(client->Send("hel").ok());
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 1; }));
  ASSERT_TRUE(client->Send("lo\n").ok());
  absl::StatusOr<std::string> reply = client->ReadUntilClose();
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_NE(reply->find(" hello\n"), std::string::npos) << *reply;
  EXPECT_EQ(server_->Stats().served, 1u);
}

TEST_P(ServerTest, SlowlorisIsCutByThePerMessageDeadline) {
  config_.read_timeout = absl::Milliseconds(300);
  StartServer();
  absl::StatusOr<TcpClient> client = Connect();
  ASSERT_TRUE(client.ok());
  const absl::Time start = absl::Now();
  // One byte every 50 ms would keep a timeout that restarts on every byte alive forever.
  bool cut = false;
  for (int i = 0; i < 60 && !cut; ++i) {
    cut = !client->Send("x").ok();
    usleep(50 * 1000);
    if (server_->Stats().read_timeouts == 1) cut = true;
  }
  EXPECT_TRUE(cut);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.read_timeouts == 1; }));
  EXPECT_EQ(server_->Stats().timeouts, 1u);
  EXPECT_EQ(server_->Stats().served, 0u);
}

TEST_P(ServerTest, OversizeRequestIsClosed) {
  LineProtocolOptions options;
  options.max_line_bytes = 64;
  StartServer(options);
  EXPECT_EQ(Exchange(std::string(1000, 'z')), "");
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.rejected_oversize == 1; }));
  EXPECT_EQ(server_->Stats().rejected, 1u);
}

TEST_P(ServerTest, WithoutKeepaliveTheServerClosesAfterTheAnswer) {
  config_.read_timeout = absl::Seconds(10);
  StartServer();
  absl::StatusOr<TcpClient> client = Connect();
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send("one\n").ok());
  absl::StatusOr<std::string> reply = client->ReadUntilClose(absl::Seconds(5));
  ASSERT_TRUE(reply.ok()) << reply.status();  // closed by the server, not the read timeout
  EXPECT_EQ(server_->Stats().timeouts, 0u);
  EXPECT_NE(reply->find(" one\n"), std::string::npos);
}

TEST_P(ServerTest, KeepaliveServesSeveralRequestsThenClosesWhenIdle) {
  config_.keepalive = absl::Milliseconds(1000);
  StartServer();
  absl::StatusOr<TcpClient> client = Connect();
  ASSERT_TRUE(client.ok());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(client->Send(absl::StrCat("req", i, "\n")).ok());
    absl::StatusOr<std::string> line = client->ReadLine();
    ASSERT_TRUE(line.ok()) << line.status();
    EXPECT_NE(line->find(absl::StrCat(" req", i, "\n")), std::string::npos) << *line;
  }
  const absl::Time idle_since = absl::Now();
  absl::StatusOr<std::string> rest = client->ReadUntilClose(absl::Seconds(3));
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(*rest, "");
  EXPECT_GE(absl::Now() - idle_since, absl::Milliseconds(900));
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.idle_closes == 1; }));
  EXPECT_EQ(server_->Stats().timeouts, 0u);
  EXPECT_EQ(server_->Stats().accepted, 1u);
}

TEST_P(ServerTest, ReaderThatNeverReadsIsCutByTheWriteTimeout) {
  config_.write_timeout = absl::Milliseconds(300);
  LineProtocolOptions options;
  options.output_bytes = 16 << 20;
  StartServer(options);
  absl::StatusOr<TcpClient> client = Connect();
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send("big 12000000\n").ok());  // more than both socket buffers
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.write_timeouts == 1; }));
  EXPECT_EQ(server_->Stats().served, 0u);
}

TEST_P(ServerTest, LargeResponseIsFinishedFromTheEventLoop) {
  config_.write_timeout = absl::Seconds(20);  // the whole response, however slow the build
  LineProtocolOptions options;
  options.output_bytes = 16 << 20;
  StartServer(options);
  std::string reply = Exchange("big 6000000\n");
  EXPECT_EQ(reply.size(), 6000001u);
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.served == 1; }));
}

TEST_P(ServerTest, FullPoolClosesTheConnectionsWaitingLongest) {
  config_.cpus = {AllowedCpus()[0]};  // one worker
  config_.max_connections = 2;
  StartServer();
  std::vector<TcpClient> clients;
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<TcpClient> client = Connect();
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(client->Send("partial").ok());
    clients.push_back(*std::move(client));
    const uint64_t parked = static_cast<uint64_t>(i) + 1;
    ASSERT_TRUE(WaitForStats([parked](const StatsSnapshot& s) { return s.parked == parked; }));
  }
  // Each newcomer beyond the two made room from the one waiting longest.
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.evicted_waiting == 3; }));
  EXPECT_EQ(server_->Stats().rejected_pool_full, 0u);
  // The two kept (the newest) still work.
  int answered = 0;
  for (TcpClient& client : clients) {
    if (!client.Send(" done\n").ok()) continue;
    absl::StatusOr<std::string> reply = client.ReadUntilClose();
    if (reply.ok() && reply->find("partial done") != std::string::npos) ++answered;
  }
  EXPECT_EQ(answered, 2);
}

TEST_P(ServerTest, OneClientAddressCannotTakeAllTheSlots) {
  config_.cpus = {AllowedCpus()[0]};  // one worker
  config_.max_connections_per_client = 2;
  StartServer();
  std::vector<TcpClient> clients;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<TcpClient> client = Connect();
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(client->Send("partial").ok());
    clients.push_back(*std::move(client));
  }
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.rejected_per_client == 2; }));
  EXPECT_EQ(server_->Stats().rejected, 2u);
  // Another address still gets a slot; a closed connection gives its slot back.
  absl::StatusOr<TcpClient> other =
      TcpClient::Connect("127.0.0.1", port_, absl::Seconds(5), "127.0.0.2");
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(other->Send("partial").ok());
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 3; }));
  clients.clear();
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.closed_incomplete >= 2; }));
  absl::StatusOr<TcpClient> again = Connect();
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(again->Send("part").ok());
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 4; }));
  ASSERT_TRUE(again->Send("ial\n").ok());
  absl::StatusOr<std::string> reply = again->ReadUntilClose();
  ASSERT_TRUE(reply.ok());
  EXPECT_NE(reply->find(" partial\n"), std::string::npos) << *reply;
  EXPECT_EQ(server_->Stats().rejected_per_client, 2u);
}

// --max-connections-per-client holds for the whole server, not per worker: with the kernel's
// hash spreading one client's connections over both workers, it still gets only its share.
TEST_P(ServerTest, PerClientLimitHoldsAcrossWorkers) {
  config_.workers = 2;
  config_.steering = Steering::kHash;
  config_.max_connections_per_client = 2;
  StartServer();
  std::vector<TcpClient> clients;
  for (int i = 0; i < 16; ++i) {
    absl::StatusOr<TcpClient> client = Connect();
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(client->Send("partial").ok());
    clients.push_back(*std::move(client));
  }
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.accepted == 16; }));
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.rejected_per_client == 14; }));
  EXPECT_GT(server_->StatsOf(0).accepted, 0u);
  EXPECT_GT(server_->StatsOf(1).accepted, 0u);
  EXPECT_EQ(server_->Stats().parked, 2u);
}

TEST_P(ServerTest, OutputBuffersOfBlockedWritersAreBounded) {
  config_.cpus = {AllowedCpus()[0]};  // one worker
  config_.max_connections = 1;
  config_.write_timeout = absl::Seconds(10);
  LineProtocolOptions options;
  options.output_bytes = 16 << 20;
  StartServer(options);
  // Two readers that never read: the first keeps an output buffer while it waits to write,
  // the second would need another one beyond the limit and is closed.
  std::vector<TcpClient> clients;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<TcpClient> client = Connect();
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(client->Send("big 12000000\n").ok());
    clients.push_back(*std::move(client));
    ASSERT_TRUE(WaitForStats([&](const StatsSnapshot& s) { return s.accepted == i + 1u; }));
  }
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.rejected_pool_full == 1; }));
  EXPECT_EQ(server_->Stats().parked, 1u);
  // Refused on its first turn with answer bytes the client has not taken: aborted, so the
  // kernel frees them instead of keeping megabytes for an orphan (docs/design.md). Its client
  // reads a reset, not the graceful end of a truncated answer.
  EXPECT_TRUE(EndsWithReset(clients[1]));
  // Single passes still work meanwhile: the scratch connection got a buffer of its own.
  EXPECT_NE(Exchange("still\n").find(" still\n"), std::string::npos);
}

// The loopback RPS mask ("" when unreadable). Non-zero moves receive processing, SYNs
// included, from the sending CPU to the mask's CPUs (loadtest/bench.sh sets it for a while).
std::string LoopbackRpsMask() {
  std::ifstream file("/sys/class/net/lo/queues/rx-0/rps_cpus");
  std::string mask;
  file >> mask;
  return mask;
}
bool RpsOff(const std::string& mask) { return mask.find_first_not_of("0,") == std::string::npos; }

TEST_P(ServerTest, ConnectionLandsOnTheWorkerOfTheClientsCpu) {
  const std::vector<int> cpus = AllowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 CPUs to tell workers apart; this has 1";
  const std::string rps = LoopbackRpsMask();
  if (!RpsOff(rps)) {
    GTEST_SKIP() << "loopback RPS is on (rps_cpus=" << rps << "): SYNs are not processed on "
                 << "the sending CPU, so the client's CPU does not choose the worker";
  }
  config_.cpus = cpus;
  config_.steering = Steering::kCpu;
  StartServer();
  ASSERT_TRUE(server_->placement().cpu_steering);
  constexpr int kConnections = 20;
  // replies[k]: what the clients on CPU cpus[k] were told; accepted[k]: worker k's count.
  std::vector<std::vector<std::string>> replies(cpus.size());
  std::vector<uint64_t> accepted(cpus.size());
  for (size_t k = 0; k < cpus.size(); ++k) {
    const uint64_t before = server_->StatsOf(static_cast<int>(k)).accepted;
    // On loopback the SYN is processed on the sending CPU (no RPS on lo): the steering
    // program sees CPU cpus[k] and must pick worker k.
    OnCpu(cpus[k], [&] {
      for (int i = 0; i < kConnections; ++i) replies[k].push_back(Exchange("who\n"));
    });
    accepted[k] = server_->StatsOf(static_cast<int>(k)).accepted - before;
  }
  if (!RpsOff(LoopbackRpsMask())) {
    GTEST_SKIP() << "loopback RPS was turned on during the test: results do not count";
  }
  for (size_t k = 0; k < cpus.size(); ++k) {
    for (const std::string& reply : replies[k]) {
      EXPECT_EQ(reply, absl::StrCat("worker=", k, " who\n")) << "client on CPU " << cpus[k];
    }
    EXPECT_EQ(accepted[k], static_cast<uint64_t>(kConnections)) << "worker " << k;
  }
}

TEST_P(ServerTest, ListensOnIpv6Loopback) {
  int probe = socket(AF_INET6, SOCK_STREAM, 0);
  if (probe < 0) GTEST_SKIP() << "no IPv6 on this machine";
  close(probe);
  config_.listen = {"[::1]:0", "127.0.0.1:0"};
  StartServer();
  ASSERT_EQ(server_->addresses().size(), 2u);
  EXPECT_EQ(server_->addresses()[0].ToString(), absl::StrCat("[::1]:", port_));
  absl::StatusOr<TcpClient> client = TcpClient::Connect("::1", port_);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE(client->Send("six\n").ok());
  absl::StatusOr<std::string> reply = client->ReadUntilClose();
  ASSERT_TRUE(reply.ok());
  EXPECT_NE(reply->find(" six\n"), std::string::npos);
  absl::StatusOr<TcpClient> v4 = TcpClient::Connect("127.0.0.1", server_->addresses()[1].port());
  ASSERT_TRUE(v4.ok()) << v4.status();
}

TEST_P(ServerTest, StopFinishesConnectionsInFlightAndRefusesNewOnes) {
  StartServer();
  absl::StatusOr<TcpClient> client = Connect();
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send("in fl").ok());
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 1; }));
  server_->RequestStop();
  // The workers close their listeners on their own threads: wait for it, without connecting.
  ASSERT_TRUE(testing::WaitFor([&] { return !testing::IsListening(port_); }, absl::Seconds(5)));
  EXPECT_FALSE(Connect().ok());  // listeners are closed
  ASSERT_TRUE(client->Send("ight\n").ok());
  absl::StatusOr<std::string> reply = client->ReadUntilClose();
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_NE(reply->find(" in flight\n"), std::string::npos) << *reply;
  server_->Wait();
  EXPECT_EQ(server_->Stats().served, 1u);
  EXPECT_EQ(server_->Stats().closed_drain, 0u);
}

TEST_P(ServerTest, DrainIsBoundedByItsDeadline) {
  config_.read_timeout = absl::Seconds(30);
  config_.drain_timeout = absl::Milliseconds(300);
  StartServer();
  absl::StatusOr<TcpClient> client = Connect();
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send("never finished").ok());
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 1; }));
  const absl::Time start = absl::Now();
  server_->RequestStop();
  server_->Wait();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_EQ(server_->Stats().closed_drain, 1u);
}

TEST_P(ServerTest, StopClosesIdleKeepaliveConnectionsAtOnce) {
  config_.keepalive = absl::Seconds(30);
  StartServer();
  absl::StatusOr<TcpClient> client = Connect();
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send("hi\n").ok());
  ASSERT_TRUE(client->ReadLine().ok());
  const absl::Time start = absl::Now();
  server_->RequestStop();
  server_->Wait();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_EQ(server_->Stats().closed_drain, 0u);
}

TEST_P(ServerTest, ConcurrentClientsOnEveryCpu) {
  StartServer();
  const std::vector<int> cpus = AllowedCpus();
  std::vector<std::thread> threads;
  std::atomic<int> answered{0};
  constexpr int kPerThread = 200;
  for (int cpu : cpus) {
    threads.emplace_back([&, cpu] {
      PinCurrentThread(cpu).IgnoreError();
      for (int i = 0; i < kPerThread; ++i) {
        if (Exchange("x\n").find(" x\n") != std::string::npos) answered.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const uint64_t expected = kPerThread * cpus.size();
  EXPECT_EQ(static_cast<uint64_t>(answered.load()), expected);
  ASSERT_TRUE(WaitForStats([&](const StatsSnapshot& s) { return s.served == expected; }));
  EXPECT_EQ(server_->Stats().sends, expected);
}

// A factory that records the thread its destructor ran on.
class TrackedFactory : public LineHandlerFactory {
 public:
  explicit TrackedFactory(std::shared_ptr<std::optional<std::thread::id>> destroyed_on)
      : destroyed_on_(std::move(destroyed_on)) {}
  ~TrackedFactory() override { *destroyed_on_ = std::this_thread::get_id(); }

 private:
  std::shared_ptr<std::optional<std::thread::id>> destroyed_on_;
};

// The data a reload replaces is freed by whoever takes it from TakeRetired (onepassd: a thread
// of its own), never by the worker that switched last: freeing a large zone there held up that
// worker's connections for about half a second.
TEST_P(ServerTest, ReplacedDataIsHandedBackOnceEveryWorkerSwitched) {
  config_.workers = 2;
  auto destroyed_on = std::make_shared<std::optional<std::thread::id>>();
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Create(config_, std::make_unique<TrackedFactory>(destroyed_on));
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = *std::move(server);
  server_->Start();
  EXPECT_FALSE(server_->retiring());

  ASSERT_TRUE(server_->Reload(std::make_unique<LineHandlerFactory>()).ok());
  EXPECT_TRUE(server_->retiring());
  std::vector<std::shared_ptr<const HandlerFactory>> retired;
  EXPECT_TRUE(WaitFor(
      [&] {
        for (auto& factory : server_->TakeRetired()) retired.push_back(std::move(factory));
        return !retired.empty();
      },
      absl::Seconds(10)));
  ASSERT_EQ(retired.size(), 1u);
  EXPECT_FALSE(server_->retiring());
  EXPECT_FALSE(destroyed_on->has_value()) << "a worker freed the replaced data";
  EXPECT_EQ(retired[0].use_count(), 1) << "still referenced elsewhere";
  retired.clear();
  ASSERT_TRUE(destroyed_on->has_value());
  EXPECT_EQ(**destroyed_on, std::this_thread::get_id());
  EXPECT_TRUE(server_->TakeRetired().empty());
}

// Server::Reload (SIGHUP in onepassd): refused data changes nothing; accepted data reaches
// every worker between events, and a connection parked mid-request finishes on the new one.
TEST_P(ServerTest, ReloadSwapsHandlersAndRefusesWhatTheBuffersCannotHold) {
  config_.workers = 2;
  StartServer();
  absl::StatusOr<TcpClient> parked = Connect();
  ASSERT_TRUE(parked.ok());
  ASSERT_TRUE(parked->Send("hel").ok());
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 1; }));

  // Refused: a load error, larger output buffers, larger requests than allocated.
  EXPECT_FALSE(server_->Reload(absl::UnavailableError("zone: no such file")).ok());
  LineProtocolOptions bigger_output;
  bigger_output.output_bytes = 1 << 20;
  absl::Status refused = server_->Reload(std::make_unique<LineHandlerFactory>(bigger_output));
  EXPECT_TRUE(absl::StrContains(refused.message(), "output buffers")) << refused;
  LineProtocolOptions bigger_requests;
  bigger_requests.max_line_bytes = 1 << 20;
  refused = server_->Reload(std::make_unique<LineHandlerFactory>(bigger_requests));
  EXPECT_TRUE(absl::StrContains(refused.message(), "requests")) << refused;
  EXPECT_EQ(server_->Stats().reload_failures, 3u);
  EXPECT_EQ(server_->Stats().reloads, 0u);
  // Still the old limit (256): a 16-byte partial line waits instead of being refused.
  absl::StatusOr<TcpClient> waits = Connect();
  ASSERT_TRUE(waits.ok());
  ASSERT_TRUE(waits->Send("0123456789abcdef").ok());
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 2; }));
  EXPECT_EQ(server_->Stats().rejected_oversize, 0u);

  // Accepted: requests of at most 8 bytes from now on.
  LineProtocolOptions smaller;
  smaller.max_line_bytes = 8;
  ASSERT_TRUE(server_->Reload(std::make_unique<LineHandlerFactory>(smaller)).ok());
  EXPECT_EQ(server_->Stats().reloads, 1u);
  // Every worker switches: with CPU steering a client on a worker's CPU reaches that worker.
  const WorkerPlacement& placement = server_->placement();
  for (int w = 0; w < server_->worker_count(); ++w) {
    auto exchange = [&] { EXPECT_EQ(Exchange("0123456789abcdef"), "") << w; };
    if (placement.cpu_steering) {
      OnCpu(placement.worker_cpus[w], exchange);
      EXPECT_TRUE(WaitForStats(
          [&](const StatsSnapshot&) { return server_->StatsOf(w).rejected_oversize >= 1; }));
    } else {
      exchange();
    }
  }
  // The connection parked before the reload finishes on the new handler.
  ASSERT_TRUE(parked->Send("lo\n").ok());
  absl::StatusOr<std::string> reply = parked->ReadUntilClose();
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_TRUE(absl::StrContains(*reply, " hello\n")) << *reply;
}

std::vector<IoLoop> Drivers() {
  std::vector<IoLoop> drivers = {IoLoop::kEpoll};
  if (UringDriverBuilt() && ProbeUring().ok()) drivers.push_back(IoLoop::kUring);
  return drivers;
}

INSTANTIATE_TEST_SUITE_P(Drivers, ServerTest, ::testing::ValuesIn(Drivers()),
                         [](const ::testing::TestParamInfo<IoLoop>& info) {
                           return info.param == IoLoop::kUring ? "uring" : "epoll";
                         });

}  // namespace
}  // namespace onepass
