// --allow-from end to end with the real onepassd --handler dns: from loopback aliases, a client
// in the list is answered and one outside it is closed at accept, over plain TCP (kdig), over
// TLS before any handshake byte (kdig +tls), and behind a trusted PROXY v2 balancer on the
// address its header names.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/metrics_client.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_for.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass::testing {
namespace {

// kdig's answer section for www.example.com A from `source`, "" when it got none.
std::string Kdig(int port, const std::string& source, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {"kdig", "@127.0.0.1", "-p",      absl::StrCat(port), "-b",
                                   source, "+short",     "+time=2", "+retry=0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"www.example.com", "A"});
  absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(20));
  return result.ok() ? result->out : "";
}

// A DNS-over-TCP query for www.example.com A.
std::string QueryFrame() {
  std::string message("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
  message += std::string(
      "\x03www\x07"
      "example\x03"
      "com\x00\x00\x01\x00\x01",
      21);
  return std::string(
             {static_cast<char>(message.size() >> 8), static_cast<char>(message.size() & 0xff)}) +
         message;
}

// A PROXY protocol v2 header (TCP over IPv4) naming `client` as the source.
std::string ProxyHeader(const char* client) {
  std::string header("\r\n\r\n\0\r\nQUIT\n", 12);
  header += '\x21';  // version 2, PROXY
  header += '\x11';  // TCP over IPv4
  header += std::string("\x00\x0c", 2);
  in_addr source{};
  in_addr destination{};
  inet_pton(AF_INET, client, &source);
  inet_pton(AF_INET, "127.0.0.1", &destination);
  header.append(reinterpret_cast<const char*>(&source), 4);
  header.append(reinterpret_cast<const char*>(&destination), 4);
  header += std::string("\x30\x39\x00\x35", 4);  // ports 12345 -> 53
  return header;
}

// Sends `bytes` from 127.0.0.1 and returns what came back before the server closed (2 s).
std::string SendRaw(int port, const std::string& bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size())) {
    const absl::Time give_up = absl::Now() + absl::Seconds(2);
    char buffer[4096];
    while (absl::Now() < give_up) {
      pollfd ready{.fd = fd, .events = POLLIN, .revents = 0};
      if (poll(&ready, 1, 100) <= 0) continue;
      const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      reply.append(buffer, static_cast<size_t>(n));
      if (reply.size() >= 2 && reply.size() >= 2u + ((static_cast<uint8_t>(reply[0]) << 8) |
                                                     static_cast<uint8_t>(reply[1]))) {
        break;
      }
    }
  }
  close(fd);
  return reply;
}

TEST(AllowListTest, PlainAndTlsClientsOutsideTheListAreClosedAtAccept) {
  tls::testing::TestPkiDir pki({.common_name = "dot.example.test"});
  auto server = ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--tls-listen",
                                      "127.0.0.1:0", "--tls-cert", pki.chain_file(), "--tls-key",
                                      pki.key_file(), "--workers", "1", "--metrics-listen",
                                      "127.0.0.1:0", "--allow-from", "127.0.0.2,10.0.0.0/8"});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string metrics = (*server)->metrics_address();
  const std::vector<std::string> tls = {"+tls", absl::StrCat("+tls-ca=", pki.ca_file()),
                                        "+tls-hostname=dot.example.test"};
  EXPECT_TRUE(absl::StrContains(Kdig((*server)->port(), "127.0.0.2", {"+tcp"}), "192.0.2.80"));
  EXPECT_TRUE(absl::StrContains(Kdig((*server)->tls_port(), "127.0.0.2", tls), "192.0.2.80"));
  EXPECT_EQ(Kdig((*server)->port(), "127.0.0.3", {"+tcp"}), "");
  EXPECT_EQ(Kdig((*server)->tls_port(), "127.0.0.3", tls), "");
  EXPECT_TRUE(WaitFor([&] { return ScrapeValue(metrics, "onepass_rejected_acl_total") >= 2; },
                      absl::Seconds(5)));
  // Refused before any TLS work: no handshake was started for them.
  EXPECT_EQ(ScrapeValue(metrics, "onepass_tls_handshakes_total{result=\"full\"}"), 1);
  EXPECT_EQ((*server)->Stop(), 0) << (*server)->ReadStderr();
}

TEST(AllowListTest, BehindAProxyBalancerTheHeadersClientIsChecked) {
  auto server = ServerProcess::Start(
      {"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1", "--metrics-listen",
       "127.0.0.1:0", "--proxy-protocol-from", "127.0.0.1/32", "--allow-from", "192.0.2.0/24"});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string metrics = (*server)->metrics_address();
  // The balancer itself (127.0.0.1) is not in the list: its clients are what counts.
  EXPECT_GT(SendRaw((*server)->port(), ProxyHeader("192.0.2.10") + QueryFrame()).size(), 12u);
  EXPECT_EQ(SendRaw((*server)->port(), ProxyHeader("198.51.100.1") + QueryFrame()), "");
  EXPECT_TRUE(WaitFor([&] { return ScrapeValue(metrics, "onepass_rejected_acl_total") == 1; },
                      absl::Seconds(5)));
  EXPECT_EQ((*server)->Stop(), 0) << (*server)->ReadStderr();
}

}  // namespace
}  // namespace onepass::testing
