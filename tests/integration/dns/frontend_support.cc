#include "tests/integration/dns/frontend_support.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/support/metrics_client.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns::testing {

std::string LoopbackBackend(int port) { return absl::StrCat("127.0.0.1:", port); }

absl::StatusOr<std::unique_ptr<onepass::testing::ServerProcess>> StartFrontend(
    const std::vector<std::string>& backends, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--handler", "dns", "--listen",     "127.0.0.1:0",
                                   "--workers", "1",   "--allow-from", "127.0.0.0/8,::1"};
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

namespace {

// The offset after the (possibly compressed) name at `at`, or nullopt.
std::optional<size_t> SkipName(const std::vector<uint8_t>& m, size_t at) {
  while (at < m.size()) {
    if (m[at] == 0) return at + 1;
    if ((m[at] & 0xc0) == 0xc0) return at + 2;
    at += 1 + m[at];
  }
  return std::nullopt;
}

// The offsets of the TTL fields of every record of `m` but the OPT; nullopt when it does not
// parse.
std::optional<std::vector<size_t>> TtlOffsets(const std::vector<uint8_t>& m) {
  if (m.size() < 12) return std::nullopt;
  auto count = [&m](size_t at) { return (m[at] << 8) | m[at + 1]; };
  size_t at = 12;
  for (int i = 0; i < count(4); ++i) {
    std::optional<size_t> end = SkipName(m, at);
    if (!end.has_value()) return std::nullopt;
    at = *end + 4;
  }
  std::vector<size_t> offsets;
  const int records = count(6) + count(8) + count(10);
  for (int i = 0; i < records; ++i) {
    std::optional<size_t> end = SkipName(m, at);
    if (!end.has_value() || *end + 10 > m.size()) return std::nullopt;
    if (count(*end) != 41) offsets.push_back(*end + 4);  // OPT: flags, not a TTL
    at = *end + 10 + count(*end + 8);
  }
  if (at > m.size()) return std::nullopt;
  return offsets;
}

uint32_t ReadTtl(const std::vector<uint8_t>& m, size_t at) {
  return (uint32_t{m[at]} << 24) | (uint32_t{m[at + 1]} << 16) | (uint32_t{m[at + 2]} << 8) |
         m[at + 3];
}

}  // namespace

bool TtlsAged(const std::vector<uint32_t>& through, const std::vector<uint32_t>& direct,
              absl::Duration max_age) {
  if (through.size() != direct.size()) return false;
  const int64_t max_seconds = absl::ToInt64Seconds(absl::Ceil(max_age, absl::Seconds(1)));
  for (size_t i = 0; i < through.size(); ++i) {
    if (through[i] > direct[i] || direct[i] - through[i] > max_seconds) return false;
  }
  return true;
}

bool IsAgedCopy(const std::vector<uint8_t>& through, const std::vector<uint8_t>& direct,
                absl::Duration max_age) {
  if (through.size() != direct.size()) return false;
  const std::optional<std::vector<size_t>> offsets = TtlOffsets(direct);
  if (!offsets.has_value()) return false;
  std::vector<uint8_t> a = through;
  std::vector<uint8_t> b = direct;
  std::vector<uint32_t> through_ttls;
  std::vector<uint32_t> direct_ttls;
  for (size_t at : *offsets) {
    through_ttls.push_back(ReadTtl(a, at));
    direct_ttls.push_back(ReadTtl(b, at));
    std::fill(a.begin() + at, a.begin() + at + 4, 0);
    std::fill(b.begin() + at, b.begin() + at + 4, 0);
  }
  return a == b && TtlsAged(through_ttls, direct_ttls, max_age);
}

int ExpectBytesAgree(int frontend_port, int backend_port, const std::vector<CorpusQuery>& corpus,
                     bool cached) {
  const absl::Time start = absl::Now();
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
      if ((*through)[0] == *direct) continue;
      EXPECT_TRUE(cached && IsAgedCopy((*through)[0], *direct, absl::Now() - start))
          << q.line << (ask ? " (from the cache)" : "") << ": the frontend changed the answer";
    }
  }
  return compared;
}

double FrontendMetric(const onepass::testing::ServerProcess& frontend, const std::string& name) {
  return onepass::testing::ScrapeValue(frontend.metrics_address(), name);
}

double CacheCounter(const onepass::testing::ServerProcess& frontend, const std::string& result) {
  return FrontendMetric(frontend,
                        absl::StrCat("onepass_dns_frontend_cache_total{result=\"", result, "\"}"));
}

bool WaitMarkedDown(const onepass::testing::ServerProcess& frontend, double count,
                    absl::Duration limit) {
  return onepass::testing::WaitFor(
      [&] {
        return FrontendMetric(frontend,
                              "onepass_dns_frontend_backend_events_total{event=\"marked_down\"}") >=
               count;
      },
      limit);
}

}  // namespace onepass::dns::testing
