// The frontend's open-resolver probe: the query it asks each backend, and the judge of the
// reply (a warning only for an answer to that very query with RA=1).
#include "handlers/dns/open_resolver_probe.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {
namespace {

constexpr uint16_t kId = 0x4a3b;
constexpr char kBackend[] = "192.0.2.53:53";

// The reply a server gives to `query`: its bytes with QR and `flags` set and RCODE `rcode`
// (no records: the judge reads only the header and the question).
std::vector<uint8_t> ReplyTo(const std::vector<uint8_t>& query, uint16_t flags,
                             uint16_t rcode = kRcodeNoError) {
  std::vector<uint8_t> reply = query;
  WriteU16(reply.data() + 2, ReadU16(query.data() + 2) | kFlagQr | flags | rcode);
  return reply;
}

std::optional<std::string> Judge(const std::vector<uint8_t>& query,
                                 const std::vector<uint8_t>& reply) {
  return JudgeOpenResolverReply(query, reply, kBackend);
}

TEST(OpenResolverProbe, QueryIsRootNsWithRecursionDesired) {
  const std::vector<uint8_t> query = OpenResolverQuery(kId);
  const std::vector<uint8_t> expected = {0x4a, 0x3b, 0x01, 0x00, 0, 1, 0, 0, 0,
                                         0,    0,    0,    0,    0, 2, 0, 1};
  EXPECT_EQ(query, expected);
}

TEST(OpenResolverProbe, RecursionAvailableWarnsNamingTheBackendAndTheFix) {
  const std::vector<uint8_t> query = OpenResolverQuery(kId);
  const std::optional<std::string> warning = Judge(query, ReplyTo(query, kFlagRa));
  ASSERT_TRUE(warning.has_value());
  EXPECT_TRUE(absl::StrContains(*warning, kBackend)) << *warning;
  EXPECT_TRUE(absl::StrContains(*warning, "open resolver")) << *warning;
  EXPECT_TRUE(absl::StrContains(*warning, "give --allow-from")) << *warning;
  // A resolver that cannot reach the root right now still recurses for whoever asks.
  EXPECT_TRUE(Judge(query, ReplyTo(query, kFlagRa, kRcodeServFail)).has_value());
}

TEST(OpenResolverProbe, NoRecursionAvailableIsNoWarning) {
  const std::vector<uint8_t> query = OpenResolverQuery(kId);
  EXPECT_EQ(Judge(query, ReplyTo(query, 0)), std::nullopt);  // an authoritative server
  EXPECT_EQ(Judge(query, ReplyTo(query, kFlagAa)), std::nullopt);
  // Refused: it does not recurse for us, whatever it says it could.
  EXPECT_EQ(Judge(query, ReplyTo(query, kFlagRa, kRcodeRefused)), std::nullopt);
}

TEST(OpenResolverProbe, ReplyToAnotherQueryIsNoWarning) {
  const std::vector<uint8_t> query = OpenResolverQuery(kId);
  std::vector<uint8_t> other_id = ReplyTo(query, kFlagRa);
  WriteU16(other_id.data(), kId + 1);
  EXPECT_EQ(Judge(query, other_id), std::nullopt);
  std::vector<uint8_t> other_type = ReplyTo(query, kFlagRa);
  other_type[kHeaderBytes + 2] = kTypeSoa;
  EXPECT_EQ(Judge(query, other_type), std::nullopt);
  std::vector<uint8_t> no_question = ReplyTo(query, kFlagRa);
  WriteU16(no_question.data() + 4, 0);
  no_question.resize(kHeaderBytes);
  EXPECT_EQ(Judge(query, no_question), std::nullopt);
  std::vector<uint8_t> not_a_response = query;  // our query, looped back: QR clear
  WriteU16(not_a_response.data() + 2, kFlagRd | kFlagRa);
  EXPECT_EQ(Judge(query, not_a_response), std::nullopt);
}

TEST(OpenResolverProbe, GarbageIsNoWarning) {
  const std::vector<uint8_t> query = OpenResolverQuery(kId);
  EXPECT_EQ(Judge(query, {}), std::nullopt);
  EXPECT_EQ(Judge(query, {0x4a, 0x3b, 0x81, 0x80}), std::nullopt);  // a header cut short
  std::vector<uint8_t> cut = ReplyTo(query, kFlagRa);
  cut.pop_back();  // the question cut short
  EXPECT_EQ(Judge(query, cut), std::nullopt);
  EXPECT_EQ(Judge(query, std::vector<uint8_t>(512, 0xff)), std::nullopt);
}

TEST(OpenResolverProbe, OneProbePerDistinctBackendWithItsOwnJudge) {
  absl::StatusOr<SocketAddress> a = ParseSocketAddress("127.0.0.1:5301");
  absl::StatusOr<SocketAddress> b = ParseSocketAddress("[::1]:5302");
  ASSERT_TRUE(a.ok() && b.ok());
  // A vacant slot (--dns-backends-file) and a backend named twice.
  const std::vector<StartupProbe> probes = OpenResolverProbes({*a, SocketAddress(), *b, *a});
  ASSERT_EQ(probes.size(), 2u);
  EXPECT_TRUE(SameAddress(probes[0].upstream, *a));
  EXPECT_TRUE(SameAddress(probes[1].upstream, *b));
  for (const StartupProbe& probe : probes) {
    ASSERT_EQ(probe.request.size(), kHeaderBytes + 5);
    const std::optional<std::string> warning = probe.judge(ReplyTo(probe.request, kFlagRa));
    ASSERT_TRUE(warning.has_value());
    EXPECT_TRUE(absl::StrContains(*warning, probe.upstream.ToString())) << *warning;
    EXPECT_EQ(probe.judge(ReplyTo(probe.request, 0)), std::nullopt);
  }
}

}  // namespace
}  // namespace onepass::dns
