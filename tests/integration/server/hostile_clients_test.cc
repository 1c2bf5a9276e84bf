// Hostile clients: pipelining across reads, clients that never read, messages that
// get no answer, the connection lifetime cap. The real onepassd --handler dns where the DNS
// session matters, the Server in-process with the line protocol where only the transport does.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "tests/support/in_process_server.h"
#include "tests/support/line_handler.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"

namespace onepass {
namespace {

using testing::LineHandlerFactory;
using testing::LineProtocolOptions;
using testing::ServerProcess;
using testing::StatValue;
using testing::TcpClient;

// A DNS-over-TCP frame (RFC 1035 §4.2.2) asking `label`.example.com A, with header flags `flags`.
std::string QueryFrame(uint16_t id, const std::string& label, uint16_t flags = 0) {
  std::string message = {static_cast<char>(id >> 8), static_cast<char>(id & 0xff),
                         static_cast<char>(flags >> 8), static_cast<char>(flags & 0xff)};
  message += std::string("\x00\x01\x00\x00\x00\x00\x00\x00", 8);
  message += static_cast<char>(label.size()) + label;
  message += std::string(
      "\x07"
      "example\x03"
      "com\x00\x00\x01\x00\x01",
      17);
  return std::string(
             {static_cast<char>(message.size() >> 8), static_cast<char>(message.size() & 0xff)}) +
         message;
}

// Reads from `fd` until the peer closes or `deadline`, counting whole DNS frames. `error` gets
// the errno of a failed recv (ECONNRESET: the connection was reset), 0 on EOF, ETIMEDOUT.
int CountFrames(int fd, absl::Time deadline, int stop_after, int& error) {
  std::string buffer;
  int frames = 0;
  char chunk[65536];
  error = ETIMEDOUT;
  while (absl::Now() < deadline && frames < stop_after) {
    pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n == 0) {
      error = 0;
      break;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    buffer.append(chunk, static_cast<size_t>(n));
    size_t at = 0;
    while (buffer.size() - at >= 2) {
      const size_t length =
          (static_cast<uint8_t>(buffer[at]) << 8) | static_cast<uint8_t>(buffer[at + 1]);
      if (buffer.size() - at < 2 + length) break;
      at += 2 + length;
      ++frames;
    }
    buffer.erase(0, at);
  }
  return frames;
}

// Defect 1: 10,000 queries of 33 to 37 bytes in one write. A read that ends exactly at a query
// boundary must not make the handler decide that the client is done and close with the rest
// unread (RST). Every query must be answered, and the connection end with an orderly close.
TEST(HostileDnsTest, PipelinedQueriesOfVaryingSizesAreAllAnswered) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1"});
  ASSERT_TRUE(server.ok()) << server.status();
  for (int attempt = 0; attempt < 3; ++attempt) {
    constexpr int kQueries = 10000;
    std::string queries;
    for (int i = 0; i < kQueries; ++i) {
      queries += QueryFrame(static_cast<uint16_t>(i), std::string(5 + (i * 7 + attempt) % 5, 'a'));
    }
    absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
    ASSERT_TRUE(client.ok()) << client.status();
    std::thread sender([&] { (void)client->Send(queries, absl::Seconds(30)); });
    int error = 0;
    const int answers = CountFrames(client->fd(), absl::Now() + absl::Seconds(30), kQueries, error);
    sender.join();
    EXPECT_EQ(answers, kQueries) << "attempt " << attempt << ": recv error " << error;
    // Done sending: the server answers our EOF with its own, not with a reset.
    client->ShutdownWrite();
    int end = 0;
    EXPECT_EQ(CountFrames(client->fd(), absl::Now() + absl::Seconds(5), 1, end), 0);
    EXPECT_EQ(end, 0) << "the connection ended with errno " << end << ", not an orderly close";
  }
  EXPECT_EQ((*server)->Stop(), 0);
  const std::string out = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(out, "errors"), 0) << out;
}

// Defect 4: a DNS response sent as a query (QR=1) is dropped without an answer (RFC 1035
// §4.1.1); sending one every 300 ms must not restart the read deadline forever. Only an
// answered request restarts it, so the connection is cut at the read timeout.
TEST(HostileDnsTest, AnswerlessMessagesDoNotExtendTheReadDeadline) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1",
                            "--read-timeout-ms", "1000"});
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
  ASSERT_TRUE(client.ok()) << client.status();
  const absl::Time start = absl::Now();
  bool closed = false;
  for (int i = 0; i < 20 && !closed; ++i) {  // 6 s at most
    if (!client->Send(QueryFrame(static_cast<uint16_t>(i), "www", 0x8000)).ok()) break;
    pollfd p = {.fd = client->fd(), .events = POLLIN, .revents = 0};
    closed = poll(&p, 1, 300) > 0;  // readable: EOF (nothing is ever answered)
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(2500));
  EXPECT_EQ((*server)->Stop(), 0);
  const std::string out = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(out, "read_timeouts"), 1) << out;
  EXPECT_EQ(StatValue(out, "served"), 0) << out;
}

// The transport alone, with the line protocol in-process.
class HostileClientTest : public testing::InProcessLineServerTest {
 protected:
  HostileClientTest() { config_.workers = 1; }
  // A client with the smallest receive window the kernel allows, so that answers stay unsent.
  absl::StatusOr<int> ConnectWithTinyWindow() {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError("socket");
    int tiny = 1;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &tiny, sizeof(tiny));
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port_));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      close(fd);
      return absl::InternalError("connect");
    }
    return fd;
  }
};

// Reads and drops what `fd` holds until it ends (1 s at most): 0 at EOF, else the errno of
// the failed recv (ECONNRESET: the server aborted), EAGAIN when it never ended.
int ReadUntilError(int fd) {
  int error = 0;
  char chunk[4096];
  for (int i = 0; i < 1000; ++i) {
    ssize_t n = recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n > 0) continue;
    error = n == 0 ? 0 : errno;
    if (error != EAGAIN) break;
    usleep(1000);
  }
  return error;
}

// 1,000 pipelined requests: ~11 KB of answers, more than kUnsentCheckBytes. The server takes
// them in the single pass; a client that never reads must not leave them to an orphaned socket
// for as long as it keeps acknowledging: it is aborted at the write deadline and counted.
std::string ManyLines(int n) {
  std::string lines;
  for (int i = 0; i < n; ++i) lines += "x\n";
  return lines;
}

TEST_F(HostileClientTest, NeverReaderIsAbortedAtTheWriteDeadline) {
  config_.write_timeout = absl::Milliseconds(300);
  StartServer();
  absl::StatusOr<int> fd = ConnectWithTinyWindow();
  ASSERT_TRUE(fd.ok()) << fd.status();
  const std::string lines = ManyLines(1000);
  ASSERT_EQ(send(*fd, lines.data(), lines.size(), 0), static_cast<ssize_t>(lines.size()));
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.timeouts == 1; }));
  const StatsSnapshot stats = server_->Stats();
  EXPECT_EQ(stats.unread_aborts + stats.write_timeouts, 1u) << stats.Format();
  // The client sees the reset once it finally reads.
  EXPECT_EQ(ReadUntilError(*fd), ECONNRESET);
  close(*fd);
}

// Round four, plain TCP: stalled clients (each sent part of a request) fill every parked slot.
// A client whose request comes in two segments must still be served: the connection that has
// waited longest makes room (it used to be the newcomer that was refused). A whole request is
// served in the single pass either way.
TEST_F(HostileClientTest, AFullPoolMakesRoomFromTheConnectionWaitingLongest) {
  config_.max_connections = 4;
  config_.read_timeout = absl::Seconds(10);
  StartServer();
  std::vector<TcpClient> stalled;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", port_);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(client->Send("part").ok());
    stalled.push_back(*std::move(client));
    const uint64_t parked = static_cast<uint64_t>(i) + 1;
    ASSERT_TRUE(WaitForStats([parked](const StatsSnapshot& s) { return s.parked == parked; }));
  }
  absl::StatusOr<TcpClient> split = TcpClient::Connect("127.0.0.1", port_);
  ASSERT_TRUE(split.ok());
  ASSERT_TRUE(split->Send("hel").ok());
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 5; }));
  ASSERT_TRUE(split->Send("lo\n").ok());
  absl::StatusOr<std::string> answer = split->ReadLine(absl::Seconds(5));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, "worker=0 hello\n");
  const StatsSnapshot stats = server_->Stats();
  EXPECT_EQ(stats.evicted_waiting, 1u) << stats.Format();
  EXPECT_EQ(stats.rejected_pool_full, 0u) << stats.Format();
  // The first stalled client was the one closed.
  EXPECT_TRUE(stalled[0].ReadUntilClose(absl::Seconds(2)).ok());
}

// Sockets of local port `port` in state FIN_WAIT1 (/proc/net/tcp state 04): an orphan the
// server closed gracefully whose unsent bytes the kernel still holds for the client.
int OrphansOn(int port) {
  std::ifstream file("/proc/net/tcp");
  std::string line;
  std::getline(file, line);
  const std::string local = absl::StrCat(":", absl::Hex(port, absl::kZeroPad4));
  int orphans = 0;
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    std::string slot, local_address, remote_address, state;
    fields >> slot >> local_address >> remote_address >> state;
    if (absl::EndsWith(absl::AsciiStrToUpper(local_address), absl::AsciiStrToUpper(local)) &&
        state == "04") {
      ++orphans;
    }
  }
  return orphans;
}

// Round four, defect 3: a kept-alive client pipelines 1,000 requests and never reads. The
// kernel takes every answer (the connection goes back to waiting for requests), holds them
// unsent behind the client's closed window, and the connection then ends as an idle close:
// it must be aborted, not closed gracefully, or an orphan keeps the answers for minutes.
TEST_F(HostileClientTest, NeverReaderThatGoesIdleIsAbortedNotOrphaned) {
  config_.keepalive = absl::Milliseconds(300);
  config_.write_timeout = absl::Seconds(30);  // not what ends it
  StartServer();
  absl::StatusOr<int> fd = ConnectWithTinyWindow();
  ASSERT_TRUE(fd.ok()) << fd.status();
  const std::string lines = ManyLines(1000);
  ASSERT_EQ(send(*fd, lines.data(), lines.size(), 0), static_cast<ssize_t>(lines.size()));
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.idle_closes == 1; }));
  const StatsSnapshot stats = server_->Stats();
  EXPECT_EQ(stats.unsent_aborts, 1u) << stats.Format();
  EXPECT_EQ(stats.write_timeouts + stats.unread_aborts, 0u) << stats.Format();
  EXPECT_EQ(OrphansOn(port_), 0);
  EXPECT_EQ(ReadUntilError(*fd), ECONNRESET);
  close(*fd);
}

// A kept-alive client that reads its answers and then idles is closed gracefully: the check
// asks the kernel, which has sent everything.
TEST_F(HostileClientTest, ReaderThatGoesIdleGetsAnOrderlyClose) {
  config_.keepalive = absl::Milliseconds(300);
  StartServer();
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", port_);
  ASSERT_TRUE(client.ok());
  const std::string lines = ManyLines(1000);
  ASSERT_TRUE(client->Send(lines).ok());
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(client->ReadLine(absl::Seconds(5)).ok()) << i;
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.idle_closes == 1; }));
  EXPECT_EQ(server_->Stats().unsent_aborts, 0u);
}

// The same answers to a client that reads them (slowly, through its tiny window): it gets every
// one and an orderly close; the wait for the kernel to send them ends when it has, not at the
// deadline.
TEST_F(HostileClientTest, ReaderOfManyAnswersGetsThemAllAndAnOrderlyClose) {
  config_.write_timeout = absl::Seconds(10);
  StartServer();
  absl::StatusOr<int> fd = ConnectWithTinyWindow();
  ASSERT_TRUE(fd.ok()) << fd.status();
  const std::string lines = ManyLines(1000);
  ASSERT_EQ(send(*fd, lines.data(), lines.size(), 0), static_cast<ssize_t>(lines.size()));
  const absl::Time start = absl::Now();
  std::string reply;
  int error = ETIMEDOUT;
  char chunk[512];
  while (absl::Now() - start < absl::Seconds(8)) {
    pollfd p = {.fd = *fd, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = recv(*fd, chunk, sizeof(chunk), 0);
    if (n <= 0) {
      error = n == 0 ? 0 : errno;
      break;
    }
    reply.append(chunk, static_cast<size_t>(n));
  }
  EXPECT_EQ(error, 0);
  EXPECT_EQ(std::count(reply.begin(), reply.end(), '\n'), 1000);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  close(*fd);
  const StatsSnapshot stats = server_->Stats();
  EXPECT_EQ(stats.timeouts, 0u) << stats.Format();
  EXPECT_EQ(stats.served, 1u) << stats.Format();
}

// Defect 4: a kept-alive client whose every request is answered is still closed at
// --max-connection-ms.
TEST_F(HostileClientTest, LifetimeCapClosesABusyKeptAliveConnection) {
  config_.keepalive = absl::Seconds(5);
  config_.max_connection_time = absl::Milliseconds(700);
  StartServer();
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", port_);
  ASSERT_TRUE(client.ok());
  const absl::Time start = absl::Now();
  bool closed = false;
  for (int i = 0; i < 50 && !closed; ++i) {  // 5 s at most
    closed = !client->Send("ping\n").ok() || !client->ReadLine(absl::Seconds(2)).ok();
    usleep(100 * 1000);
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.lifetime_cuts == 1; }));
  EXPECT_GT(server_->Stats().responses, 3u);
}

// A temporary directory, removed with its files.
class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "onepass-hostile-XXXXXX";
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~TempDir() {
    if (!path_.empty()) (void)testing::RunCommand({"rm", "-rf", path_});
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadLog(ServerProcess& server, absl::string_view until) {
  std::string log;
  testing::WaitFor(
      [&] {
        log += server.ReadStderr();
        return absl::StrContains(log, until);
      },
      absl::Seconds(10));
  return log;
}

// Defect 5: a zone path pointing at /dev/zero made SIGHUP read until std::bad_alloc killed the
// server; a file over --max-data-file-mb is refused the same way. The previous data stays.
TEST(HostileReloadTest, DeviceOrOversizeZoneFailsTheReloadAndKeepsServing) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string zone = dir.path() + "/example.com.zone";
  ASSERT_TRUE(testing::RunCommand(
                  {"cp", std::string(ONEPASS_SOURCE_DIR) + "/tests/data/example.com.zone", zone},
                  absl::Seconds(5))
                  .ok());
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1",
                            "--zone", zone, "--max-data-file-mb", "1"});
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_EQ(unlink(zone.c_str()), 0);
  ASSERT_EQ(symlink("/dev/zero", zone.c_str()), 0);
  ASSERT_EQ(kill((*server)->pid(), SIGHUP), 0);
  std::string log = ReadLog(**server, "reload failed: ");
  EXPECT_TRUE(absl::StrContains(log, "is not a regular file")) << log;
  // Larger than the cap (1 MiB).
  ASSERT_EQ(unlink(zone.c_str()), 0);
  {
    std::ofstream big(zone);
    big << "$ORIGIN example.com.\n";
    for (int i = 0; i < 40000; ++i) big << "; padding to make the file larger than one MiB\n";
  }
  ASSERT_EQ(kill((*server)->pid(), SIGHUP), 0);
  log = ReadLog(**server, "--max-data-file-mb");
  EXPECT_TRUE(absl::StrContains(log, "larger than --max-data-file-mb")) << log;
  // Still serving the first data.
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send(QueryFrame(7, "www")).ok());
  int error = 0;
  EXPECT_EQ(CountFrames(client->fd(), absl::Now() + absl::Seconds(5), 1, error), 1);
  EXPECT_EQ((*server)->Stop(), 0);
  EXPECT_EQ(StatValue((*server)->ReadStdout(), "reload_failures"), 2);
}

// Defect 6: a reload stuck on a FIFO without a writer must not block the signal thread and
// leave SIGTERM waiting for a writer. Loading runs apart: SIGTERM stops the server within
// its drain deadline. (The line server's loader reads its file without OpenDataFile's checks,
// as a stand-in for any load that blocks, e.g. on a hung network mount.)
TEST(HostileReloadTest, SigtermStopsTheServerWhileAReloadIsStuck) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string data = dir.path() + "/data";
  { std::ofstream(data) << "x\n"; }
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
      {"-c", absl::StrCat("ONEPASS_LINE_LOAD_FILE=", data, " exec ", LINE_SERVER_PATH,
                          " --handler line --listen 127.0.0.1:0 --workers 1 "
                          "--drain-timeout-ms 500")},
      "/bin/sh");
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_EQ(unlink(data.c_str()), 0);
  ASSERT_EQ(mkfifo(data.c_str(), 0600), 0);
  ASSERT_EQ(kill((*server)->pid(), SIGHUP), 0);
  ReadLog(**server, "SIGHUP: reloading");
  // Still serving while the load is stuck.
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send("hello\n").ok());
  absl::StatusOr<std::string> reply = client->ReadUntilClose();
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_TRUE(absl::StrContains(*reply, " hello\n"));
  const absl::Time stop = absl::Now();
  EXPECT_EQ((*server)->Stop(absl::Seconds(5)), 0);
  EXPECT_LT(absl::Now() - stop, absl::Seconds(2));
  EXPECT_TRUE(absl::StrContains((*server)->ReadStdout(), "stats accepted=1"));
}

}  // namespace
}  // namespace onepass
