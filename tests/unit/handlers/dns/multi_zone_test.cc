// Several zones in one snapshot, and answers near the 64 KiB message limit.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "handlers/dns/default_zone.h"
#include "handlers/dns/dns_responder.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/zone_loader.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::DecodedResponse;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakeQuery;

// The child of the default zone's delegation, served too, and an unrelated zone that the
// default zone's ext CNAME (www.example.net) points into.
constexpr char kChildZone[] = R"(
$ORIGIN sub.example.com.
$TTL 600
@    IN SOA ns.sub.example.com. hm.sub.example.com. 7 3600 600 86400 60
@    IN NS  ns.sub.example.com.
@    IN DS  1 1 1 00
ns   IN A   192.0.2.201
host IN A   192.0.2.202
)";
constexpr char kNetZone[] = R"(
$ORIGIN example.net.
@    IN SOA ns hm 1 3600 600 86400 120
@    IN NS  ns
ns   IN A   198.51.100.1
www  IN A   198.51.100.80
)";

class MultiZoneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto snapshot = BuildSnapshot(
        {{"default", std::string(DefaultZoneText())}, {"child", kChildZone}, {"net", kNetZone}});
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    responder_ = std::make_unique<DnsResponder>(*snapshot, ResponderConfig{}, nullptr);
  }
  DecodedResponse Ask(const std::string& name, const std::string& type) {
    std::vector<uint8_t> out(65535);
    const Response r = responder_->Respond(MakeQuery(name, type), absl::MakeSpan(out), {});
    auto decoded = testing::DecodeResponse(out.data(), r.size);
    EXPECT_TRUE(decoded.ok()) << decoded.status();
    return decoded.ok() ? *decoded : DecodedResponse{};
  }
  std::unique_ptr<DnsResponder> responder_;
};

TEST_F(MultiZoneTest, ChildZoneAnswersBelowTheCut) {
  const DecodedResponse r = Ask("host.sub.example.com", "A");
  EXPECT_TRUE(r.aa);
  EXPECT_THAT(r.answer, ElementsAre("host.sub.example.com. 600 in a 192.0.2.202"));
  EXPECT_THAT(r.authority, ElementsAre("sub.example.com. 600 in ns ns.sub.example.com."));
}

TEST_F(MultiZoneTest, DsAtChildApexComesFromParent) {
  // RFC 4035 §3.1.4.1: the parent's DS (TTL 3600), not the child's copy.
  const DecodedResponse r = Ask("sub.example.com", "DS");
  EXPECT_TRUE(r.aa);
  ASSERT_EQ(r.answer.size(), 1u);
  EXPECT_THAT(r.answer[0], ::testing::StartsWith("sub.example.com. 3600 in ds 12345 "));
  // Other types at the child apex come from the child.
  EXPECT_THAT(Ask("sub.example.com", "SOA").answer[0], ::testing::HasSubstr("600 in soa"));
}

TEST_F(MultiZoneTest, CnameFollowedIntoAnotherZone) {
  const DecodedResponse r = Ask("ext.example.com", "A");
  EXPECT_TRUE(r.aa);
  EXPECT_THAT(r.answer, ElementsAre("ext.example.com. 3600 in cname www.example.net.",
                                    "www.example.net. 3600 in a 198.51.100.80"));
  // The final zone's apex NS goes in authority, as NSD does.
  EXPECT_THAT(r.authority, ElementsAre("example.net. 3600 in ns ns.example.net."));
}

TEST_F(MultiZoneTest, ParentOnlyZoneStillRefusesOthers) {
  EXPECT_EQ(Ask("example.org", "A").rcode, kRcodeRefused);
}

std::string BigZone(int txt_records, int text_bytes) {
  std::string zone = "$ORIGIN big.test.\n@ 60 IN SOA ns hm 1 2 3 4 5\n@ 60 IN NS ns\n";
  for (int i = 0; i < txt_records; ++i) {
    absl::StrAppend(&zone, "t 60 IN TXT \"", i, std::string(text_bytes, 'x'), "\"\n");
  }
  return zone;
}

TEST(LargeAnswerTest, UpTo64KiBWithoutTruncation) {
  // ~250 records of ~230 bytes: about 60 KB, more than any UDP answer, all over TCP.
  auto snapshot = BuildSnapshot({{"big", BigZone(250, 220)}});
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  DnsResponder responder(*snapshot, ResponderConfig{}, nullptr);
  std::vector<uint8_t> out(65535);
  const Response r = responder.Respond(MakeQuery("t.big.test", "TXT"), absl::MakeSpan(out), {});
  EXPECT_GT(r.size, 55000u);
  auto decoded = testing::DecodeResponse(out.data(), r.size);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_FALSE(decoded->tc);
  EXPECT_EQ(decoded->answer.size(), 250u);
}

// RFC 8467 §4.1 within RFC 1035 §4.2.2's 65535 bytes: an answer whose next multiple of 468
// (65988) is past the limit is padded up to the limit, every record kept; one without room for
// the option's header is not padded at all rather than truncated.
TEST(LargeAnswerTest, PaddedUpToTheTcpLimitNeverTruncated) {
  const QueryTransport tls = {.encrypted = true};
  const auto edns = MakeQuery("t.big.test", "TXT", {.edns = true});
  const auto padded_query = MakeQuery("t.big.test", "TXT", {.edns = true, .padding = 0});
  std::vector<uint8_t> out(70000);  // more than a message may take: the limit is the writer's
  auto zone = [](int extra_text) {
    std::string text = BigZone(277, 220);
    if (extra_text >= 0)
      absl::StrAppend(&text, "t 60 IN TXT \"", std::string(extra_text, 'y'), "\"\n");
    return text;
  };
  auto unpadded_size = [&](int extra_text) -> size_t {
    auto snapshot = BuildSnapshot({{"big", zone(extra_text)}});
    if (!snapshot.ok()) return 0;
    DnsResponder responder(*snapshot, ResponderConfig{}, nullptr);
    return responder.Respond(edns, absl::MakeSpan(out), tls).size;
  };
  // One more record of k text bytes adds 13 + k (a pointer, the fixed fields, the length).
  const size_t base = unpadded_size(-1);
  constexpr size_t kTarget = 65525;  // the next block, 65988, is past the limit
  ASSERT_GT(kTarget, base + 13);
  ASSERT_LE(kTarget - base - 13, 255u);
  const int extra = static_cast<int>(kTarget - base - 13);
  ASSERT_EQ(unpadded_size(extra), kTarget);

  auto snapshot = BuildSnapshot({{"big", zone(extra)}});
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  DnsResponder responder(*snapshot, ResponderConfig{}, nullptr);
  const Response padded = responder.Respond(padded_query, absl::MakeSpan(out), tls);
  EXPECT_TRUE(padded.padded);
  EXPECT_EQ(padded.size, kMaxMessageBytes);
  auto decoded = testing::DecodeResponse(out.data(), padded.size);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_FALSE(decoded->tc);
  EXPECT_EQ(decoded->answer.size(), 278u);
  // Three bytes short of room for the option's header: no padding, the same answer.
  std::vector<uint8_t> tight(kTarget + 3);
  const Response unpadded = responder.Respond(padded_query, absl::MakeSpan(tight), tls);
  EXPECT_FALSE(unpadded.padded);
  EXPECT_EQ(unpadded.size, kTarget);
  decoded = testing::DecodeResponse(tight.data(), unpadded.size);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_FALSE(decoded->tc);
  EXPECT_EQ(decoded->answer.size(), 278u);
}

TEST(LargeAnswerTest, OverTheLimitSetsTc) {
  auto snapshot = BuildSnapshot({{"big", BigZone(400, 220)}});
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  DnsResponder responder(*snapshot, ResponderConfig{}, nullptr);
  std::vector<uint8_t> out(65535);
  const Response r =
      responder.Respond(MakeQuery("t.big.test", "TXT", {.edns = true}), absl::MakeSpan(out), {});
  auto decoded = testing::DecodeResponse(out.data(), r.size);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  // RFC 2181 §9: whole RRsets only; the OPT still fits (its room was kept).
  EXPECT_TRUE(decoded->tc);
  EXPECT_THAT(decoded->answer, IsEmpty());
  EXPECT_TRUE(decoded->has_opt);
  // A smaller output buffer also truncates cleanly instead of overflowing.
  std::vector<uint8_t> small(100);
  const Response s = responder.Respond(MakeQuery("t.big.test", "TXT"), absl::MakeSpan(small), {});
  ASSERT_EQ(s.kind, Response::Kind::kAnswer);
  auto d = testing::DecodeResponse(small.data(), s.size);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->tc);
}

}  // namespace
}  // namespace onepass::dns
