// RRsets shared between owners (rrset_store.h): delegations that name the same NS set point at
// one RRset and still answer each for itself; an owner that changes or signs a shared RRset
// gets its own copy; a snapshot's memory goes back when it is dropped (a reload).
#include "handlers/dns/rrset_store.h"

#include <malloc.h>

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/zone_loader.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::Ask;
using ::testing::ElementsAre;
using testing::WireName;

constexpr char kHead[] =
    "$ORIGIN tld.\n$TTL 3600\n"
    "@ IN SOA ns1.tld. host.tld. 1 7200 3600 1209600 300\n"
    "@ IN NS ns1.tld.\nns1 IN A 192.0.2.1\n";

std::shared_ptr<const ZoneSnapshot> Load(const std::string& text) {
  absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> snapshot =
      BuildSnapshot({ZoneSource{"tld.zone", text}});
  EXPECT_TRUE(snapshot.ok()) << snapshot.status();
  return snapshot.ok() ? *snapshot : nullptr;
}

const RRset* NsAt(const ZoneSnapshot& snapshot, const char* name) {
  const Node* node = snapshot.zones()[0]->FindNode(WireName(name));
  return node == nullptr ? nullptr : node->Find(kTypeNs);
}

TEST(RRsetStoreTest, DelegationsSharingAnNsSetAnswerEachForItself) {
  auto snapshot = Load(std::string(kHead) +
                       "alpha IN NS ns1.registrar.net.\nalpha IN NS ns2.registrar.net.\n"
                       "beta IN NS ns1.registrar.net.\nbeta IN NS ns2.registrar.net.\n"
                       "beta IN DS 1 13 2 " +
                       std::string(64, 'a') +
                       "\n"
                       "gamma IN NS ns2.registrar.net.\ngamma IN NS ns1.registrar.net.\n");
  ASSERT_NE(snapshot, nullptr);
  const RRset* alpha = NsAt(*snapshot, "alpha.tld.");
  ASSERT_NE(alpha, nullptr);
  EXPECT_EQ(alpha, NsAt(*snapshot, "beta.tld."));  // one RRset
  EXPECT_TRUE(alpha->shared);
  EXPECT_NE(alpha, NsAt(*snapshot, "gamma.tld."));  // another order is another RRset
  EXPECT_EQ(alpha->records[0].target, WireName("ns1.registrar.net."));

  for (const char* owner : {"alpha.tld", "beta.tld"}) {
    auto answer = Ask(snapshot, std::string("www.") + owner, "A");
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->rcode, 0);
    EXPECT_FALSE(answer->aa);
    EXPECT_TRUE(answer->answer.empty());
    const std::string o = std::string(owner) + ".";
    EXPECT_THAT(answer->authority, ElementsAre(o + " 3600 in ns ns1.registrar.net.",
                                               o + " 3600 in ns ns2.registrar.net."));
  }
  auto ds = Ask(snapshot, "beta.tld", "DS");
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ(ds->answer.size(), 1u);
  auto no_ds = Ask(snapshot, "alpha.tld", "DS");
  ASSERT_TRUE(no_ds.ok());
  EXPECT_TRUE(no_ds->answer.empty());
  EXPECT_EQ(no_ds->authority.size(), 1u);  // the SOA: NODATA
}

TEST(RRsetStoreTest, ARecordForAnOwnerSeenBeforeChangesOnlyItsCopy) {
  auto snapshot = Load(std::string(kHead) +
                       "alpha IN NS ns1.registrar.net.\n"
                       "beta IN NS ns1.registrar.net.\n"
                       "alpha IN NS ns9.other.net.\n");
  ASSERT_NE(snapshot, nullptr);
  const RRset* alpha = NsAt(*snapshot, "alpha.tld.");
  const RRset* beta = NsAt(*snapshot, "beta.tld.");
  ASSERT_NE(alpha, nullptr);
  ASSERT_NE(beta, nullptr);
  EXPECT_EQ(alpha->records.size(), 2u);
  EXPECT_EQ(beta->records.size(), 1u);
  auto answer = Ask(snapshot, "x.beta.tld", "A");
  ASSERT_TRUE(answer.ok());
  EXPECT_THAT(answer->authority, ElementsAre("beta.tld. 3600 in ns ns1.registrar.net."));
  answer = Ask(snapshot, "x.alpha.tld", "A");
  ASSERT_TRUE(answer.ok());
  EXPECT_THAT(answer->authority, ElementsAre("alpha.tld. 3600 in ns ns1.registrar.net.",
                                             "alpha.tld. 3600 in ns ns9.other.net."));
}

TEST(RRsetStoreTest, ShareRecyclesTheTwinAndUnshareCopies) {
  NameArena arena;
  RdataInterner interner(arena);
  RRsetStore store;
  auto make = [&](const std::string& rdata) {
    RRset* rrset = store.New(kTypeNs);
    Record record;
    record.ttl = 60;
    record.rdata = interner.Intern(rdata, true);
    rrset->records.push_back(record);
    return rrset;
  };
  RRset* first = store.Share(make(WireName("a.example.")));
  RRset* twin = store.Share(make(WireName("a.example.")));
  RRset* other = store.Share(make(WireName("b.example.")));
  EXPECT_EQ(first, twin);
  EXPECT_NE(first, other);
  EXPECT_EQ(store.shared_hits(), 1u);
  EXPECT_EQ(store.live(), 2u);  // the twin's slot is free for the next New
  EXPECT_EQ(first->records[0].rdata.data(), other->records[0].rdata.data() - 11);
  RRset* copy = store.Unshare(first);
  EXPECT_NE(copy, first);
  EXPECT_FALSE(copy->shared);
  EXPECT_EQ(copy->records[0].rdata, first->records[0].rdata);
  EXPECT_EQ(store.live(), 3u);
}

TEST(RRsetStoreTest, InternedRdataIsStoredOnce) {
  NameArena arena;
  RdataInterner interner(arena);
  const absl::string_view a = interner.Intern("ns1", true);
  EXPECT_EQ(interner.Intern(std::string("ns1"), true).data(), a.data());
  EXPECT_NE(interner.Intern("ns1", false).data(), a.data());
}

// A zone of `n` delegations under a few shared NS sets, a fifth with a DS, some with glue.
std::string Delegations(int n) {
  std::string text = kHead;
  for (int i = 0; i < n; ++i) {
    const std::string name = "d" + std::to_string(i);
    if (i % 30 == 0) {
      text += name + " IN NS ns." + name + ".tld.\nns." + name + " IN A 192.0.2.7\n";
    } else {
      const std::string reg = "reg" + std::to_string(i % 7) + ".net.";
      text += name + " IN NS ns1." + reg + "\n" + name + " IN NS ns2." + reg + "\n";
    }
    if (i % 5 == 0) text += name + " IN DS 1 13 2 " + std::string(64, 'b') + "\n";
  }
  return text;
}

// In use from the heap and in mmap'd blocks (the arena's 1 MiB blocks start as mmaps; once
// one is freed glibc raises its mmap threshold and the next come from the heap).
size_t HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

// A reload replaces the snapshot: once the old one is dropped, its memory is free again.
TEST(RRsetStoreTest, DroppingASnapshotFreesItsMemory) {
  const std::string text = Delegations(20000);
  const size_t before = HeapInUse();
  auto snapshot = Load(text);
  ASSERT_NE(snapshot, nullptr);
  const size_t loaded = HeapInUse();
  EXPECT_GT(loaded, before + 1000000);  // it did take memory: the check below can fail
  const RRset* ns = NsAt(*snapshot, "d1.tld.");
  ASSERT_NE(ns, nullptr);
  EXPECT_EQ(ns, NsAt(*snapshot, "d8.tld."));  // i % 7 == 1 for both
  snapshot.reset();
  EXPECT_LT(HeapInUse(), before + 64 * 1024);
  // A second load takes what the first did (nothing kept from it, nothing lost).
  snapshot = Load(text);
  EXPECT_LT(HeapInUse(), loaded + 64 * 1024);
  snapshot.reset();
  EXPECT_LT(HeapInUse(), before + 64 * 1024);
}

}  // namespace
}  // namespace onepass::dns
