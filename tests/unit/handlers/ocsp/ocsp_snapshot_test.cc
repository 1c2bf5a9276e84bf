#include "handlers/ocsp/ocsp_snapshot.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "handlers/http/http_date.h"
#include "handlers/ocsp/ocsp_request_reader.h"
#include "tests/unit/handlers/ocsp/ocsp_test_pki.h"

namespace onepass::ocsp {
namespace {

using testing::CertRef;
using testing::CertStatus;
using testing::TestPki;

const absl::Time kNow = absl::FromUnixSeconds(1800000000);  // 2027-01-15T08:00:00Z

absl::Span<const uint8_t> AsBytes(absl::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// What a client asking about `cert` gets from the snapshot: through the request reader, as the
// handler does.
const OcspResponseEntry* Lookup(const OcspSnapshot& snapshot, const TestPki& pki,
                                const CertRef& cert) {
  const std::string der = pki.MakeRequest({cert});
  OcspRequestCertIds ids;
  if (!ReadOcspRequestCertIds(AsBytes(der), ids)) return nullptr;
  CertIdKeyBuffer buffer;
  return snapshot.Find(EncodeCertIdKey(ids.ids[0], buffer));
}

class OcspSnapshotTest : public ::testing::Test {
 protected:
  std::unique_ptr<TestPki> pki_ = TestPki::Create();
};

TEST_F(OcspSnapshotTest, IndexesEverySingleResponseUnderItsCertId) {
  const std::string both = pki_->SignResponse({{0x1000}, {0x1001, CertStatus::kRevoked}},
                                              kNow - absl::Hours(1), kNow + absl::Hours(24));
  const std::string sha256 = pki_->SignResponse({{0x1002, {}, EVP_sha256()}}, kNow - absl::Hours(1),
                                                kNow + absl::Hours(24));
  const std::string big_serial =
      pki_->SignResponse({{0x7fffffffffffffff}, {128}, {-3}}, kNow, absl::nullopt);
  auto snapshot =
      OcspSnapshot::FromResponses({{"both", both}, {"sha256", sha256}, {"big", big_serial}}, kNow);
  EXPECT_EQ(snapshot->stats().loaded, 3u);
  EXPECT_EQ(snapshot->stats().cert_ids, 6u);
  EXPECT_EQ(snapshot->stats().skipped_invalid, 0u);

  const OcspResponseEntry* good = Lookup(*snapshot, *pki_, {0x1000});
  ASSERT_NE(good, nullptr);
  EXPECT_EQ(good->name, "both");
  EXPECT_EQ(good->der, both);
  EXPECT_EQ(Lookup(*snapshot, *pki_, {0x1001}), good);
  // The same certificate under another hash algorithm is another CertID.
  EXPECT_EQ(Lookup(*snapshot, *pki_, {0x1000, {}, EVP_sha256()}), nullptr);
  ASSERT_NE(Lookup(*snapshot, *pki_, {0x1002, {}, EVP_sha256()}), nullptr);
  EXPECT_EQ(Lookup(*snapshot, *pki_, {0x1002}), nullptr);
  EXPECT_NE(Lookup(*snapshot, *pki_, {0x7fffffffffffffff}), nullptr);
  EXPECT_NE(Lookup(*snapshot, *pki_, {128}), nullptr);
  EXPECT_NE(Lookup(*snapshot, *pki_, {-3}), nullptr);
  EXPECT_EQ(Lookup(*snapshot, *pki_, {3}), nullptr);
  // Another CA's certificate with the same serial is not ours.
  std::unique_ptr<TestPki> other = TestPki::Create("another CA");
  EXPECT_EQ(Lookup(*snapshot, *other, {0x1000}), nullptr);
}

TEST_F(OcspSnapshotTest, TimesAndPrecomputedHead) {
  const absl::Time this_update = absl::FromUnixSeconds(1799990000);
  const absl::Time next_update = absl::FromUnixSeconds(1800600000);
  const std::string der = pki_->SignResponse({{1}, {2}}, this_update, next_update);
  auto snapshot = OcspSnapshot::FromResponses({{"r", der}}, kNow);
  ASSERT_EQ(snapshot->entries().size(), 1u);
  const OcspResponseEntry& entry = snapshot->entries()[0];
  EXPECT_EQ(entry.this_update, this_update);
  ASSERT_TRUE(entry.next_update.has_value());
  EXPECT_EQ(*entry.next_update, next_update);
  EXPECT_EQ(entry.etag.size(), 40u);
  EXPECT_EQ(entry.head_prefix, absl::StrCat("HTTP/1.1 200 OK\r\n"
                                            "Content-Type: application/ocsp-response\r\n"
                                            "Content-Length: ",
                                            der.size(),
                                            "\r\n"
                                            "Last-Modified: Fri, 15 Jan 2027 05:13:20 GMT\r\n"
                                            "Expires: Fri, 22 Jan 2027 06:40:00 GMT\r\n"
                                            "ETag: \"",
                                            entry.etag,
                                            "\"\r\n"
                                            "Connection: close\r\n"));
  EXPECT_EQ(snapshot->max_presigned_bytes(), entry.head_prefix.size() + der.size());
  EXPECT_FALSE(entry.ExpiredAt(next_update - absl::Seconds(1)));
  EXPECT_TRUE(entry.ExpiredAt(next_update));
}

TEST_F(OcspSnapshotTest, ResponseWithoutNextUpdateNeverExpires) {
  // RFC 6960 §4.2.2.1: no nextUpdate means newer information is always available.
  const std::string no_next = pki_->SignResponse({{5}}, kNow - absl::Hours(2), absl::nullopt);
  auto snapshot = OcspSnapshot::FromResponses({{"no_next", no_next}}, kNow);
  ASSERT_EQ(snapshot->entries().size(), 1u);
  EXPECT_FALSE(snapshot->entries()[0].next_update.has_value());
  EXPECT_FALSE(snapshot->entries()[0].ExpiredAt(kNow + absl::Hours(24 * 365)));
  EXPECT_EQ(snapshot->entries()[0].head_prefix.find("Expires:"), std::string::npos);
}

TEST_F(OcspSnapshotTest, SkipsExpiredInvalidAndOversized) {
  const std::string expired = pki_->SignResponse({{1}}, kNow - absl::Hours(48), kNow);
  const std::string valid = pki_->SignResponse({{2}}, kNow - absl::Hours(1), kNow + absl::Hours(1));
  OcspLoadOptions small;
  // ECDSA signatures vary by a few bytes in DER: the limit must admit both one-CertID
  // responses, so that "expired" is skipped for its date and not for its size.
  small.max_response_bytes = std::max(valid.size(), expired.size());
  const std::string oversized = pki_->SignResponse({{3}, {4}, {5}}, kNow, kNow + absl::Hours(1));
  ASSERT_GT(oversized.size(), small.max_response_bytes);
  auto snapshot = OcspSnapshot::FromResponses({{"expired", expired},
                                               {"valid", valid},
                                               {"oversized", oversized},
                                               {"unauthorized", testing::StatusOnlyResponse(6)},
                                               {"text", "not DER at all\n"},
                                               {"trailing", valid + "x"},
                                               {"empty", ""}},
                                              kNow, small);
  EXPECT_EQ(snapshot->stats().loaded, 1u);
  EXPECT_EQ(snapshot->stats().skipped_expired, 1u);
  EXPECT_EQ(snapshot->stats().skipped_invalid, 5u);
  EXPECT_EQ(Lookup(*snapshot, *pki_, {1}), nullptr);
  EXPECT_NE(Lookup(*snapshot, *pki_, {2}), nullptr);
  EXPECT_EQ(Lookup(*snapshot, *pki_, {3}), nullptr);
}

TEST_F(OcspSnapshotTest, DuplicateCertIdServesTheLatestThisUpdateInAnyOrder) {
  const std::string older = pki_->SignResponse({{9}}, kNow - absl::Hours(5), kNow + absl::Hours(5));
  const std::string newer = pki_->SignResponse({{9}}, kNow - absl::Hours(1), kNow + absl::Hours(5));
  for (bool newer_first : {false, true}) {
    std::vector<OcspSnapshot::NamedResponse> responses = {{"older", older}, {"newer", newer}};
    if (newer_first) std::swap(responses[0], responses[1]);
    auto snapshot = OcspSnapshot::FromResponses(responses, kNow);
    EXPECT_EQ(snapshot->stats().duplicate_cert_ids, 1u);
    const OcspResponseEntry* entry = Lookup(*snapshot, *pki_, {9});
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->name, "newer");
  }
}

TEST_F(OcspSnapshotTest, LoadDirectory) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "ocsp_snapshot_test_dir";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "subdir");
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
  };

  // An empty directory (or one without any response) is a configuration error.
  EXPECT_FALSE(OcspSnapshot::LoadDirectory(dir.string(), kNow).ok());
  EXPECT_FALSE(OcspSnapshot::LoadDirectory((dir / "missing").string(), kNow).ok());
  write("README", "these are OCSP responses\n");
  EXPECT_FALSE(OcspSnapshot::LoadDirectory(dir.string(), kNow).ok());

  // Only expired responses: starts (and logs an error), serving nothing.
  write("old.der", pki_->SignResponse({{1}}, kNow - absl::Hours(48), kNow - absl::Hours(1)));
  absl::StatusOr<std::shared_ptr<const OcspSnapshot>> snapshot =
      OcspSnapshot::LoadDirectory(dir.string(), kNow);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ((*snapshot)->stats().loaded, 0u);
  EXPECT_EQ((*snapshot)->stats().skipped_expired, 1u);

  write("good.der", pki_->SignResponse({{2}}, kNow - absl::Hours(1), kNow + absl::Hours(1)));
  write(".hidden.der", pki_->SignResponse({{3}}, kNow - absl::Hours(1), kNow + absl::Hours(1)));
  write("subdir/nested.der",
        pki_->SignResponse({{4}}, kNow - absl::Hours(1), kNow + absl::Hours(1)));
  snapshot = OcspSnapshot::LoadDirectory(dir.string(), kNow);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ((*snapshot)->stats().loaded, 1u);
  EXPECT_EQ((*snapshot)->stats().skipped_invalid, 1u);  // README
  const OcspResponseEntry* entry = Lookup(**snapshot, *pki_, {2});
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->name, "good.der");
  EXPECT_EQ(Lookup(**snapshot, *pki_, {3}), nullptr);
  EXPECT_EQ(Lookup(**snapshot, *pki_, {4}), nullptr);

  // Entries that are not regular files are skipped as unusable files are, counted (they used
  // to be passed over unseen) and never opened; a symlink to a response is read through, one
  // to a directory is ignored as a subdirectory is.
  ASSERT_EQ(mkfifo((dir / "fifo.der").c_str(), 0600), 0);
  std::filesystem::create_symlink("/dev/zero", dir / "zero.der");
  std::filesystem::create_symlink("gone.der", dir / "dangling.der");
  std::filesystem::create_symlink("good.der", dir / "alias.der");
  std::filesystem::create_symlink("subdir", dir / "linked_dir");
  snapshot = OcspSnapshot::LoadDirectory(dir.string(), kNow);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ((*snapshot)->stats().loaded, 2u);           // good.der, alias.der
  EXPECT_EQ((*snapshot)->stats().skipped_invalid, 4u);  // README, fifo, zero, dangling
  std::filesystem::remove_all(dir);
}

TEST(HttpDateTest, FormatsImfFixdate) {
  EXPECT_EQ(http::HttpDate(absl::FromUnixSeconds(784111777)), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(http::HttpDate(absl::FromUnixSeconds(0)), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(http::HttpDate(absl::FromUnixSeconds(951782400)), "Tue, 29 Feb 2000 00:00:00 GMT");
  EXPECT_EQ(http::HttpDate(absl::FromUnixMillis(1800000000999)), "Fri, 15 Jan 2027 08:00:00 GMT");
  http::HttpDateCache cache;
  EXPECT_EQ(cache.Get(absl::FromUnixSeconds(0)), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(cache.Get(absl::FromUnixSeconds(1)), "Thu, 01 Jan 1970 00:00:01 GMT");
}

}  // namespace
}  // namespace onepass::ocsp
