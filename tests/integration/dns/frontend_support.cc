#include "tests/integration/dns/frontend_support.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/support/metrics_client.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns::testing {

std::string LoopbackBackend(int port) { return absl::StrCat("127.0.0.1:", port); }

absl::StatusOr<std::unique_ptr<onepass::testing::ServerProcess>> StartFrontend(
    const std::vector<std::string>& backends, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1"};
  for (const std::string& backend : backends) {
    args.push_back("--dns-backend");
    args.push_back(backend);
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return onepass::testing::ServerProcess::Start(args);
}

absl::StatusOr<std::vector<uint8_t>> ExchangeUdp(int port, const std::vector<uint8_t>& query) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  std::vector<uint8_t> reply(65536);
  ssize_t received = -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      send(fd, query.data(), query.size(), 0) == static_cast<ssize_t>(query.size())) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 2000) == 1) received = recv(fd, reply.data(), reply.size(), 0);
  }
  close(fd);
  if (received < 0) return absl::DeadlineExceededError("no UDP reply within 2 s");
  reply.resize(static_cast<size_t>(received));
  return reply;
}

int ExpectBytesAgree(int frontend_port, int backend_port, const std::vector<CorpusQuery>& corpus,
                     bool cached) {
  int compared = 0;
  for (const CorpusQuery& q : corpus) {
    const std::vector<uint8_t> query = MakeQuery(q.name, q.type, q.options);
    auto direct = ExchangeUdp(backend_port, query);
    if (!direct.ok()) {
      ADD_FAILURE() << q.line << ": straight to the backend over UDP: " << direct.status();
      continue;
    }
    for (int ask = 0; ask < (cached ? 2 : 1); ++ask) {
      auto through = ExchangeTcp(frontend_port, {query});
      ++compared;
      if (!through.ok() || through->size() != 1) {
        ADD_FAILURE() << q.line << ": through the frontend: "
                      << (through.ok() ? absl::StrCat(through->size(), " answers")
                                       : through.status().ToString());
        continue;
      }
      EXPECT_EQ((*through)[0], *direct)
          << q.line << (ask ? " (from the cache)" : "") << ": the frontend changed the answer";
    }
  }
  return compared;
}

double CacheCounter(const onepass::testing::ServerProcess& frontend, const std::string& result) {
  const std::string metrics = onepass::testing::HttpGet(frontend.metrics_address(), "/metrics");
  return onepass::testing::MetricValue(
      metrics, absl::StrCat("onepass_dns_frontend_cache_total{result=\"", result, "\"}"));
}

}  // namespace onepass::dns::testing
