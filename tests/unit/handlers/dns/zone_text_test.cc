// The master-file reader (handlers/dns/zone_text.h): the fast path checked record by record
// against ldns on every zone in the tests, strict errors with file and line, and $INCLUDE.
#include "handlers/dns/zone_text.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/data_file.h"
#include "gtest/gtest.h"
#include "handlers/dns/default_zone.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/zone_loader.h"

namespace onepass::dns {
namespace {

const std::string kData = std::string(ONEPASS_SOURCE_DIR) + "/tests/data";

// Every record read; the reader fails the whole read if the fast path and ldns differ.
absl::Status ReadVerified(const std::string& name, const std::string& text, int* records,
                          int* fast = nullptr) {
  ZoneTextOptions options;
  options.verify_with_ldns = true;
  return ReadMasterFile(name, text, options, [&](TextRecord& record) {
    ++*records;
    if (fast != nullptr &&
        (record.type == kTypeA || record.type == kTypeAaaa || record.type == kTypeNs ||
         record.type == kTypeCname || record.type == kTypeMx || record.type == kTypeTxt ||
         record.type == kTypePtr)) {
      ++*fast;
    }
    return absl::OkStatus();
  });
}

TEST(ZoneTextTest, FastPathMatchesLdnsOnEveryTestZone) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kData)) {
    if (!entry.is_regular_file()) continue;
    const std::string path = entry.path().string();
    if (absl::EndsWith(path, ".zone") || absl::EndsWith(path, ".signed")) files.push_back(path);
  }
  ASSERT_GE(files.size(), 40u);
  int fast_total = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    absl::StatusOr<ZoneSource> source = ReadZoneFile(path);
    ASSERT_TRUE(source.ok());
    int records = 0;
    const absl::Status status = ReadVerified(path, source->text, &records, &fast_total);
    // The malformed corpus may be rejected, but never for a fast path that differs.
    EXPECT_NE(status.code(), absl::StatusCode::kInternal) << status;
    if (!absl::StrContains(path, "zone_corpus")) {
      EXPECT_TRUE(status.ok()) << status;
    }
  }
  int records = 0;
  ASSERT_TRUE(ReadVerified("default", std::string(DefaultZoneText()), &records).ok());
  EXPECT_GT(fast_total, 100);
}

TEST(ZoneTextTest, FastPathMatchesLdnsOnTrickyForms) {
  const std::string text =
      "$ORIGIN Example.COM.\n"
      "$TTL 1h\n"
      "@ IN SOA ns1 hostmaster ( 1 ; serial\n 7200 3600 1209600 300 )\n"
      "@ IN NS Ns1\n"
      "@ IN NS ns2.Example.NET.\n"
      "ns1 30 IN A 192.0.2.1\n"
      "    IN 40 AAAA 2001:DB8::1\n"
      "    AAAA ::ffff:192.0.2.1\n"
      "w\\.x\\065 IN CNAME @\n"
      "mx IN MX 0 .\n"
      "mx IN MX 65535 Mail.Other.\n"
      "t IN TXT \"a\\\"b\" c\\;d \"\" \"\\255\\000x\"\n"
      "t IN TXT ( \"multi\"\n  \"line\" )\n"
      "p IN PTR host\n"
      "u IN TYPE65280 \\# 2 abcd\n"
      "s IN SRV 0 5 5060 Target\n"
      "a IN A \\# 4 c0000201\n"
      "$ORIGIN sub\n"
      "x IN CNAME y\n";
  int records = 0;
  const absl::Status status = ReadVerified("tricky.zone", text, &records);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(records, 16);
}

// "\@" is the character: "\@." the one-label name "@", as NSD reads it (nsd-checkzone prints
// \064.), where ldns reads the origin; "@@" and "a@b" are labels for both.
TEST(ZoneTextTest, AnEscapedAtIsTheCharacterAsInNsd) {
  std::vector<std::string> targets;
  ZoneTextOptions options;
  const absl::Status status = ReadMasterFile(
      "at.zone", "$ORIGIN t.\na NS \\@.\nb NS @@.\nc NS a@b.\n", options, [&](TextRecord& record) {
        targets.push_back(record.record.rdata);
        return absl::OkStatus();
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(targets,
            (std::vector<std::string>{std::string("\x01@\0", 3), std::string("\x02@@\0", 4),
                                      std::string("\x03"
                                                  "a@b\0",
                                                  5)}));
}

// A CR inside quotes is a character of the string (RFC 1035 §5.1: any character but '"'), as
// NSD keeps it (nsd-checkzone prints \013); ldns turns it into a space.
TEST(ZoneTextTest, ACarriageReturnInQuotesIsKept) {
  std::string rdata;
  ZoneTextOptions options;
  const absl::Status status =
      ReadMasterFile("cr.zone", "$ORIGIN t.\nx TXT \"a\rb\"\n", options, [&](TextRecord& record) {
        rdata = record.record.rdata;
        return absl::OkStatus();
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(rdata, std::string("\x03"
                               "a\rb",
                               4));
}

// DS, RRSIG and NSEC3 (zone_text_dnssec.h): the plain forms parsed without ldns, byte for byte what
// ldns makes of them; the other forms left to ldns (the same bytes either way).
TEST(ZoneTextTest, DnssecFastPathMatchesLdns) {
  const std::string sig =
      "MEUCIQDdNx3K7h0kZ6f2nQ0bq8Zb1hX3b5pGg1y8r0o7sY3dRwIgYc7m0P2vPj5u9xw+/AaZ";
  const std::vector<std::string> lines = {
      "d IN DS 12345 13 2 " + std::string(64, 'a'),
      "d IN DS 12345 13 2 ( ABCDEF0123456789abcdef0123456789\n ABCDEF0123456789abcdef0123456789 )",
      "d IN DS 0 ECDSAP256SHA256 2 " + std::string(64, 'b'),  // mnemonic: ldns
      "d IN RRSIG A 13 2 3600 20261231000000 20261201000000 4242 Example.COM. " + sig,
      "d IN RRSIG DS 13 2 3600 20261231000000 20261201000000 4242 example.com. ( " +
          sig.substr(0, 20) + "\n " + sig.substr(20) + " )",
      "d IN RRSIG TYPE65280 13 2 3600 20370101000000 19700101000000 65535 @ " + sig,
      "d IN RRSIG NSEC3 ECDSAP256SHA256 2 3600 20261231000000 20261201000000 1 . " + sig,
      "d IN RRSIG A 13 2 3600 1798675200 1796083200 4242 example.com. " + sig,  // ldns
      "d IN NSEC3 1 1 0 - ( 2T7B4G4VSA5SMI47K61MV5BV1A22BOJR\n NS DS RRSIG )",
      "d IN NSEC3 1 0 12 aabbccdd 2t7b4g4vsa5smi47k61mv5bv1a22bojr A TYPE65280 ; comment",
      "d IN NSEC3 1 1 0 - 2T7B4G4VSA5SMI47K61MV5BV1A22BOJR",  // no types: ldns
  };
  for (const std::string& line : lines) {
    SCOPED_TRACE(line);
    std::string text =
        "$ORIGIN example.com.\n$TTL 3600\n@ IN SOA ns hostmaster 1 7200 3600 1209600 300\n" + line;
    int records = 0;
    const absl::Status status = ReadVerified("dnssec.zone", text, &records);
    EXPECT_TRUE(status.ok()) << status;
    EXPECT_EQ(records, 2);
  }
  // Odd forms: the fast path declines and ldns decides, as before it existed (ldns takes an
  // odd hex digit count and a key tag over 65535; it refuses a TTL with a unit and bad base64).
  for (const std::string& line :
       {std::string("d IN DS 12345 13 2 abc"), std::string("d IN DS 70000 13 2 abcd"),
        "d IN RRSIG A 13 2 1h 20261231000000 20261201000000 4242 example.com. " + sig,
        "d IN RRSIG A 13 2 3600 20261231000000 20261201000000 4242 example.com. !!" + sig,
        std::string("d IN NSEC3 1 1 0 - 2T7B4G4VSA5SMI47K61MV5BV1A22BOJ= A"),
        std::string("d IN NSEC3 SHA1 1 0 - 2T7B4G4VSA5SMI47K61MV5BV1A22BOJR A")}) {
    SCOPED_TRACE(line);
    int records = 0;
    const absl::Status status = ReadVerified(
        "dnssec.zone",
        "$ORIGIN example.com.\n$TTL 3600\n@ IN SOA ns hostmaster 1 7200 3600 1209600 300\n" + line,
        &records);
    EXPECT_NE(status.code(), absl::StatusCode::kInternal) << status;
  }
}

// The name table's size hint (zone_loader.cc): owner lines, a run of one owner counted once.
TEST(ZoneTextTest, EstimateOwnerCountCountsRunsOfOwners) {
  EXPECT_EQ(EstimateOwnerCount(""), 0u);
  EXPECT_EQ(EstimateOwnerCount("$ORIGIN example.\n; a comment\n\n   \n"), 0u);
  const std::string text =
      "$ORIGIN example.\n"
      "@ IN SOA ns h ( 1 2 3\n 4 5 )\n"
      "  IN NS ns\n"
      "a\tIN A 192.0.2.1\n"
      "a IN AAAA ::1\n"
      "\tIN TXT x\n"
      "b IN A 192.0.2.2\n"
      "a IN MX 0 .\n"      // a second run of a: counted again (a hint, high here)
      "c IN A 192.0.2.3";  // no final newline
  EXPECT_EQ(EstimateOwnerCount(text), 5u);
}

struct BadCase {
  std::string text;
  int line;
  std::string what;
};

TEST(ZoneTextTest, StrictErrorsNameFileAndLine) {
  const std::string head = "$ORIGIN t.\n@ 60 IN SOA ns hm 1 2 3 4 5\n";
  const std::vector<BadCase> cases = {
      {"www 1x IN A 192.0.2.1\n", 3, "bad TTL '1x'"},
      {"$TTL 5y\n", 3, "$TTL takes one TTL"},
      {"www IN TXT \"open\n", 3, "unterminated quoted string"},
      {"$FOO bar\n", 3, "unknown directive $FOO"},
      {"www IN TXT ( a\n ( b ) )\n", 4, "nested '('"},
      {"www IN TXT (\n a\n", 3, "'(' not closed"},
      {"www IN A 192.0.2.1 )\n", 3, "')' without '('"},
      {"www IN BOGUS 1\n", 3, "unknown record type 'BOGUS'"},
      {"www IN A 192.0.2.256\n", 3, "bad IPv4 address"},
      {"\n\nwww IN MX 10\n", 5, "MX takes"},
      {"www IN CNAME a\nwww IN A 192.0.2.1\n", 4, "CNAME and other data"},
      {"www IN A 192.0.2.1\nwww IN CNAME a\n", 4, "CNAME and other data"},
      {"$INCLUDE x.zone\n", 3, "$INCLUDE needs a zone read from a file"},
      // A label that is a lone '@' is refused, as NSD refuses it (ldns reads "@." and "@.x"
      // as the origin): a fuzzer's find, the fast path and ldns differing.
      {"www IN NS @.\n", 3, "takes one domain name"},
      {"www IN CNAME @.x\n", 3, "takes one domain name"},
      {"www IN MX 1 x.@\n", 3, "MX takes"},
      {"www IN PTR x.@.\n", 3, "takes one domain name"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<std::unique_ptr<Zone>> zone = ParseZone({"f.zone", head + c.text});
    ASSERT_FALSE(zone.ok());
    EXPECT_TRUE(absl::StartsWith(zone.status().message(), absl::StrCat("f.zone:", c.line, ": ")))
        << zone.status();
    EXPECT_TRUE(absl::StrContains(zone.status().message(), c.what)) << zone.status();
  }
}

// One line per error, in file order, as nsd-checkzone and kzonecheck report them: a bad record
// or directive is reported and reading goes on with the next one.
TEST(ZoneTextTest, EveryErrorOfAFileIsReportedWithItsLine) {
  const std::string text =
      "$ORIGIN t.\n@ 60 IN SOA ns hm 1 2 3 4 5\n"
      "a 1x IN A 192.0.2.1\n"              // 3
      "b IN A 192.0.2.2\n"                 // fine
      "c IN BOGUS 1\n"                     // 5
      "$FOO bar\n"                         // 6
      "d IN A 192.0.2.256\n"               // 7
      "e IN CNAME x\ne IN A 192.0.2.5\n";  // 9: CNAME and other data, from the loader
  absl::StatusOr<std::unique_ptr<Zone>> zone = ParseZone({"f.zone", text});
  ASSERT_FALSE(zone.ok());
  const std::vector<std::string> lines = absl::StrSplit(zone.status().message(), '\n');
  ASSERT_EQ(lines.size(), 5u) << zone.status();
  EXPECT_TRUE(absl::StartsWith(lines[0], "f.zone:3: bad TTL '1x'")) << lines[0];
  EXPECT_TRUE(absl::StartsWith(lines[1], "f.zone:5: unknown record type 'BOGUS'")) << lines[1];
  EXPECT_TRUE(absl::StartsWith(lines[2], "f.zone:6: unknown directive $FOO")) << lines[2];
  EXPECT_TRUE(absl::StartsWith(lines[3], "f.zone:7: ")) << lines[3];
  EXPECT_TRUE(absl::StartsWith(lines[4], "f.zone:9: ")) << lines[4];
  EXPECT_TRUE(absl::StrContains(lines[4], "CNAME and other data")) << lines[4];
}

TEST(ZoneTextTest, ReadingStopsAtTheErrorLimitAndSaysSo) {
  std::string text = "$ORIGIN t.\n@ 60 IN SOA ns hm 1 2 3 4 5\n";
  for (int i = 0; i < 30; ++i) absl::StrAppend(&text, "h", i, " IN A 192.0.2.999\n");
  ZoneLoadOptions options;
  options.text.max_errors = 4;
  absl::StatusOr<std::unique_ptr<Zone>> zone = ParseZone({"f.zone", text}, options);
  ASSERT_FALSE(zone.ok());
  const std::vector<std::string> lines = absl::StrSplit(zone.status().message(), '\n');
  ASSERT_EQ(lines.size(), 5u) << zone.status();
  EXPECT_TRUE(absl::StartsWith(lines[3], "f.zone:6: ")) << lines[3];
  EXPECT_EQ(lines[4], "f.zone: stopped after 4 errors");
  // The default reports up to 20.
  zone = ParseZone({"f.zone", text});
  ASSERT_FALSE(zone.ok());
  EXPECT_TRUE(absl::StrContains(zone.status().message(), "stopped after 20 errors"));
  // max_errors 1: the first error only, as before.
  options.text.max_errors = 1;
  zone = ParseZone({"f.zone", text}, options);
  ASSERT_FALSE(zone.ok());
  EXPECT_TRUE(absl::StartsWith(zone.status().message(), "f.zone:3: ")) << zone.status();
}

// After a quote or a parenthesis out of place, where the next record starts is a guess: the
// reader stops there rather than report errors that are not in the file. So does a zone that
// does not start with its SOA (every record would be outside a zone).
TEST(ZoneTextTest, UnreadableRestStopsTheReading) {
  const std::string head = "$ORIGIN t.\n@ 60 IN SOA ns hm 1 2 3 4 5\nx IN BOGUS 1\n";
  const std::vector<BadCase> cases = {
      {"a IN TXT \"open\nb IN BOGUS 1\n", 4, "unterminated quoted string"},
      {"a IN A 192.0.2.1 )\nb IN BOGUS 1\n", 4, "')' without '('"},
      {"a IN TXT ( x\n ( y ) )\nb IN BOGUS 1\n", 5, "nested '('"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<std::unique_ptr<Zone>> zone = ParseZone({"f.zone", head + c.text});
    ASSERT_FALSE(zone.ok());
    const std::vector<std::string> lines = absl::StrSplit(zone.status().message(), '\n');
    ASSERT_EQ(lines.size(), 2u) << zone.status();
    EXPECT_TRUE(absl::StartsWith(lines[0], "f.zone:3: unknown record type")) << lines[0];
    EXPECT_TRUE(absl::StartsWith(lines[1], absl::StrCat("f.zone:", c.line, ": ", c.what)))
        << lines[1];
  }
  absl::StatusOr<std::unique_ptr<Zone>> no_soa =
      ParseZone({"f.zone", "$ORIGIN t.\na IN A 192.0.2.1\nb IN A 192.0.2.2\n"});
  ASSERT_FALSE(no_soa.ok());
  EXPECT_EQ(no_soa.status().message(),
            "f.zone:2: the first record must be the zone's SOA (RFC 1035 §5.2)");
}

class IncludeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / "zone_text_include";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "parts");
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(IncludeTest, RelativeToTheIncludingFileWithItsOwnOrigin) {
  Write("parts/hosts", "www IN A 192.0.2.80\n$INCLUDE more\n");
  Write("parts/more", "mail IN A 192.0.2.25\n");
  const std::string top = Write("top.zone",
                                "$ORIGIN example.com.\n@ 60 IN SOA ns hm 1 2 3 4 5\n"
                                "$INCLUDE parts/hosts sub.example.com.\n"
                                "ftp IN A 192.0.2.21\n");
  absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> snapshot = LoadZoneFiles({top});
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  const Zone& zone = *(*snapshot)->zones()[0];
  std::string name;
  for (const char* text : {"www.sub.example.com.", "mail.sub.example.com.", "ftp.example.com."}) {
    ASSERT_TRUE(NameFromText(text, "", name));
    EXPECT_NE(zone.FindNode(name), nullptr) << text;  // the origin came back after the include
  }
}

TEST_F(IncludeTest, LoopAndDepthAreErrorsAtTheIncludingLine) {
  Write("a", "$INCLUDE b\n");
  Write("b", "x IN A 192.0.2.1\n$INCLUDE a\n");
  const std::string top =
      Write("loop.zone", "$ORIGIN example.com.\n@ 60 IN SOA ns hm 1 2 3 4 5\n$INCLUDE a\n");
  absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> loop = LoadZoneFiles({top});
  ASSERT_FALSE(loop.ok());
  EXPECT_TRUE(absl::StrContains(loop.status().message(), "/b:2: $INCLUDE loop")) << loop.status();

  Write("self", "$INCLUDE self2\n");
  Write("self2", "$INCLUDE self3\n");
  Write("self3", "y IN A 192.0.2.2\n");
  const std::string deep =
      Write("deep.zone", "$ORIGIN example.com.\n@ 60 IN SOA ns hm 1 2 3 4 5\n$INCLUDE self\n");
  ZoneLoadOptions options;
  options.text.max_include_depth = 2;
  absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> too_deep = LoadZoneFiles({deep}, options);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_TRUE(absl::StrContains(too_deep.status().message(), "/self2:1: $INCLUDE nested deeper"))
      << too_deep.status();
  options.text.max_include_depth = 3;
  EXPECT_TRUE(LoadZoneFiles({deep}, options).ok());
}

// Errors in an included file count with the including file's, each under its own name, and
// the including file is read on after the $INCLUDE.
TEST_F(IncludeTest, ErrorsOfIncludedFilesAreReportedToo) {
  Write("parts/bad", "x IN A 192.0.2.300\ny IN A 192.0.2.3\nz IN BOGUS 1\n");
  const std::string top = Write("top.zone",
                                "$ORIGIN example.com.\n@ 60 IN SOA ns hm 1 2 3 4 5\n"
                                "$INCLUDE parts/bad\n"
                                "w 5x IN A 192.0.2.4\n");
  absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> snapshot = LoadZoneFiles({top});
  ASSERT_FALSE(snapshot.ok());
  const std::vector<std::string> lines = absl::StrSplit(snapshot.status().message(), '\n');
  ASSERT_EQ(lines.size(), 3u) << snapshot.status();
  EXPECT_TRUE(absl::StrContains(lines[0], "parts/bad:1: ")) << lines[0];
  EXPECT_TRUE(absl::StrContains(lines[1], "parts/bad:3: unknown record type")) << lines[1];
  EXPECT_TRUE(absl::StrContains(lines[2], "top.zone:4: bad TTL '5x'")) << lines[2];
}

// An included file gets the checks the top file gets (common/data_file.h): /dev/zero, a FIFO
// with no writer, a folder and a file over --max-data-file-mb are each an error at the
// $INCLUDE line naming the file, at once (no hang, no std::bad_alloc), and the reading goes on.
TEST_F(IncludeTest, IncludedFilesGetTheDataFileChecks) {
  const std::string fifo = (dir_ / "parts" / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  Write("parts/big", std::string(600, ';') + "\n");
  const std::string top = Write("top.zone",
                                "$ORIGIN example.com.\n@ 60 IN SOA ns hm 1 2 3 4 5\n"
                                "$INCLUDE /dev/zero\n"
                                "$INCLUDE parts/fifo\n"
                                "$INCLUDE parts\n"
                                "$INCLUDE parts/big\n"
                                "w 5x IN A 192.0.2.4\n");
  const uint64_t cap = MaxDataFileBytes();
  SetMaxDataFileBytes(512);  // over top.zone, under parts/big
  absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> snapshot = LoadZoneFiles({top});
  SetMaxDataFileBytes(cap);
  ASSERT_FALSE(snapshot.ok());
  const std::vector<std::string> lines = absl::StrSplit(snapshot.status().message(), '\n');
  ASSERT_EQ(lines.size(), 5u) << snapshot.status();
  const std::string parts = (dir_ / "parts").string();
  EXPECT_EQ(lines[0], top +
                          ":3: $INCLUDE file /dev/zero is not a regular file (a device, FIFO "
                          "or directory); give the path of the file itself");
  EXPECT_TRUE(absl::StartsWith(lines[1], top + ":4: $INCLUDE file " + parts +
                                             "/fifo is not a "
                                             "regular file"))
      << lines[1];
  EXPECT_TRUE(absl::StartsWith(lines[2], top + ":5: $INCLUDE file " + parts + " is not a regular"))
      << lines[2];
  EXPECT_TRUE(absl::StartsWith(
      lines[3], top + ":6: $INCLUDE file " + parts + "/big is larger than --max-data-file-mb"))
      << lines[3];
  EXPECT_TRUE(absl::StartsWith(lines[4], top + ":7: bad TTL '5x'")) << lines[4];
}

}  // namespace
}  // namespace onepass::dns
