// The DNS frontend's cache: keys, TTLs (positive, negative from the SOA, aged on hits),
// case-insensitive hits answered in the client's case, LRU eviction at the size bound, stale
// answers (RFC 8767) within their window only.
#include "handlers/dns/dns_cache.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "handlers/dns/dns_wire.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::MakeQuery;

size_t QnameBytes(const std::vector<uint8_t>& message) {
  size_t at = kHeaderBytes;
  while (message[at] != 0) at += 1 + message[at];
  return at + 1 - kHeaderBytes;
}

void Append32(std::vector<uint8_t>& m, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) m.push_back(static_cast<uint8_t>(v >> shift));
}

// The response to `query`: QR set, `rcode`, and either one A record with `ttl` (positive) or
// a SOA in the authority section with `ttl` and MINIMUM `minimum` (negative).
std::vector<uint8_t> Response(const std::vector<uint8_t>& query, uint8_t rcode, uint32_t ttl,
                              bool negative = false, uint32_t minimum = 0) {
  std::vector<uint8_t> m(query.begin(), query.begin() + kHeaderBytes + QnameBytes(query) + 4);
  m[2] |= 0x80;
  m[3] = static_cast<uint8_t>((m[3] & 0xf0) | rcode);
  WriteU16(m.data() + 6, negative ? 0 : 1);
  WriteU16(m.data() + 8, negative ? 1 : 0);
  WriteU16(m.data() + 10, 0);
  m.insert(m.end(), {0xc0, 0x0c});  // the question's name
  if (negative) {
    m.insert(m.end(), {0, 6, 0, 1});
    Append32(m, ttl);
    m.insert(m.end(), {0, 24, 0xc0, 0x0c, 0xc0, 0x0c});  // RDLENGTH, MNAME, RNAME
    Append32(m, 1);                                      // serial
    Append32(m, 7200);
    Append32(m, 3600);
    Append32(m, 1209600);
    Append32(m, minimum);
  } else {
    m.insert(m.end(), {0, 1, 0, 1});
    Append32(m, ttl);
    m.insert(m.end(), {0, 4, 192, 0, 2, 1});
  }
  return m;
}

uint32_t FirstRecordTtl(const uint8_t* m, size_t qname_bytes) {
  return ReadU32(m + kHeaderBytes + qname_bytes + 4 + 2 + 4);
}

class CacheTest : public ::testing::Test {
 protected:
  bool Lookup(const std::vector<uint8_t>& query, OutputBuffer& out) {
    std::string key;
    if (!DnsCache::MakeKey(query, QnameBytes(query), key)) return false;
    return cache_.Answer(key, query, QnameBytes(query), now_, out);
  }
  void Store(const std::vector<uint8_t>& query, const std::vector<uint8_t>& response) {
    std::string key;
    ASSERT_TRUE(DnsCache::MakeKey(query, QnameBytes(query), key));
    cache_.Insert(key, response, now_);
  }
  DnsCache cache_{CacheConfig{.entries = 3, .max_ttl = 600, .max_negative_ttl = 120}};
  absl::Time now_ = absl::FromUnixSeconds(2'000'000);
};

TEST_F(CacheTest, HitIsTheAnswerWithClientIdAndCaseAndAgedTtlUntilExpiry) {
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A", {.id = 1});
  Store(query, Response(query, kRcodeNoError, 300));
  const std::vector<uint8_t> shouting = MakeQuery("WwW.ExAmPlE.CoM", "A", {.id = 0xabcd});
  now_ += absl::Seconds(100);
  OutputBuffer out(70000);
  ASSERT_TRUE(Lookup(shouting, out));
  const uint8_t* m = out.data() + 2;
  EXPECT_EQ(ReadU16(out.data()), out.size() - 2);
  EXPECT_EQ(ReadU16(m), 0xabcd);
  // The client's spelling in the question.
  EXPECT_EQ(0, std::memcmp(m + kHeaderBytes, shouting.data() + kHeaderBytes, QnameBytes(shouting)));
  EXPECT_EQ(FirstRecordTtl(m, QnameBytes(query)), 200u);
  now_ += absl::Seconds(199);
  out.Clear();
  EXPECT_TRUE(Lookup(query, out));
  now_ += absl::Seconds(1);  // 300 s after the store: gone
  out.Clear();
  EXPECT_FALSE(Lookup(query, out));
  EXPECT_EQ(cache_.size(), 0u);
}

TEST_F(CacheTest, KeyTellsApartTypeClassDoAndEdns) {
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A");
  Store(query, Response(query, kRcodeNoError, 300));
  OutputBuffer out(70000);
  EXPECT_FALSE(Lookup(MakeQuery("www.example.com", "AAAA"), out));
  EXPECT_FALSE(Lookup(MakeQuery("www.example.com", "A", {.qclass = 3}), out));
  EXPECT_FALSE(Lookup(MakeQuery("www.example.com", "A", {.edns = true}), out));
  EXPECT_FALSE(Lookup(MakeQuery("www.example.com", "A", {.edns = true, .do_bit = true}), out));
  EXPECT_FALSE(Lookup(MakeQuery("www.example.com", "A", {.rd = false}), out));
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(Lookup(MakeQuery("www.example.com", "A", {.id = 9}), out));
}

TEST_F(CacheTest, NegativeAnswersLiveTheSoaMinimumAndNeedASoa) {
  const std::vector<uint8_t> query = MakeQuery("nx.example.com", "A");
  Store(query, Response(query, kRcodeNxDomain, 3600, /*negative=*/true, /*minimum=*/60));
  OutputBuffer out(70000);
  now_ += absl::Seconds(59);
  EXPECT_TRUE(Lookup(query, out));
  now_ += absl::Seconds(1);
  EXPECT_FALSE(Lookup(query, out));
  // Capped by max_negative_ttl (120) when the SOA allows more.
  Store(query, Response(query, kRcodeNxDomain, 3600, true, 3600));
  now_ += absl::Seconds(120);
  EXPECT_FALSE(Lookup(query, out));
  // NODATA without a SOA: not cached (RFC 2308 §5).
  std::vector<uint8_t> bare = Response(query, kRcodeNoError, 300, true, 60);
  WriteU16(bare.data() + 8, 0);
  bare.resize(kHeaderBytes + QnameBytes(query) + 4);
  Store(query, bare);
  EXPECT_EQ(cache_.size(), 0u);
}

TEST_F(CacheTest, PositiveTtlCappedAndUncacheableAnswersSkipped) {
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A");
  Store(query, Response(query, kRcodeNoError, 100000));
  OutputBuffer out(70000);
  now_ += absl::Seconds(600);
  EXPECT_FALSE(Lookup(query, out));  // max_ttl 600
  Store(query, Response(query, kRcodeNoError, 0));
  Store(query, Response(query, kRcodeServFail, 300));
  std::vector<uint8_t> truncated = Response(query, kRcodeNoError, 300);
  truncated[2] |= 0x02;
  Store(query, truncated);
  EXPECT_EQ(cache_.size(), 0u);
}

TEST_F(CacheTest, EvictsLeastRecentlyUsedAtTheBound) {
  std::vector<std::vector<uint8_t>> queries;
  for (int i = 0; i < 4; ++i) queries.push_back(MakeQuery("n" + std::to_string(i) + ".test", "A"));
  for (int i = 0; i < 3; ++i) Store(queries[i], Response(queries[i], kRcodeNoError, 300));
  OutputBuffer out(70000);
  EXPECT_TRUE(Lookup(queries[0], out));  // 0 is now the most recent; 1 the least
  Store(queries[3], Response(queries[3], kRcodeNoError, 300));
  EXPECT_EQ(cache_.size(), 3u);
  EXPECT_FALSE(Lookup(queries[1], out));
  EXPECT_TRUE(Lookup(queries[0], out));
  EXPECT_TRUE(Lookup(queries[2], out));
  EXPECT_TRUE(Lookup(queries[3], out));
}

// Serve-stale (RFC 8767): a cache whose entries stay 100 s past their expiry for AnswerStale.
class StaleCacheTest : public CacheTest {
 protected:
  bool Stale(const std::vector<uint8_t>& query, OutputBuffer& out) {
    std::string key;
    if (!DnsCache::MakeKey(query, QnameBytes(query), key)) return false;
    return cache_.AnswerStale(key, query, QnameBytes(query), now_, out);
  }
  void SetUp() override {
    cache_ = DnsCache(CacheConfig{
        .entries = 3, .max_ttl = 600, .max_negative_ttl = 120, .serve_stale_seconds = 100});
  }
};

TEST_F(CacheTest, NoStaleAnswerWhenServeStaleIsOff) {
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A");
  Store(query, Response(query, kRcodeNoError, 300));
  now_ += absl::Seconds(300);
  std::string key;
  ASSERT_TRUE(DnsCache::MakeKey(query, QnameBytes(query), key));
  OutputBuffer out(70000);
  EXPECT_FALSE(cache_.AnswerStale(key, query, QnameBytes(query), now_, out));
  EXPECT_FALSE(Lookup(query, out));
  EXPECT_EQ(cache_.size(), 0u);  // dropped at expiry, as before
  EXPECT_TRUE(out.empty());
}

TEST_F(StaleCacheTest, ExpiredAnswerServedStaleWithTtl30ClientIdAndCaseWithinTheWindowOnly) {
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A", {.id = 1});
  Store(query, Response(query, kRcodeNoError, 300));
  const std::vector<uint8_t> shouting = MakeQuery("WwW.ExAmPlE.CoM", "A", {.id = 0xbeef});
  OutputBuffer out(70000);
  now_ += absl::Seconds(299);
  EXPECT_FALSE(Stale(shouting, out)) << "fresh: Answer serves it, not AnswerStale";
  now_ += absl::Seconds(1);
  EXPECT_FALSE(Lookup(shouting, out)) << "expired: never a fresh hit";
  EXPECT_EQ(cache_.size(), 1u) << "kept for the stale window";
  ASSERT_TRUE(Stale(shouting, out));
  const uint8_t* m = out.data() + 2;
  EXPECT_EQ(ReadU16(out.data()), out.size() - 2);
  EXPECT_EQ(ReadU16(m), 0xbeef);
  EXPECT_EQ(0, std::memcmp(m + kHeaderBytes, shouting.data() + kHeaderBytes, QnameBytes(shouting)));
  EXPECT_EQ(FirstRecordTtl(m, QnameBytes(query)), DnsCache::kStaleTtl);
  EXPECT_EQ(DnsCache::kStaleTtl, 30u);
  now_ += absl::Seconds(99);  // 399 s after the store, 99 s stale
  out.Clear();
  EXPECT_TRUE(Stale(query, out));
  now_ += absl::Seconds(1);  // 100 s stale: the window is over
  out.Clear();
  EXPECT_FALSE(Stale(query, out));
  EXPECT_EQ(cache_.size(), 0u);
  EXPECT_TRUE(out.empty());
}

TEST_F(StaleCacheTest, NegativeAnswerServedStaleWithEveryTtl30) {
  const std::vector<uint8_t> query = MakeQuery("nx.example.com", "A");
  Store(query, Response(query, kRcodeNxDomain, 3600, /*negative=*/true, /*minimum=*/60));
  now_ += absl::Seconds(60);
  OutputBuffer out(70000);
  EXPECT_FALSE(Lookup(query, out));
  ASSERT_TRUE(Stale(query, out));
  const uint8_t* m = out.data() + 2;
  EXPECT_EQ(m[3] & kRcodeMask, kRcodeNxDomain);
  EXPECT_EQ(FirstRecordTtl(m, QnameBytes(query)), 30u) << "the SOA's TTL";
}

TEST_F(StaleCacheTest, FreshAnswerReplacesTheStaleOne) {
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A");
  Store(query, Response(query, kRcodeNoError, 300));
  now_ += absl::Seconds(350);
  OutputBuffer out(70000);
  EXPECT_FALSE(Lookup(query, out));
  Store(query, Response(query, kRcodeNoError, 300));  // the backend answered again
  now_ += absl::Seconds(10);
  ASSERT_TRUE(Lookup(query, out));
  EXPECT_EQ(FirstRecordTtl(out.data() + 2, QnameBytes(query)), 290u);
  out.Clear();
  EXPECT_FALSE(Stale(query, out)) << "fresh again";
  EXPECT_EQ(cache_.size(), 1u);
}

TEST_F(StaleCacheTest, StaleEntriesCountTowardsTheBoundAndAreEvictedFirstWhenLeastUsed) {
  std::vector<std::vector<uint8_t>> queries;
  for (int i = 0; i < 4; ++i) queries.push_back(MakeQuery("n" + std::to_string(i) + ".test", "A"));
  Store(queries[0], Response(queries[0], kRcodeNoError, 10));
  now_ += absl::Seconds(20);  // 0 is stale now
  for (int i = 1; i < 4; ++i) Store(queries[i], Response(queries[i], kRcodeNoError, 300));
  EXPECT_EQ(cache_.size(), 3u);
  OutputBuffer out(70000);
  EXPECT_FALSE(Stale(queries[0], out)) << "evicted: the least recently used";
}

// `response` with an OPT record (UDP 1232, DO) holding `options` added to its additional
// section, followed by an A record there when `record_after`.
std::vector<uint8_t> WithOpt(std::vector<uint8_t> response, const std::vector<uint8_t>& options,
                             bool record_after = false) {
  response.insert(response.end(), {0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0});
  response.push_back(static_cast<uint8_t>(options.size() >> 8));
  response.push_back(static_cast<uint8_t>(options.size()));
  response.insert(response.end(), options.begin(), options.end());
  if (record_after) {
    response.insert(response.end(), {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 1, 44, 0, 4, 192, 0, 2, 9});
  }
  WriteU16(response.data() + 10, record_after ? 2 : 1);
  return response;
}

// The message in `out` (framed) as bytes.
std::vector<uint8_t> Message(const OutputBuffer& out) {
  return std::vector<uint8_t>(out.data() + 2, out.data() + out.size());
}

const std::vector<uint8_t> kStaleEde = {0, 15, 0, 2, 0, 3};  // RFC 8914: EDE, INFO-CODE 3

TEST_F(StaleCacheTest, StaleAnswerWithOptGetsEdeStaleAnswerAppendedRdlengthFixedArcountKept) {
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A", {.edns = true});
  const std::vector<uint8_t> stored = WithOpt(Response(query, kRcodeNoError, 300), {});
  Store(query, stored);
  OutputBuffer out(70000);
  ASSERT_TRUE(Lookup(query, out));
  EXPECT_EQ(Message(out).size(), stored.size()) << "a fresh answer gets no EDE";
  now_ += absl::Seconds(300);
  out.Clear();
  ASSERT_TRUE(Stale(query, out));
  // Expected: the stored bytes with the query's ID, TTL 30, RDLENGTH 6, the option at the end.
  std::vector<uint8_t> expected = stored;
  WriteU16(expected.data(), ReadU16(query.data()));
  WriteU32(expected.data() + kHeaderBytes + QnameBytes(query) + 4 + 6, 30);
  WriteU16(expected.data() + expected.size() - 2, 6);
  expected.insert(expected.end(), kStaleEde.begin(), kStaleEde.end());
  EXPECT_EQ(Message(out), expected);
  EXPECT_EQ(ReadU16(out.data()), expected.size()) << "the length prefix counts the option";
  auto decoded = testing::DecodeResponse(Message(out));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_TRUE(decoded->has_opt);
  EXPECT_TRUE(decoded->opt_do) << "the backend's OPT flags are kept";
  EXPECT_EQ(decoded->opt_options, std::vector<std::string>{"15:0003"});
  // Served again: the stored bytes are untouched (one option, not two).
  out.Clear();
  ASSERT_TRUE(Stale(query, out));
  EXPECT_EQ(Message(out), expected);
}

TEST_F(StaleCacheTest, EdeGoesAfterTheBackendsOwnOptions) {
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A", {.edns = true});
  const std::vector<uint8_t> cookie = {0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8};
  Store(query, WithOpt(Response(query, kRcodeNoError, 300), cookie));
  now_ += absl::Seconds(300);
  OutputBuffer out(70000);
  ASSERT_TRUE(Stale(query, out));
  auto decoded = testing::DecodeResponse(Message(out));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->opt_options, (std::vector<std::string>{"10:0102030405060708", "15:0003"}));
}

TEST_F(StaleCacheTest, NoOptOrOptNotLastNoEde) {
  const std::vector<uint8_t> plain = MakeQuery("plain.example.com", "A");
  const std::vector<uint8_t> without_opt = Response(plain, kRcodeNoError, 300);
  Store(plain, without_opt);
  const std::vector<uint8_t> odd = MakeQuery("odd.example.com", "A", {.edns = true});
  const std::vector<uint8_t> opt_first = WithOpt(Response(odd, kRcodeNoError, 300), {}, true);
  Store(odd, opt_first);
  now_ += absl::Seconds(300);
  OutputBuffer out(70000);
  ASSERT_TRUE(Stale(plain, out));
  EXPECT_EQ(Message(out).size(), without_opt.size()) << "no OPT: nothing added";
  out.Clear();
  ASSERT_TRUE(Stale(odd, out));
  EXPECT_EQ(Message(out).size(), opt_first.size()) << "a record after the OPT: left alone";
  auto decoded = testing::DecodeResponse(Message(out));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_TRUE(decoded->opt_options.empty());
}

}  // namespace
}  // namespace onepass::dns
