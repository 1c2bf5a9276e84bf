// An off-path attacker against the frontend's cache (RFC 5452): it can send datagrams with the
// backend's source address, and it learns the source port and ID of a query it caused itself
// (a query for a name of its own, whose authoritative server it watches: the backend in this
// test records them). Then, while a query for the victim name waits on the backend, it sends
// a forged answer for every one of the 65536 IDs to the port it learned. With one fixed port
// per backend and an ID reused at once, one of them is the answer the frontend takes, hands
// the client and caches for every later client. With a fresh random port per query and an
// unpredictable ID, none is: the client gets the backend's true answer, and so does the next
// client, from the cache.

#include <cstring>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/integration/dns/fake_udp_backend.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/support/metrics_client.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::DecodeResponse;
using testing::MakeQuery;

constexpr uint8_t kTrueAddress[4] = {192, 0, 2, 1};
constexpr uint8_t kForgedAddress[4] = {6, 6, 6, 6};

// The end of the question section of `query` (one question), or 0.
size_t QuestionEnd(const std::vector<uint8_t>& query) {
  size_t at = 12;
  while (at < query.size() && query[at] != 0) at += 1 + query[at];
  at += 1 + 4;
  return at <= query.size() ? at : 0;
}

// An authoritative answer to `query` with one A record `address` and the ID `id`.
std::vector<uint8_t> Answer(const std::vector<uint8_t>& query, uint16_t id,
                            const uint8_t (&address)[4]) {
  const size_t end = QuestionEnd(query);
  std::vector<uint8_t> answer(query.begin(), query.begin() + static_cast<ptrdiff_t>(end));
  answer[0] = static_cast<uint8_t>(id >> 8);
  answer[1] = static_cast<uint8_t>(id);
  answer[2] = static_cast<uint8_t>(0x84 | (query[2] & 0x01));  // QR, AA, RD copied
  answer[3] = 0;
  answer[6] = 0, answer[7] = 1;                         // ANCOUNT
  answer[8] = answer[9] = answer[10] = answer[11] = 0;  // NSCOUNT, ARCOUNT
  const uint8_t record[] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 0x0e, 0x10, 0, 4};
  answer.insert(answer.end(), std::begin(record), std::end(record));
  answer.insert(answer.end(), std::begin(address), std::end(address));
  return answer;
}

// The backend: answers "*.attacker.example." at once (the attacker's own zone) and records
// each query's source port and ID; holds "victim.example." unanswered (the test answers it
// with ReleaseVictim).
class RecordingBackend {
 public:
  struct Seen {
    std::string qname_wire;
    uint16_t port = 0;
    uint16_t id = 0;
    std::vector<uint8_t> query;
  };

  RecordingBackend()
      : udp_([this](testing::FakeUdpBackend& udp, uint16_t port, absl::Span<const uint8_t> query) {
          Record(udp, port, query);
        }) {}

  int port() const { return udp_.port(); }
  std::vector<Seen> seen() {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_;
  }
  // Sends `datagram` from the backend's own address and port (FakeUdpBackend::SendFrom).
  bool SendFromBackend(uint16_t port, const std::vector<uint8_t>& datagram) {
    return udp_.SendFrom(port, datagram);
  }
  // The true answer to each victim query held so far, to the port it came from.
  void ReleaseVictim() {
    for (const Seen& seen : seen()) {
      if (seen.qname_wire == testing::WireName("victim.example.")) {
        SendFromBackend(seen.port, Answer(seen.query, seen.id, kTrueAddress));
      }
    }
  }

 private:
  void Record(testing::FakeUdpBackend& udp, uint16_t port, absl::Span<const uint8_t> query) {
    Seen seen;
    seen.query.assign(query.begin(), query.end());
    const size_t end = QuestionEnd(seen.query);
    if (end == 0) return;
    seen.qname_wire.assign(seen.query.begin() + 12, seen.query.begin() + end - 4);
    seen.port = port;
    seen.id = static_cast<uint16_t>(seen.query[0] << 8 | seen.query[1]);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      seen_.push_back(seen);
    }
    if (seen.qname_wire != testing::WireName("victim.example.")) {
      udp.SendFrom(seen.port, Answer(seen.query, seen.id, kTrueAddress));
    }
  }

  std::mutex mutex_;
  std::vector<Seen> seen_;
  testing::FakeUdpBackend udp_;  // last: its thread calls Record until it is destroyed
};

// The one A record's address of a TCP answer from the frontend, or "" (with the rcode).
std::string AnsweredAddress(int port, const std::vector<uint8_t>& query) {
  auto answers = testing::ExchangeTcp(port, {query}, absl::Seconds(10));
  if (!answers.ok() || answers->size() != 1) return "no answer";
  auto decoded = DecodeResponse(answers->front());
  if (!decoded.ok()) return "undecodable";
  if (decoded->answer.size() != 1) return absl::StrCat("rcode ", decoded->rcode);
  return decoded->answer.front();
}

TEST(FrontendForgery, EveryIdForgedToTheLearnedPortNeverReachesClientOrCache) {
  RecordingBackend backend;
  ASSERT_GT(backend.port(), 0);
  auto frontend = testing::StartFrontend(
      {testing::LoopbackBackend(backend.port())},
      {"--dns-backend-timeout-ms", "5000", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const int port = (*frontend)->port();

  // The attacker's own query: what it learns is that query's source port and ID.
  ASSERT_NE(AnsweredAddress(port, MakeQuery("www.attacker.example", "A", {.id = 1})), "no answer");
  const std::vector<RecordingBackend::Seen> recon = backend.seen();
  ASSERT_EQ(recon.size(), 1u);
  const uint16_t learned_port = recon[0].port;

  // The victim query waits at the backend; the attacker sprays every ID at the learned port.
  const std::vector<uint8_t> victim = MakeQuery("victim.example", "A", {.id = 0x5151});
  auto pending = std::async(std::launch::async, [&] { return AnsweredAddress(port, victim); });
  ASSERT_TRUE(
      onepass::testing::WaitFor([&] { return backend.seen().size() == 2; }, absl::Seconds(5)));
  const RecordingBackend::Seen waiting = backend.seen()[1];
  const absl::Time start = absl::Now();
  int sent = 0;
  for (uint32_t id = 0; id < 65536; ++id) {
    sent += backend.SendFromBackend(
        learned_port, Answer(waiting.query, static_cast<uint16_t>(id), kForgedAddress));
  }
  const absl::Duration spraying = absl::Now() - start;
  std::printf("forged %d replies in %s (%.0f/s) to port %u; the query left from port %u\n", sent,
              absl::FormatDuration(spraying).c_str(), sent / absl::ToDoubleSeconds(spraying),
              learned_port, waiting.port);
  EXPECT_NE(waiting.port, learned_port) << "the victim query left from the port the attacker saw";

  backend.ReleaseVictim();
  const std::string first = pending.get();
  EXPECT_NE(first.find("192.0.2.1"), std::string::npos) << "not the true answer: " << first;
  EXPECT_EQ(first.find("6.6.6.6"), std::string::npos) << "the client got the forged answer";
  // The cache holds the true answer (a hit now: the backend saw no third query).
  const std::string cached = AnsweredAddress(port, MakeQuery("victim.example", "A", {.id = 7}));
  EXPECT_EQ(cached.rfind("victim.example.", 0), 0u) << cached;
  EXPECT_NE(cached.find("192.0.2.1"), std::string::npos) << cached;
  EXPECT_EQ(cached.find("6.6.6.6"), std::string::npos) << cached;
  EXPECT_EQ(backend.seen().size(), 2u) << "the second victim query was not a cache hit";
}

TEST(FrontendForgery, QueriesLeaveFromFreshPortsWithUnpredictableIds) {
  RecordingBackend backend;
  ASSERT_GT(backend.port(), 0);
  auto frontend = testing::StartFrontend({testing::LoopbackBackend(backend.port())},
                                         {"--dns-cache-entries", "0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  constexpr int kQueries = 64;
  for (int i = 0; i < kQueries; ++i) {
    // One at a time: the worst case for a reused ID or port.
    ASSERT_NE(AnsweredAddress((*frontend)->port(),
                              MakeQuery(absl::StrCat("q", i, ".attacker.example"), "A")),
              "no answer");
  }
  std::set<uint16_t> ports, ids;
  for (const RecordingBackend::Seen& seen : backend.seen()) {
    ports.insert(seen.port);
    ids.insert(seen.id);
  }
  ASSERT_EQ(backend.seen().size(), static_cast<size_t>(kQueries));
  // Random ports from ~28k and IDs from 65536: a repeat among 64 is rare (p < 0.08 for ports),
  // so allow a few; one fixed port or one reused ID is 1.
  EXPECT_GE(ports.size(), static_cast<size_t>(kQueries - 3));
  EXPECT_GE(ids.size(), static_cast<size_t>(kQueries - 2));
}

}  // namespace
}  // namespace onepass::dns
