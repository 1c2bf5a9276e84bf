// Every kind of answer of the responder on the embedded default zone. Expected sections were
// checked against NSD 4.6 serving the same zone (the differential test does that live).
#include "handlers/dns/dns_responder.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "handlers/dns/default_zone.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/precompiled_answers.h"
#include "handlers/dns/zone_loader.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::DecodedResponse;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakeQuery;
using testing::QueryOptions;

const std::vector<std::string> kApexNs = {"example.com. 3600 in ns ns1.example.com.",
                                          "example.com. 3600 in ns ns2.example.com."};
const std::vector<std::string> kApexNsGlue = {
    "ns1.example.com. 3600 in a 192.0.2.53", "ns1.example.com. 3600 in aaaa 2001:db8::53",
    "ns2.example.com. 3600 in a 198.51.100.53", "ns2.example.com. 3600 in aaaa 2001:db8:1::53"};
const std::string kNegativeSoa =
    "example.com. 300 in soa ns1.example.com. hostmaster.example.com. 2026112901 7200 3600 "
    "1209600 300";

// Run twice: answers rendered per query, and answers precompiled at load time.
class ResponderTest : public ::testing::TestWithParam<bool> {
 protected:
  ResponderTest() : responder_(testing::DefaultSnapshot(), ResponderConfig{}, Precompiled()) {}

  static std::shared_ptr<const PrecompiledAnswers> Precompiled() {
    if (!GetParam()) return nullptr;
    return PrecompiledAnswers::Build(testing::DefaultSnapshot(), ResponderConfig{}, 1 << 20);
  }

  DecodedResponse AskRaw(const std::vector<uint8_t>& query, const QueryTransport& transport = {},
                         size_t room = 65535) {
    std::vector<uint8_t> out(room);
    const Response response = responder_.Respond(query, absl::MakeSpan(out), transport);
    EXPECT_EQ(response.kind, Response::Kind::kAnswer);
    auto decoded = testing::DecodeResponse(out.data(), response.size);
    EXPECT_TRUE(decoded.ok()) << decoded.status();
    last_keepalive_ = response.keepalive;
    last_padded_ = response.padded;
    last_bytes_.assign(out.begin(), out.begin() + response.size);
    return decoded.ok() ? *decoded : DecodedResponse{};
  }
  DecodedResponse Ask(const std::string& name, const std::string& type,
                      const QueryOptions& options = {}) {
    return AskRaw(MakeQuery(name, type, options));
  }

  DnsResponder responder_;
  bool last_keepalive_ = false;
  bool last_padded_ = false;
  std::vector<uint8_t> last_bytes_;  // the last response, whole
};

TEST_P(ResponderTest, ExactAnswerWithApexNsAndGlue) {
  const DecodedResponse r = Ask("www.example.com", "A");
  EXPECT_EQ(r.rcode, kRcodeNoError);
  EXPECT_TRUE(r.qr && r.aa && r.rd);
  EXPECT_FALSE(r.tc || r.ra);
  EXPECT_EQ(r.id, 0x1234);
  EXPECT_THAT(r.question, ElementsAre("www.example.com. in a"));
  EXPECT_THAT(r.answer, ElementsAre("www.example.com. 3600 in a 192.0.2.80"));
  EXPECT_EQ(r.authority, kApexNs);
  EXPECT_EQ(r.additional, kApexNsGlue);
  EXPECT_FALSE(r.has_opt);
}

TEST_P(ResponderTest, KeepsQuestionCaseAndMatchesCaseInsensitively) {
  std::vector<uint8_t> query = MakeQuery("WwW.ExAmPlE.cOm", "A");
  std::vector<uint8_t> out(65535);
  const Response response = responder_.Respond(query, absl::MakeSpan(out), {});
  ASSERT_EQ(response.kind, Response::Kind::kAnswer);
  // The question is copied byte for byte (RFC 4343 §4.1).
  const std::string question(reinterpret_cast<const char*>(out.data()) + 12, 17);
  EXPECT_EQ(question, std::string("\3WwW\7ExAmPlE\3cOm\0", 17));
  auto r = testing::DecodeResponse(out.data(), response.size);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->answer, ElementsAre("www.example.com. 3600 in a 192.0.2.80"));
}

TEST_P(ResponderTest, CompressesNames) {
  std::vector<uint8_t> out(65535);
  const Response response =
      responder_.Respond(MakeQuery("www.example.com", "A"), absl::MakeSpan(out), {});
  // NSD's answer to the same query is 173 bytes; uncompressed it would be far larger.
  EXPECT_EQ(response.size, 173u);
  // The answer's owner is a pointer to the question name at offset 12.
  const size_t answer_start = 12 + 17 + 4;
  EXPECT_EQ(out[answer_start], 0xc0);
  EXPECT_EQ(out[answer_start + 1], 12);
}

TEST_P(ResponderTest, NxDomainHasNegativeSoa) {
  const DecodedResponse r = Ask("nx.example.com", "A");
  EXPECT_EQ(r.rcode, kRcodeNxDomain);
  EXPECT_TRUE(r.aa);
  EXPECT_THAT(r.answer, IsEmpty());
  EXPECT_THAT(r.authority, ElementsAre(kNegativeSoa));
  EXPECT_THAT(r.additional, IsEmpty());
}

TEST_P(ResponderTest, NoDataHasNegativeSoa) {
  const DecodedResponse r = Ask("www.example.com", "MX");
  EXPECT_EQ(r.rcode, kRcodeNoError);
  EXPECT_TRUE(r.aa);
  EXPECT_THAT(r.answer, IsEmpty());
  EXPECT_THAT(r.authority, ElementsAre(kNegativeSoa));
}

TEST_P(ResponderTest, EmptyNonTerminalIsNoData) {
  const DecodedResponse r = Ask("b.c.example.com", "A");
  EXPECT_EQ(r.rcode, kRcodeNoError);
  EXPECT_THAT(r.authority, ElementsAre(kNegativeSoa));
}

TEST_P(ResponderTest, CnameChainFollowedInZone) {
  const DecodedResponse r = Ask("alias.example.com", "A");
  EXPECT_EQ(r.rcode, kRcodeNoError);
  EXPECT_TRUE(r.aa);
  EXPECT_THAT(r.answer, ElementsAre("alias.example.com. 3600 in cname ftp.example.com.",
                                    "ftp.example.com. 3600 in cname www.example.com.",
                                    "www.example.com. 3600 in a 192.0.2.80"));
  EXPECT_EQ(r.authority, kApexNs);
}

TEST_P(ResponderTest, CnameLoopStops) {
  const DecodedResponse r = Ask("loop1.example.com", "A");
  EXPECT_EQ(r.rcode, kRcodeNoError);
  EXPECT_THAT(r.answer, ElementsAre("loop1.example.com. 3600 in cname loop2.example.com.",
                                    "loop2.example.com. 3600 in cname loop1.example.com."));
  EXPECT_THAT(r.authority, IsEmpty());
}

TEST_P(ResponderTest, CnameOutOfZoneAnswersCnameOnly) {
  const DecodedResponse r = Ask("ext.example.com", "A");
  EXPECT_EQ(r.rcode, kRcodeNoError);
  EXPECT_TRUE(r.aa);
  EXPECT_THAT(r.answer, ElementsAre("ext.example.com. 3600 in cname www.example.net."));
  EXPECT_THAT(r.authority, IsEmpty());
}

TEST_P(ResponderTest, CnameToMissingNameIsNxDomain) {
  const DecodedResponse r = Ask("tonx.example.com", "A");
  EXPECT_EQ(r.rcode, kRcodeNxDomain);
  EXPECT_THAT(r.answer, ElementsAre("tonx.example.com. 3600 in cname nothere.example.com."));
  EXPECT_THAT(r.authority, ElementsAre(kNegativeSoa));
}

TEST_P(ResponderTest, CnameIntoDelegationIsAuthoritativeReferral) {
  const DecodedResponse r = Ask("tosub.example.com", "A");
  EXPECT_TRUE(r.aa);
  EXPECT_THAT(r.answer, ElementsAre("tosub.example.com. 3600 in cname host.sub.example.com."));
  EXPECT_THAT(r.authority, ElementsAre("sub.example.com. 3600 in ns ns.example.net.",
                                       "sub.example.com. 3600 in ns ns.sub.example.com."));
}

TEST_P(ResponderTest, QtypeCnameAnswersTheCname) {
  const DecodedResponse r = Ask("ftp.example.com", "CNAME");
  EXPECT_THAT(r.answer, ElementsAre("ftp.example.com. 3600 in cname www.example.com."));
  EXPECT_EQ(r.authority, kApexNs);
}

TEST_P(ResponderTest, WildcardSynthesisesOwner) {
  const DecodedResponse r = Ask("anything.wild.example.com", "A");
  EXPECT_EQ(r.rcode, kRcodeNoError);
  EXPECT_TRUE(r.aa);
  EXPECT_THAT(r.answer, ElementsAre("anything.wild.example.com. 3600 in a 192.0.2.100"));
}

TEST_P(ResponderTest, WildcardDeeperNameAlsoMatches) {
  const DecodedResponse r = Ask("a.b.wild.example.com", "TXT");
  EXPECT_THAT(r.answer, ElementsAre("a.b.wild.example.com. 3600 in txt \"synthesised\""));
}

TEST_P(ResponderTest, WildcardNoData) {
  const DecodedResponse r = Ask("x.wild.example.com", "AAAA");
  EXPECT_EQ(r.rcode, kRcodeNoError);
  EXPECT_THAT(r.answer, IsEmpty());
  EXPECT_THAT(r.authority, ElementsAre(kNegativeSoa));
}

TEST_P(ResponderTest, WildcardMxGetsAdditional) {
  const DecodedResponse r = Ask("x.wild.example.com", "MX");
  EXPECT_THAT(r.answer, ElementsAre("x.wild.example.com. 3600 in mx 10 mail.example.com."));
  EXPECT_THAT(r.additional, ::testing::Contains("mail.example.com. 3600 in a 192.0.2.25"));
}

TEST_P(ResponderTest, EmptyNonTerminalBlocksWildcard) {
  // RFC 4592 §2.2.2: ent.wild exists (it has a child), so *.wild does not apply below it.
  EXPECT_EQ(Ask("x.ent.wild.example.com", "A").rcode, kRcodeNxDomain);
  const DecodedResponse r = Ask("ent.wild.example.com", "A");
  EXPECT_EQ(r.rcode, kRcodeNoError);
  EXPECT_THAT(r.answer, IsEmpty());
}

TEST_P(ResponderTest, WildcardCname) {
  const DecodedResponse r = Ask("foo.cwild.example.com", "A");
  EXPECT_THAT(r.answer, ElementsAre("foo.cwild.example.com. 3600 in cname www.example.com.",
                                    "www.example.com. 3600 in a 192.0.2.80"));
}

TEST_P(ResponderTest, ReferralAtAndBelowCut) {
  for (const char* name : {"sub.example.com", "deep.x.sub.example.com", "ns.sub.example.com"}) {
    SCOPED_TRACE(name);
    const DecodedResponse r = Ask(name, "A");
    EXPECT_EQ(r.rcode, kRcodeNoError);
    EXPECT_FALSE(r.aa);
    EXPECT_THAT(r.answer, IsEmpty());
    EXPECT_THAT(r.authority, ElementsAre("sub.example.com. 3600 in ns ns.example.net.",
                                         "sub.example.com. 3600 in ns ns.sub.example.com."));
    EXPECT_THAT(r.additional, ElementsAre("ns.sub.example.com. 3600 in a 192.0.2.201",
                                          "ns.sub.example.com. 3600 in aaaa 2001:db8::201"));
  }
}

TEST_P(ResponderTest, DsAtCutIsAuthoritativeFromParent) {
  const DecodedResponse r = Ask("sub.example.com", "DS");
  EXPECT_TRUE(r.aa);
  ASSERT_EQ(r.answer.size(), 1u);
  EXPECT_THAT(r.answer[0], ::testing::StartsWith("sub.example.com. 3600 in ds 12345 13 2 "));
  EXPECT_THAT(r.authority, IsEmpty());
  // Below the cut a DS query is a referral.
  EXPECT_FALSE(Ask("x.sub.example.com", "DS").aa);
  // At our apex with no parent zone loaded: NODATA.
  const DecodedResponse apex = Ask("example.com", "DS");
  EXPECT_TRUE(apex.aa);
  EXPECT_THAT(apex.authority, ElementsAre(kNegativeSoa));
}

TEST_P(ResponderTest, RefusedOutsideZones) {
  const DecodedResponse r = Ask("example.org", "A");
  EXPECT_EQ(r.rcode, kRcodeRefused);
  EXPECT_FALSE(r.aa);
  EXPECT_THAT(r.question, ElementsAre("example.org. in a"));
  // With EDNS: RFC 8914 EDE 20 (Not Authoritative), as NSD.
  const DecodedResponse e = Ask("example.org", "A", {.edns = true});
  EXPECT_TRUE(e.has_opt);
  EXPECT_THAT(e.opt_options, ElementsAre("15:0014"));
}

TEST_P(ResponderTest, ApexNsQueryHasGlueButNoAuthority) {
  const DecodedResponse r = Ask("example.com", "NS");
  EXPECT_EQ(r.answer, kApexNs);
  EXPECT_THAT(r.authority, IsEmpty());
  EXPECT_EQ(r.additional, kApexNsGlue);
}

TEST_P(ResponderTest, AdditionalSkipsRecordsAlreadyInAnswer) {
  const DecodedResponse r = Ask("ns1.example.com", "A");
  EXPECT_THAT(r.answer, ElementsAre("ns1.example.com. 3600 in a 192.0.2.53"));
  EXPECT_THAT(r.additional, ElementsAre("ns1.example.com. 3600 in aaaa 2001:db8::53",
                                        "ns2.example.com. 3600 in a 198.51.100.53",
                                        "ns2.example.com. 3600 in aaaa 2001:db8:1::53"));
}

TEST_P(ResponderTest, MxAndSrvTargetsInAdditional) {
  const DecodedResponse mx = Ask("example.com", "MX");
  EXPECT_THAT(mx.additional, ::testing::Contains("mail.example.com. 3600 in a 192.0.2.25"));
  EXPECT_EQ(mx.additional.size(), 5u);  // mail A + 4 NS glue; mx.example.net is not ours
  const DecodedResponse srv = Ask("_sip._tcp.example.com", "SRV");
  EXPECT_THAT(srv.additional, ::testing::Contains("www.example.com. 3600 in aaaa 2001:db8::80"));
  EXPECT_EQ(srv.additional.size(), 6u);
}

TEST_P(ResponderTest, AnyAnswersOneRRset) {
  // RFC 8482 §4.1, NSD's choice: first of A/AAAA/SOA/MX/PTR in zone order.
  const DecodedResponse apex = Ask("example.com", "ANY");
  ASSERT_EQ(apex.answer.size(), 1u);
  EXPECT_THAT(apex.answer[0], ::testing::HasSubstr(" in soa "));
  EXPECT_THAT(apex.authority, IsEmpty());
  const DecodedResponse www = Ask("www.example.com", "ANY");
  EXPECT_THAT(www.answer, ElementsAre("www.example.com. 3600 in a 192.0.2.80"));
}

TEST_P(ResponderTest, ClassAnyIsNotAuthoritative) {
  const DecodedResponse r = Ask("www.example.com", "A", {.qclass = kClassAny});
  EXPECT_FALSE(r.aa);
  EXPECT_THAT(r.answer, ElementsAre("www.example.com. 3600 in a 192.0.2.80"));
  EXPECT_THAT(r.authority, IsEmpty());
  EXPECT_THAT(Ask("nx.example.com", "A", {.qclass = kClassAny}).authority, IsEmpty());
}

TEST_P(ResponderTest, OtherClassesRefused) {
  const DecodedResponse ch = Ask("example.com", "A", {.qclass = kClassCh});
  EXPECT_EQ(ch.rcode, kRcodeRefused);
  EXPECT_EQ(ch.question.size(), 1u);
  const DecodedResponse hs = Ask("example.com", "A", {.qclass = 4});
  EXPECT_EQ(hs.rcode, kRcodeRefused);
  EXPECT_THAT(hs.question, IsEmpty());
}

TEST_P(ResponderTest, TransfersRefused) {
  EXPECT_EQ(Ask("example.com", "AXFR").rcode, kRcodeRefused);
  EXPECT_EQ(Ask("example.com", "IXFR").rcode, kRcodeRefused);
}

TEST_P(ResponderTest, EdnsOptEchoed) {
  const DecodedResponse r = Ask("www.example.com", "A", {.edns = true, .do_bit = true});
  ASSERT_TRUE(r.has_opt);
  EXPECT_EQ(r.opt_udp_size, 1232);
  EXPECT_TRUE(r.opt_do);
  EXPECT_EQ(r.opt_version, 0);
  EXPECT_THAT(r.opt_options, IsEmpty());
  EXPECT_EQ(Ask("www.example.com", "A", {.edns = true}).opt_do, false);
}

TEST_P(ResponderTest, EdnsBadVersion) {
  const DecodedResponse r = Ask("www.example.com", "A", {.edns = true, .edns_version = 1});
  EXPECT_EQ(r.rcode, kRcodeBadVers);
  EXPECT_TRUE(r.has_opt);
  EXPECT_EQ(r.opt_version, 0);
  EXPECT_THAT(r.answer, IsEmpty());
  EXPECT_EQ(r.question.size(), 1u);
}

TEST_P(ResponderTest, KeepaliveEchoedOnlyWhenServerKeepsConnections) {
  const auto query = MakeQuery("www.example.com", "A", {.edns = true, .keepalive = true});
  DecodedResponse r = AskRaw(query, {.keepalive_timeout = 100});
  EXPECT_TRUE(last_keepalive_);
  EXPECT_THAT(r.opt_options, ElementsAre("11:0064"));
  r = AskRaw(query, {});
  EXPECT_FALSE(last_keepalive_);
  EXPECT_THAT(r.opt_options, IsEmpty());
  // Without the option in the query, nothing is announced.
  AskRaw(MakeQuery("www.example.com", "A", {.edns = true}), {.keepalive_timeout = 100});
  EXPECT_FALSE(last_keepalive_);
}

// The Padding option of an answer, "" when there is none: it must be the OPT's last option.
std::string PaddingOption(const DecodedResponse& r) {
  for (size_t i = 0; i < r.opt_options.size(); ++i) {
    if (r.opt_options[i].rfind("12:", 0) == 0) {
      EXPECT_EQ(i, r.opt_options.size() - 1) << "padding is not the last option";
      return r.opt_options[i];
    }
  }
  return "";
}

// RFC 8467 §4.1 block-length padding, RFC 7830 §4: over an encrypted connection, the answer to
// a query with a Padding option is padded with zeros to a multiple of 468 bytes, on every path
// that writes our OPT (answers, NXDOMAIN, NODATA, referrals, DNSSEC, REFUSED, BADVERS excepted:
// its options are not EDNS(0)'s); nothing else changes. Never over plain TCP, never without the
// option in the query, no OPT without EDNS, and FORMERR keeps its header alone.
TEST_P(ResponderTest, PaddedToBlocksOfFourHundredSixtyEightOverTlsOnly) {
  const QueryTransport tls = {.encrypted = true};
  const QueryTransport tcp = {.encrypted = false};
  const testing::QueryOptions padded = {.edns = true, .padding = 0};
  struct Case {
    std::string name, qname, qtype;
    testing::QueryOptions options;
    QueryTransport transport;
    bool want_padding;
  };
  const std::vector<Case> cases = {
      {"answer", "www.example.com", "A", padded, tls, true},
      {"answer, plain TCP", "www.example.com", "A", padded, tcp, false},
      {"no padding option", "www.example.com", "A", {.edns = true}, tls, false},
      {"no EDNS", "www.example.com", "A", {}, tls, false},
      {"nxdomain", "nx.example.com", "A", padded, tls, true},
      {"nodata", "www.example.com", "MX", padded, tls, true},
      {"referral", "www.sub.example.com", "A", padded, tls, true},
      {"cname", "alias.example.com", "A", padded, tls, true},
      {"DO bit",
       "www.example.com",
       "AAAA",
       {.edns = true, .do_bit = true, .padding = 0},
       tls,
       true},
      {"query padded with 0xff",
       "www.example.com",
       "A",
       {.edns = true, .padding = 300, .padding_byte = 0xff},
       tls,
       true},
      {"keepalive too",
       "www.example.com",
       "A",
       {.edns = true, .keepalive = true, .padding = 17},
       {.keepalive_timeout = 100, .encrypted = true},
       true},
      {"refused class with EDE",
       "www.example.com",
       "A",
       {.qclass = 3, .edns = true, .padding = 0},
       tls,
       true},
      {"refused transfer", "example.com", "AXFR", padded, tls, true},
      {"badvers",
       "www.example.com",
       "A",
       {.edns = true, .edns_version = 1, .padding = 0},
       tls,
       false},
      {"out of zone", "www.example.org", "A", padded, tls, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const DecodedResponse plain = AskRaw(MakeQuery(c.qname, c.qtype,
                                                   [&] {
                                                     testing::QueryOptions o = c.options;
                                                     o.padding = -1;
                                                     return o;
                                                   }()),
                                         {.keepalive_timeout = c.transport.keepalive_timeout});
    const size_t plain_size = last_bytes_.size();
    const DecodedResponse r = AskRaw(MakeQuery(c.qname, c.qtype, c.options), c.transport);
    EXPECT_EQ(last_padded_, c.want_padding);
    const std::string padding = PaddingOption(r);
    if (!c.want_padding) {
      EXPECT_EQ(padding, "");
      EXPECT_EQ(last_bytes_.size(), plain_size);
      EXPECT_EQ(r.has_opt, c.options.edns);
      continue;
    }
    EXPECT_EQ(last_bytes_.size() % kResponsePaddingBlock, 0u) << last_bytes_.size();
    EXPECT_GT(last_bytes_.size(), plain_size);
    EXPECT_EQ(padding, "12:" + std::string(2 * (last_bytes_.size() - plain_size - 4), '0'));
    // Padding changes nothing else (RFC 7830 §3).
    EXPECT_EQ(r.rcode, plain.rcode);
    EXPECT_EQ(r.aa, plain.aa);
    EXPECT_EQ(r.tc, plain.tc);
    EXPECT_EQ(r.question, plain.question);
    EXPECT_EQ(r.answer, plain.answer);
    EXPECT_EQ(r.authority, plain.authority);
    EXPECT_EQ(r.additional, plain.additional);
    EXPECT_EQ(r.opt_do, plain.opt_do);
    std::vector<std::string> others = r.opt_options;
    others.pop_back();
    EXPECT_EQ(others, plain.opt_options);
  }

  // FORMERR (two questions): the header alone, as before: the OPT may be what is wrong.
  std::vector<uint8_t> formerr = MakeQuery("www.example.com", "A", padded);
  formerr[5] = 2;
  std::vector<uint8_t> out(512);
  const Response response = responder_.Respond(formerr, absl::MakeSpan(out), tls);
  EXPECT_EQ(response.rcode, kRcodeFormErr);
  EXPECT_EQ(response.size, kHeaderBytes);
  EXPECT_FALSE(response.padded);
}

// Padding never costs data: with less room than the next block needs, the answer is padded to
// the room there is; with no room for the option's header, it goes unpadded, whole and
// untruncated. The room `out` leaves and the 65535-byte TCP limit both bound it.
TEST_P(ResponderTest, PaddingShrinksToTheRoomAndNeverTruncates) {
  const auto query = MakeQuery("www.example.com", "A", {.edns = true, .padding = 0});
  const QueryTransport tls = {.encrypted = true};
  const DecodedResponse whole = AskRaw(MakeQuery("www.example.com", "A", {.edns = true}), tls);
  const size_t unpadded = last_bytes_.size();  // 173 + an OPT of 11
  ASSERT_EQ(unpadded, 184u);
  struct Case {
    size_t room;
    size_t size;
    bool padded;
  };
  for (const Case& c : std::vector<Case>{{65535, 468, true},
                                         {468, 468, true},
                                         {467, 467, true},
                                         {300, 300, true},
                                         {unpadded + 4, unpadded + 4, true},
                                         {unpadded + 3, unpadded, false},
                                         {unpadded, unpadded, false}}) {
    SCOPED_TRACE(c.room);
    const DecodedResponse r = AskRaw(query, tls, c.room);
    EXPECT_EQ(last_bytes_.size(), c.size);
    EXPECT_EQ(last_padded_, c.padded);
    EXPECT_FALSE(r.tc);
    EXPECT_EQ(r.answer, whole.answer);
    EXPECT_EQ(r.additional, whole.additional);
  }
}

INSTANTIATE_TEST_SUITE_P(RenderedAndPrecompiled, ResponderTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Precompiled" : "Rendered"; });

// Every precompiled answer, patched for a query in mixed case with RD and EDNS variants, is
// byte for byte what the normal path renders.
TEST(PrecompiledAnswersTest, SameBytesAsRendered) {
  auto snapshot = testing::DefaultSnapshot();
  auto precompiled = PrecompiledAnswers::Build(snapshot, ResponderConfig{}, 1 << 20);
  ASSERT_TRUE(precompiled->complete());
  DnsResponder fast(snapshot, ResponderConfig{}, precompiled);
  DnsResponder slow(snapshot, ResponderConfig{}, nullptr);
  std::vector<uint8_t> a(65535), b(65535);
  size_t checked = 0;
  for (const auto& zone : snapshot->zones()) {
    for (const auto& [name, node] : zone->nodes()) {
      std::string text = NameToText(name);
      for (size_t i = 0; i < text.size(); i += 2) text[i] = static_cast<char>(toupper(text[i]));
      for (const char* type : {"A", "AAAA", "MX", "NS", "DS", "CNAME", "TXT", "SRV", "SOA"}) {
        for (const QueryOptions& options :
             {QueryOptions{}, QueryOptions{.id = 77, .rd = false},
              QueryOptions{.edns = true, .do_bit = true},
              QueryOptions{.edns = true, .keepalive = true},
              QueryOptions{.edns = true, .keepalive = true, .padding = 12}}) {
          const auto query = MakeQuery(text, type, options);
          // Encrypted: the padded query's answer is padded on both paths (RFC 8467).
          const QueryTransport transport = {.keepalive_timeout = 20, .encrypted = true};
          const Response ra = fast.Respond(query, absl::MakeSpan(a), transport);
          const Response rb = slow.Respond(query, absl::MakeSpan(b), transport);
          ASSERT_EQ(ra.size, rb.size) << text << " " << type;
          EXPECT_EQ(ra.keepalive, rb.keepalive);
          EXPECT_EQ(ra.padded, options.padding >= 0);
          EXPECT_EQ(rb.padded, options.padding >= 0);
          EXPECT_EQ(std::vector<uint8_t>(a.begin(), a.begin() + ra.size),
                    std::vector<uint8_t>(b.begin(), b.begin() + rb.size))
              << text << " " << type;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 500u);
  EXPECT_GT(precompiled->count(), 50u);
  // An output too small for the precompiled answer plus its OPT falls back to rendering,
  // which truncates cleanly (TC) instead of sending a half-patched message.
  const auto edns_query = MakeQuery("www.example.com", "A", {.edns = true});
  for (size_t room : {size_t{50}, size_t{60}, size_t{184}, size_t{190}, size_t{195}}) {
    std::vector<uint8_t> small(room);
    const Response r = fast.Respond(edns_query, absl::MakeSpan(small), {});
    ASSERT_EQ(r.kind, Response::Kind::kAnswer) << room;
    auto decoded = testing::DecodeResponse(small.data(), r.size);
    ASSERT_TRUE(decoded.ok()) << room << ": " << decoded.status();
    EXPECT_EQ(decoded->id, 0x1234);
  }
  // A limit stops the build early; what was stored is still used.
  auto partial = PrecompiledAnswers::Build(snapshot, ResponderConfig{}, 2000);
  EXPECT_FALSE(partial->complete());
  EXPECT_LE(partial->bytes(), 2000u);
}

std::string ReadData(const std::string& path) {
  std::ifstream in(std::string(ONEPASS_SOURCE_DIR) + "/" + path);
  EXPECT_TRUE(in) << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The same with signed zones (NSEC3 example.org, NSEC example.net) beside the unsigned
// default: DO answers (RRSIGs, denial proofs, CNAMEs across zones) are precompiled too and
// must be byte for byte what rendering sends, as must every answer to a name that does not
// exist (rendered each time) and the DNSSEC types.
TEST(PrecompiledAnswersTest, SignedSameBytesAsRendered) {
  auto snapshot =
      BuildSnapshot({ZoneSource{"default", std::string(DefaultZoneText())},
                     ZoneSource{"org", ReadData("tests/data/dnssec/example.org.signed")},
                     ZoneSource{"net", ReadData("tests/data/dnssec/example.net.signed")}});
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  auto precompiled = PrecompiledAnswers::Build(*snapshot, ResponderConfig{}, 64 << 20);
  ASSERT_TRUE(precompiled->complete());
  DnsResponder fast(*snapshot, ResponderConfig{}, precompiled);
  DnsResponder slow(*snapshot, ResponderConfig{}, nullptr);
  std::vector<uint8_t> a(65535), b(65535);
  size_t checked = 0;
  size_t signed_answers = 0;
  for (const auto& zone : (*snapshot)->zones()) {
    std::vector<std::string> names;
    for (const auto& [name, node] : zone->nodes()) names.push_back(NameToText(name));
    names.push_back("nx." + NameToText(zone->origin()));
    for (std::string text : names) {
      for (size_t i = 0; i < text.size(); i += 2) text[i] = static_cast<char>(toupper(text[i]));
      for (const char* type : {"A", "AAAA", "MX", "NS", "DS", "CNAME", "TXT", "SOA", "DNSKEY",
                               "RRSIG", "NSEC", "NSEC3", "NSEC3PARAM", "ANY"}) {
        for (const QueryOptions& options :
             {QueryOptions{}, QueryOptions{.edns = true, .do_bit = true},
              QueryOptions{.id = 9, .rd = false, .edns = true, .do_bit = true},
              QueryOptions{.edns = true, .do_bit = true, .keepalive = true},
              QueryOptions{.edns = true},
              QueryOptions{.edns = true, .do_bit = true, .padding = 0}}) {
          const auto query = MakeQuery(text, type, options);
          const QueryTransport transport = {.keepalive_timeout = 20, .encrypted = true};
          const Response ra = fast.Respond(query, absl::MakeSpan(a), transport);
          const Response rb = slow.Respond(query, absl::MakeSpan(b), transport);
          if (options.padding >= 0) {
            EXPECT_EQ(rb.size % kResponsePaddingBlock, 0u);
          }
          ASSERT_EQ(ra.size, rb.size) << text << " " << type;
          EXPECT_EQ(std::vector<uint8_t>(a.begin(), a.begin() + ra.size),
                    std::vector<uint8_t>(b.begin(), b.begin() + rb.size))
              << text << " " << type << " do=" << options.do_bit;
          ++checked;
          if (options.do_bit && ReadU16(b.data() + 6) > 1) ++signed_answers;
        }
      }
    }
  }
  EXPECT_GT(checked, 5000u);
  EXPECT_GT(signed_answers, 500u);
  // Signed answers are stored apart only where they differ.
  EXPECT_GT(precompiled->count(), 200u);
  const std::string key = testing::WireName("www.example.org.") + std::string("\0\1", 2);
  ASSERT_TRUE(precompiled->Find(key, true).has_value());
  EXPECT_GT(precompiled->Find(key, true)->bytes->size(),
            precompiled->Find(key, false)->bytes->size());
  EXPECT_EQ(precompiled->Find(key, true)->kind, AnswerKind::kAnswer);
  const std::string unsigned_key = testing::WireName("www.example.com.") + std::string("\0\1", 2);
  EXPECT_EQ(precompiled->Find(unsigned_key, true)->bytes,
            precompiled->Find(unsigned_key, false)->bytes);
}

}  // namespace
}  // namespace onepass::dns
