// The DNS frontend's TCP retry end to end: NSD (started by the test on loopback, UDP and TCP
// on one port) serves a TXT RRset of about 1.7 KB, more than a UDP answer may carry without
// EDNS or with a 512-byte EDNS size, so NSD answers TC=1 over UDP. Through onepassd the client
// must get the full answer (as NSD gives it over TCP), never the truncated one, with the TCP
// connections to NSD pooled and reused; a TCP retry that gets no answer is SERVFAIL by the
// query's deadline. A fake backend inside the test (TC=1 over UDP, a TCP listener that never
// answers) stands in for what NSD will not do on demand.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/integration/dns/nsd_process.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using onepass::testing::RunCommand;
using testing::ExchangeTcp;
using testing::FrontendMetric;
using testing::MakeQuery;

constexpr int kTxtRecords = 8;  // 8 × ~210 bytes: over 1232, let alone 512

// Writes the zone `tc.example` with `big.tc.example TXT` ×8 into a fresh directory.
std::string WriteBigTxtZone() {
  char dir[] = "/tmp/onepass-tc-zone-XXXXXX";
  if (mkdtemp(dir) == nullptr) return "";
  const std::string path = std::string(dir) + "/tc.example.zone";
  std::ofstream zone(path);
  zone << "$ORIGIN tc.example.\n$TTL 300\n"
       << "@ IN SOA ns.tc.example. admin.tc.example. 1 3600 900 604800 300\n"
       << "@ IN NS ns\nns IN A 127.0.0.1\nsmall IN TXT \"fits\"\n";
  for (int i = 0; i < kTxtRecords; ++i) {
    zone << "big IN TXT \"record " << i << " " << std::string(200, static_cast<char>('a' + i))
         << "\"\n";
  }
  return zone.good() ? path : "";
}

absl::StatusOr<std::unique_ptr<onepass::testing::ServerProcess>> StartFrontend(
    int backend_port, std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "--handler",        "dns",        "--listen",      "127.0.0.1:0",
      "--workers",        "1",          "--dns-backend", absl::StrCat("127.0.0.1:", backend_port),
      "--metrics-listen", "127.0.0.1:0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return onepass::testing::ServerProcess::Start(args);
}

const std::string kRetriesSent = "onepass_dns_frontend_tcp_retries_total{result=\"sent\"}";
const std::string kRetriesAnswered = "onepass_dns_frontend_tcp_retries_total{result=\"answered\"}";
const std::string kRetriesFailed = "onepass_dns_frontend_tcp_retries_total{result=\"failed\"}";
const std::string kStreamConnects = "onepass_upstream_stream_connects_total";

// kdig's answer with every section, the random ID dropped.
std::string Kdig(int port, const std::vector<std::string>& options) {
  std::vector<std::string> argv = {
      "kdig",           "-p",      std::to_string(port), "@127.0.0.1",  "+noall",     "+header",
      "+question",      "+answer", "+authority",         "+additional", "+timeout=3", "+retry=0",
      "big.tc.example", "TXT"};
  argv.insert(argv.end(), options.begin(), options.end());
  auto result = RunCommand(argv, absl::Seconds(10));
  if (!result.ok()) return "kdig did not run: " + result.status().ToString();
  std::string text = result->out;
  const size_t id = text.find("; id: ");
  if (id != std::string::npos) text.erase(id, text.find('\n', id) - id);
  return text;
}

// Whether kdig's ";; Flags: qr aa tc; ..." line has TC.
bool Truncated(const std::string& kdig_text) {
  const size_t flags = kdig_text.find("Flags:");
  if (flags == std::string::npos) return false;
  const std::string line = kdig_text.substr(flags, kdig_text.find(';', flags) - flags);
  return line.find(" tc") != std::string::npos;
}

int CountOf(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

class FrontendTcRetry : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!onepass::testing::ProgramExists("nsd")) GTEST_FAIL() << "nsd is not installed";
    zone_ = WriteBigTxtZone();
    ASSERT_FALSE(zone_.empty());
    auto nsd = testing::NsdProcess::Start({{"tc.example", zone_}});
    ASSERT_TRUE(nsd.ok()) << nsd.status();
    nsd_ = *std::move(nsd);
  }
  void TearDown() override {
    if (zone_.empty()) return;
    std::remove(zone_.c_str());
    std::remove(zone_.substr(0, zone_.rfind('/')).c_str());
  }
  std::string zone_;
  std::unique_ptr<testing::NsdProcess> nsd_;
};

TEST_F(FrontendTcRetry, KdigGetsNsdsFullTcpAnswerThroughTheFrontendOnOnePooledConnection) {
  if (!onepass::testing::ProgramExists("kdig")) GTEST_FAIL() << "kdig is not installed";
  // The premise: over UDP with a 512-byte EDNS size, NSD truncates.
  const std::string udp = Kdig(nsd_->port(), {"+notcp", "+bufsize=512", "+ignore"});
  ASSERT_TRUE(Truncated(udp)) << "NSD did not truncate:\n" << udp;
  const std::string direct = Kdig(nsd_->port(), {"+tcp", "+bufsize=512"});
  ASSERT_EQ(CountOf(direct, "\"record "), kTxtRecords) << direct;
  auto frontend = StartFrontend(nsd_->port(), {"--dns-cache-entries", "0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  constexpr int kAsks = 5;
  for (int i = 0; i < kAsks; ++i) {
    const std::string through = Kdig((*frontend)->port(), {"+tcp", "+bufsize=512"});
    EXPECT_EQ(through, direct) << "ask " << i;
    EXPECT_FALSE(Truncated(through)) << through;
    if (i == 0) std::cout << "through the frontend:\n" << through;
  }
  EXPECT_EQ(FrontendMetric(**frontend, kRetriesSent), kAsks);
  EXPECT_EQ(FrontendMetric(**frontend, kRetriesAnswered), kAsks);
  EXPECT_EQ(FrontendMetric(**frontend, kRetriesFailed), 0);
  EXPECT_EQ(FrontendMetric(**frontend, kStreamConnects), 1)
      << "the TCP connection to NSD is reused";
}

TEST_F(FrontendTcRetry, WithoutEdnsTheSameAndOnlyTheFullAnswerIsCached) {
  auto frontend = StartFrontend(nsd_->port(), {"--dns-cache-entries", "100"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const std::vector<uint8_t> query = MakeQuery("big.tc.example", "TXT", {.id = 4242});
  auto direct = ExchangeTcp(nsd_->port(), {query});
  ASSERT_TRUE(direct.ok() && direct->size() == 1u);
  auto expected = testing::DecodeResponse((*direct)[0]);
  ASSERT_TRUE(expected.ok());
  ASSERT_EQ(expected->answer.size(), static_cast<size_t>(kTxtRecords));
  for (int ask = 0; ask < 2; ++ask) {  // the second from the cache
    auto through = ExchangeTcp((*frontend)->port(), {query});
    ASSERT_TRUE(through.ok()) << through.status();
    ASSERT_EQ(through->size(), 1u);
    EXPECT_EQ((*through)[0], (*direct)[0]) << "ask " << ask << ": not NSD's TCP answer";
  }
  EXPECT_EQ(FrontendMetric(**frontend, kRetriesSent), 1);
  EXPECT_EQ(FrontendMetric(**frontend, "onepass_dns_frontend_cache_total{result=\"hit\"}"), 1);
  // Pipelined: several at once on one client connection, each retried, all full.
  std::vector<std::vector<uint8_t>> queries;
  for (uint16_t id = 1; id <= 4; ++id) {
    queries.push_back(MakeQuery(id % 2 ? "BIG.tc.example" : "big.TC.example", "TXT", {.id = id}));
  }
  auto replies = ExchangeTcp((*frontend)->port(), queries);
  ASSERT_TRUE(replies.ok()) << replies.status();
  ASSERT_EQ(replies->size(), queries.size());
  for (const auto& reply : *replies) {
    auto decoded = testing::DecodeResponse(reply);
    ASSERT_TRUE(decoded.ok());
    EXPECT_FALSE(decoded->tc);
    EXPECT_EQ(decoded->answer, expected->answer);
  }
}

TEST_F(FrontendTcRetry, NsdStoppedMidwayServfailWithinTheDeadline) {
  auto frontend =
      StartFrontend(nsd_->port(), {"--dns-cache-entries", "0", "--dns-backend-timeout-ms", "500"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const std::vector<uint8_t> query = MakeQuery("big.tc.example", "TXT", {.id = 7});
  auto first = ExchangeTcp((*frontend)->port(), {query});
  ASSERT_TRUE(first.ok() && first->size() == 1u);
  auto decoded = testing::DecodeResponse((*first)[0]);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->answer.size(), static_cast<size_t>(kTxtRecords));
  nsd_.reset();  // SIGTERM, waited for: UDP and the pooled TCP connection go with it
  for (int i = 0; i < 2; ++i) {
    const absl::Time start = absl::Now();
    auto after = ExchangeTcp((*frontend)->port(), {query});
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(after.ok() && after->size() == 1u) << "ask " << i;
    auto servfail = testing::DecodeResponse((*after)[0]);
    ASSERT_TRUE(servfail.ok());
    EXPECT_EQ(servfail->rcode, 2) << "SERVFAIL";
    EXPECT_EQ(servfail->id, 7);
    EXPECT_LT(took, absl::Milliseconds(1500)) << "within the 500 ms deadline (and a tick)";
  }
}

// What the fake backend's TCP side does with the queries it reads.
enum class TcpBehavior {
  kSilent,                // reads, never answers
  kCloseFirstThenAnswer,  // closes its first connection after reading; answers on the others
};

// A backend inside the test: UDP on a loopback port answers every query with itself, QR and
// TC set; TCP on the same port accepts and reads, and answers as `tcp` says (the query
// itself with QR set: NOERROR, no records).
class TruncatingBackend {
 public:
  explicit TruncatingBackend(TcpBehavior tcp = TcpBehavior::kSilent) : tcp_behavior_(tcp) {
    for (int attempt = 0; attempt < 20 && port_ == 0; ++attempt) Bind();
    thread_ = std::thread([this] { Serve(); });
  }
  ~TruncatingBackend() {
    stop_ = true;
    thread_.join();
    for (int fd : {udp_, tcp_}) {
      if (fd >= 0) close(fd);
    }
  }
  int port() const { return port_; }
  std::atomic<int> tcp_queries_bytes{0};
  std::atomic<int> tcp_accepted{0};

 private:
  void Bind() {
    tcp_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (bind(tcp_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        listen(tcp_, 8) != 0 ||
        getsockname(tcp_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      close(tcp_);
      return;
    }
    udp_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (bind(udp_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      close(udp_);
      close(tcp_);
      udp_ = tcp_ = -1;
      return;  // that UDP port is taken: another one
    }
    port_ = ntohs(address.sin_port);
  }
  void Serve() {
    std::vector<int> peers;
    int first_peer = -1;
    std::map<int, std::string> unread;  // per peer: bytes not yet a whole frame
    std::vector<uint8_t> buffer(65536);
    while (!stop_) {
      std::vector<pollfd> fds = {{udp_, POLLIN, 0}, {tcp_, POLLIN, 0}};
      for (int peer : peers) fds.push_back({peer, POLLIN, 0});
      if (poll(fds.data(), fds.size(), 50) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        sockaddr_storage from{};
        socklen_t from_length = sizeof(from);
        const ssize_t n = recvfrom(udp_, buffer.data(), buffer.size(), 0,
                                   reinterpret_cast<sockaddr*>(&from), &from_length);
        if (n >= 12) {
          buffer[2] |= 0x82;  // QR, TC
          sendto(udp_, buffer.data(), static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from),
                 from_length);
        }
      }
      if (fds[1].revents & POLLIN) {
        const int peer = accept4(tcp_, nullptr, nullptr, SOCK_CLOEXEC);
        if (peer >= 0) {
          if (tcp_accepted++ == 0) first_peer = peer;
          peers.push_back(peer);
        }
      }
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const int peer = fds[i].fd;
        const ssize_t n = recv(peer, buffer.data(), buffer.size(), 0);
        const bool close_now =
            tcp_behavior_ == TcpBehavior::kCloseFirstThenAnswer && peer == first_peer && n > 0;
        if (n > 0) tcp_queries_bytes += static_cast<int>(n);
        if (n <= 0 || close_now) {  // the frontend closed it (its io timeout), or we do
          close(peer);
          peers.erase(std::find(peers.begin(), peers.end(), peer));
          unread.erase(peer);
          if (peer == first_peer) first_peer = -2;  // its number may be reused
          continue;
        }
        if (tcp_behavior_ == TcpBehavior::kSilent) continue;
        std::string& bytes = unread[peer];
        bytes.append(reinterpret_cast<const char*>(buffer.data()), static_cast<size_t>(n));
        while (bytes.size() >= 2) {
          const size_t length =
              (size_t{static_cast<uint8_t>(bytes[0])} << 8) | static_cast<uint8_t>(bytes[1]);
          if (bytes.size() < 2 + length) break;
          std::string answer = bytes.substr(0, 2 + length);
          bytes.erase(0, 2 + length);
          if (length >= 12) answer[4] = static_cast<char>(answer[4] | 0x80);  // QR
          send(peer, answer.data(), answer.size(), MSG_NOSIGNAL);
        }
      }
    }
    for (int peer : peers) close(peer);
  }

  const TcpBehavior tcp_behavior_;
  int udp_ = -1;
  int tcp_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
};

TEST(FrontendTcRetryFailure, SilentTcpBackendServfailAtTheQueryDeadlineNeverTruncated) {
  TruncatingBackend backend;
  ASSERT_NE(backend.port(), 0);
  auto frontend = StartFrontend(
      backend.port(), {"--dns-backend-timeout-ms", "300", "--dns-backend-down-after", "100"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const std::vector<uint8_t> query = MakeQuery("big.tc.example", "TXT", {.id = 99});
  for (int i = 0; i < 3; ++i) {
    const absl::Time start = absl::Now();
    auto reply = ExchangeTcp((*frontend)->port(), {query});
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(reply.ok() && reply->size() == 1u) << "ask " << i;
    auto decoded = testing::DecodeResponse((*reply)[0]);
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(decoded->rcode, 2) << "SERVFAIL, not the truncated answer";
    EXPECT_FALSE(decoded->tc);
    EXPECT_GE(took, absl::Milliseconds(290));
    EXPECT_LT(took, absl::Milliseconds(1500))
        << "the 300 ms deadline and a tick, on a busy machine";
  }
  EXPECT_GT(backend.tcp_queries_bytes, 0) << "the retries went over TCP";
  EXPECT_EQ(FrontendMetric(**frontend, kRetriesSent), 3);
  EXPECT_EQ(FrontendMetric(**frontend, kRetriesFailed), 3);
  EXPECT_EQ(FrontendMetric(**frontend, kRetriesAnswered), 0);
}

TEST(FrontendTcRetryFailure, TcpConnectionThatBreaksIsRetriedOnceOnANewOneAndAnswers) {
  // The backend closes its first TCP connection after reading the query, unanswered: the
  // query goes once more, unchanged, on a new pooled connection, whose answer the client gets.
  TruncatingBackend backend(TcpBehavior::kCloseFirstThenAnswer);
  ASSERT_NE(backend.port(), 0);
  auto frontend = StartFrontend(backend.port(),
                                {"--dns-backend-timeout-ms", "2000", "--dns-cache-entries", "0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const std::vector<uint8_t> query = MakeQuery("big.tc.example", "TXT", {.id = 321});
  const absl::Time start = absl::Now();
  auto reply = ExchangeTcp((*frontend)->port(), {query});
  ASSERT_TRUE(reply.ok() && reply->size() == 1u);
  auto decoded = testing::DecodeResponse((*reply)[0]);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->rcode, 0) << "the second connection's answer, not SERVFAIL";
  EXPECT_EQ(decoded->id, 321);
  EXPECT_FALSE(decoded->tc);
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(1500)) << "at once, not at the deadline";
  EXPECT_EQ(backend.tcp_accepted, 2);
  EXPECT_EQ(FrontendMetric(**frontend, "onepass_upstream_stream_resent_total"), 1);
  EXPECT_EQ(FrontendMetric(**frontend, kRetriesAnswered), 1);
  EXPECT_EQ(FrontendMetric(**frontend, kRetriesFailed), 0);
}

}  // namespace
}  // namespace onepass::dns
