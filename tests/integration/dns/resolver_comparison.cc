#include "tests/integration/dns/resolver_comparison.h"

#include <algorithm>
#include <cstdint>
#include <latch>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns::testing {
namespace {

// A section's records as text without their TTLs, and the TTLs, in the order of the text.
struct Records {
  std::vector<std::string> texts;
  std::vector<uint32_t> ttls;
};

// `records` (DecodedResponse's: "owner ttl class type rdata"), those of `type_filter`
// only when it is not empty.
Records WithoutTtls(const std::vector<std::string>& records, const std::string& type_filter) {
  std::vector<std::pair<std::string, uint32_t>> split;
  for (const std::string& record : records) {
    std::vector<std::string> fields = absl::StrSplit(record, absl::MaxSplits(' ', 4));
    uint32_t ttl = 0;
    if (fields.size() < 5 || !absl::SimpleAtoi(fields[1], &ttl)) {
      split.emplace_back(record, 0);  // compared as it is
      continue;
    }
    if (!type_filter.empty() && !absl::EqualsIgnoreCase(fields[3], type_filter)) continue;
    split.emplace_back(absl::StrCat(fields[0], " ", fields[2], " ", fields[3], " ", fields[4]),
                       ttl);
  }
  std::sort(split.begin(), split.end());
  Records out;
  for (auto& [text, ttl] : split) {
    out.texts.push_back(std::move(text));
    out.ttls.push_back(ttl);
  }
  return out;
}

// The same records, each TTL within `max_age` (rounded up) of onepassd's: lower from a
// resolver's cache, or by a second higher where onepassd's own answer came from its cache
// (frontend mode) and the two caches round their ages apart.
std::string RecordDifference(const Records& through, const Records& direct,
                             absl::Duration max_age) {
  if (through.texts != direct.texts) {
    return absl::StrCat("records: through the resolver {", absl::StrJoin(through.texts, "; "),
                        "}, from onepassd {", absl::StrJoin(direct.texts, "; "), "}");
  }
  const int64_t age = absl::ToInt64Seconds(absl::Ceil(max_age, absl::Seconds(1)));
  for (size_t i = 0; i < through.ttls.size(); ++i) {
    const int64_t delta = static_cast<int64_t>(direct.ttls[i]) - through.ttls[i];
    if (delta > age || delta < -1) {
      return absl::StrCat(through.texts[i], ": TTL ", through.ttls[i], " through the resolver, ",
                          direct.ttls[i], " from onepassd, ", age, " s since the first query");
    }
  }
  return "";
}

}  // namespace

int ExpectResolverAgrees(int resolver_port, int onepassd_port,
                         const std::vector<CorpusQuery>& corpus) {
  const absl::Time start = absl::Now();
  int compared = 0;
  for (const CorpusQuery& q : corpus) {
    SCOPED_TRACE(q.line);
    absl::StatusOr<DecodedResponse> direct = Ask(onepassd_port, q);
    if (!direct.ok()) {
      ADD_FAILURE() << "onepassd over TCP: " << direct.status();
      continue;
    }
    absl::StatusOr<std::vector<uint8_t>> reply =
        ExchangeUdp(resolver_port, MakeQuery(q.name, q.type, q.options));
    if (!reply.ok()) {
      ADD_FAILURE() << "the resolver: " << reply.status();
      continue;
    }
    absl::StatusOr<DecodedResponse> through = DecodeResponse(*reply);
    if (!through.ok()) {
      ADD_FAILURE() << "the resolver's answer: " << through.status();
      continue;
    }
    ++compared;
    EXPECT_EQ(through->rcode, direct->rcode) << "through the resolver:\n"
                                             << through->ToString() << "from onepassd:\n"
                                             << direct->ToString();
    const absl::Duration age = absl::Now() - start + absl::Seconds(1);
    EXPECT_EQ(
        RecordDifference(WithoutTtls(through->answer, ""), WithoutTtls(direct->answer, ""), age),
        "")
        << "answer section";
    EXPECT_EQ(RecordDifference(WithoutTtls(through->authority, "SOA"),
                               WithoutTtls(direct->authority, "SOA"), age),
              "")
        << "authority SOA";
  }
  return compared;
}

int AskBurst(int port, int count) {
  std::vector<std::string> failures(count);
  std::latch go(count);
  std::vector<std::thread> clients;
  for (int i = 0; i < count; ++i) {
    clients.emplace_back([&, i] {
      const std::string name = absl::StrCat("burst", i, ".wild.example.com");
      go.arrive_and_wait();
      auto reply = ExchangeUdp(port, MakeQuery(name, "A"));
      auto decoded =
          reply.ok() ? DecodeResponse(*reply) : absl::StatusOr<DecodedResponse>(reply.status());
      if (!decoded.ok()) {
        failures[i] = absl::StrCat(name, ": ", decoded.status().ToString());
      } else if (decoded->answer.size() != 1 ||
                 !absl::EndsWith(decoded->answer[0], " in a 192.0.2.100")) {
        failures[i] = absl::StrCat(name, ":\n", decoded->ToString());
      }
    });
  }
  for (std::thread& client : clients) client.join();
  int right = 0;
  for (const std::string& failure : failures) {
    if (failure.empty()) {
      ++right;
    } else {
      ADD_FAILURE() << failure;
    }
  }
  return right;
}

}  // namespace onepass::dns::testing
