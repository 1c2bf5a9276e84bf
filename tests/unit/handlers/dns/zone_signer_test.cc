// Signing at load (zone_signer.h) with keys made here by ldns, as ldns-keygen would write them:
// the result loads as a signed zone with the chosen denial, and missing keys are a clear error.
#include "handlers/dns/zone_signer.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "handlers/dns/default_zone.h"
#include "handlers/dns/dns_wire.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

// After <optional>: ldns (1.8.3) defines `bool` for C, which breaks C++20 <optional>.
#include <ldns/ldns.h>  // NOLINT(build/include_order)

namespace onepass::dns {
namespace {

using ::testing::HasSubstr;

class ZoneSignerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/onepass-signer-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes K<origin>+<alg>+<tag>.private/.key for a new key (ECDSA P-256 unless told) and
  // returns the path without the suffix; `ksk` sets SEP.
  std::string MakeKey(const std::string& origin, bool ksk,
                      ldns_signing_algorithm algorithm = LDNS_SIGN_ECDSAP256SHA256) {
    ldns_key* key =
        ldns_key_new_frm_algorithm(algorithm, algorithm == LDNS_SIGN_RSASHA256 ? 1024 : 256);
    EXPECT_NE(key, nullptr);
    if (key == nullptr) return "";
    ldns_key_set_pubkey_owner(key, ldns_dname_new_frm_str(origin.c_str()));
    ldns_key_set_flags(key, ksk ? 257 : 256);
    ldns_rr* dnskey = ldns_key2rr(key);
    const std::string base =
        absl::StrCat(dir_, "/K", origin, "+", absl::Dec(algorithm, absl::kZeroPad3), "+",
                     ldns_calc_keytag(dnskey), ksk ? "1" : "0");
    FILE* priv = fopen((base + ".private").c_str(), "w");
    ldns_key_print(priv, key);
    fclose(priv);
    FILE* pub = fopen((base + ".key").c_str(), "w");
    ldns_rr_print(pub, dnskey);
    fclose(pub);
    ldns_rr_free(dnskey);
    ldns_key_deep_free(key);
    return base;
  }
  absl::Status Sign() {
    return SignZone(ZoneSource{"default", std::string(DefaultZoneText())}, Config(false)).status();
  }

  SigningConfig Config(bool nsec3) const {
    SigningConfig config;
    config.keys_dir = dir_;
    config.nsec3 = nsec3;
    config.inception = 1764547200;   // 2025-12-01
    config.expiration = 1893456000;  // 2030-01-01
    return config;
  }

  std::string dir_;
};

TEST_F(ZoneSignerTest, SignsWithNsecOrNsec3) {
  MakeKey("example.com.", true);
  MakeKey("example.com.", false);
  for (const bool nsec3 : {false, true}) {
    SCOPED_TRACE(nsec3 ? "NSEC3" : "NSEC");
    auto signed_source =
        SignZone(ZoneSource{"default", std::string(DefaultZoneText())}, Config(nsec3));
    ASSERT_TRUE(signed_source.ok()) << signed_source.status();
    EXPECT_EQ(signed_source->display_name, "default");
    auto zone = ParseZone(*signed_source);
    ASSERT_TRUE(zone.ok()) << zone.status();
    EXPECT_TRUE((*zone)->secure());
    EXPECT_EQ((*zone)->denial().has_nsec3(), nsec3);
    EXPECT_EQ((*zone)->apex().Find(kTypeDnskey)->records.size(), 2u);
    ASSERT_TRUE((*zone)->earliest_expiry().has_value());
    EXPECT_EQ((*zone)->earliest_expiry()->expiration, 1893456000u);
    const Node* www = (*zone)->FindNode(testing::WireName("www.example.com."));
    ASSERT_NE(www, nullptr);
    EXPECT_EQ(www->Find(kTypeA)->signatures.size(), 1u);                  // by the ZSK only
    EXPECT_EQ((*zone)->apex().Find(kTypeDnskey)->signatures.size(), 1u);  // by the KSK
    if (!nsec3) {
      EXPECT_NE(www->Find(kTypeNsec), nullptr);
    }
  }
}

TEST_F(ZoneSignerTest, MissingKeysAreAnError) {
  MakeKey("example.net.", false);  // another zone's key is not used
  auto result = SignZone(ZoneSource{"default", std::string(DefaultZoneText())}, Config(false));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("default: no key for example.com. in"));
  SigningConfig nowhere = Config(false);
  nowhere.keys_dir = dir_ + "/absent";
  result = SignZone(ZoneSource{"default", std::string(DefaultZoneText())}, nowhere);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("absent"));
}

// A zone that $INCLUDEs part of its data is signed whole (ldns's own zone reader answers
// "$INCLUDE not implemented": the signer takes the records from the loader's reader).
TEST_F(ZoneSignerTest, SignsTheRecordsOfIncludedFiles) {
  MakeKey("example.com.", false);
  const std::string hosts = dir_ + "/hosts";
  FILE* file = fopen(hosts.c_str(), "w");
  ASSERT_NE(file, nullptr);
  fputs("www IN A 192.0.2.80\n", file);
  fclose(file);
  const std::string text =
      "$ORIGIN example.com.\n$TTL 300\n@ IN SOA ns hm 1 2 3 4 5\n@ IN NS ns\n"
      "ns IN A 192.0.2.53\n$INCLUDE hosts\n";
  const std::string path = dir_ + "/example.com.zone";
  file = fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  fputs(text.c_str(), file);
  fclose(file);
  auto signed_source = SignZone(ZoneSource{path, text}, Config(false));
  ASSERT_TRUE(signed_source.ok()) << signed_source.status();
  auto zone = ParseZone(*signed_source);
  ASSERT_TRUE(zone.ok()) << zone.status();
  const Node* www = (*zone)->FindNode(testing::WireName("www.example.com."));
  ASSERT_NE(www, nullptr);
  ASSERT_NE(www->Find(kTypeA), nullptr);
  EXPECT_EQ(www->Find(kTypeA)->records[0].ttl, 300u);
  EXPECT_EQ(www->Find(kTypeA)->signatures.size(), 1u);
}

// A .key that is not the public half of its .private is refused, naming both files: another
// algorithm, or another key of the same algorithm (ldns would sign, and no validator would
// accept a signature against the published DNSKEY).
TEST_F(ZoneSignerTest, KeyPairsThatDoNotMatchAreRefused) {
  const std::string ecdsa = MakeKey("example.com.", false);
  const std::string rsa = MakeKey("example.com.", false, LDNS_SIGN_RSASHA256);
  ASSERT_TRUE(Sign().ok());
  std::filesystem::copy_file(rsa + ".key", ecdsa + ".key",
                             std::filesystem::copy_options::overwrite_existing);
  absl::Status status = Sign();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat(ecdsa, ".key and ", ecdsa,
                                     ".private are not one key pair: "
                                     "the DNSKEY is algorithm 8 (RSASHA256), the private key "
                                     "algorithm 13 (ECDSAP256SHA256)")));
  std::filesystem::remove(rsa + ".key");
  std::filesystem::remove(rsa + ".private");

  const std::string other = MakeKey("example.com.", true);
  std::filesystem::copy_file(other + ".key", ecdsa + ".key",
                             std::filesystem::copy_options::overwrite_existing);
  status = Sign();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat(ecdsa, ".key and ", ecdsa,
                                     ".private are not one key pair: "
                                     "the DNSKEY's public key is not the one of the private key")));
}

// Key files get the data-file checks: a FIFO named like a key is refused at once, not waited on.
TEST_F(ZoneSignerTest, KeyFileThatIsNotARegularFileIsRefused) {
  const std::string base = MakeKey("example.com.", false);
  std::filesystem::remove(base + ".key");
  ASSERT_EQ(mkfifo((base + ".key").c_str(), 0600), 0);
  const absl::Status status = Sign();
  EXPECT_THAT(status.message(), HasSubstr(absl::StrCat(base, ".key is not a regular file")));
}

}  // namespace
}  // namespace onepass::dns
