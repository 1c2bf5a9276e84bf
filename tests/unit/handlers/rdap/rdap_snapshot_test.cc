// Precompiled RDAP answers (rdap_snapshot.h) are byte-identical to rendering each answer whole
// from its records (RenderDomain, rdap_render.h), over the embedded database and a generated
// one (scripts/gen-whois-db.py): the pieces, their interning and their order are what is under
// test. The records are collected by a sink of this test's own, which resolves registrars,
// contacts and name server glue itself.
#include "handlers/rdap/rdap_snapshot.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "handlers/whois/whois_db.h"
#include "handlers/whois/whois_embedded_db.h"
#include "tests/support/subprocess.h"

namespace onepass::rdap {
namespace {

// Keeps a copy of every record (views into strings that never move).
class CollectingSink final : public whois::WhoisRecordSink {
 public:
  absl::Status AddRegistrar(const whois::RegistrarRecord& r) override {
    whois::RegistrarRecord c = r;
    for (absl::string_view* f : {&c.name, &c.whois_server, &c.url, &c.abuse_email, &c.abuse_phone,
                                 &c.address, &c.phone, &c.email, &c.rdap_url}) {
      *f = Keep(*f);
    }
    registrars[r.iana_id] = c;
    return absl::OkStatus();
  }
  absl::Status AddContact(const whois::ContactRecord& r) override {
    whois::ContactRecord c = r;
    for (absl::string_view* f : {&c.handle, &c.name, &c.organization, &c.street, &c.city, &c.state,
                                 &c.postal_code, &c.country, &c.phone, &c.email}) {
      *f = Keep(*f);
    }
    contacts[absl::AsciiStrToUpper(r.handle)] = c;
    return absl::OkStatus();
  }
  absl::Status AddNameserver(const whois::NameserverRecord& r) override {
    std::vector<std::string>& glue = addresses[std::string(r.name)];
    for (absl::string_view a : r.addresses) {
      const std::string text(a);
      unsigned char binary[16];
      char out[INET6_ADDRSTRLEN];
      const int family = text.find(':') == std::string::npos ? AF_INET : AF_INET6;
      EXPECT_EQ(inet_pton(family, text.c_str(), binary), 1);
      glue.push_back(inet_ntop(family, binary, out, sizeof(out)));
    }
    return absl::OkStatus();
  }
  absl::Status AddDomain(const whois::DomainRecord& r) override {
    Domain d;
    d.record = r;
    for (absl::string_view* f : {&d.record.name, &d.record.registry_id, &d.record.created,
                                 &d.record.updated, &d.record.expires, &d.record.dnssec,
                                 &d.record.registrant, &d.record.admin, &d.record.tech}) {
      *f = Keep(*f);
    }
    for (absl::string_view s : r.statuses) d.statuses.push_back(Keep(s));
    for (absl::string_view s : r.nameservers) d.nameservers.push_back(Keep(s));
    for (absl::string_view s : r.ds_data) d.ds.push_back(Keep(s));
    domains.push_back(std::move(d));
    return absl::OkStatus();
  }
  void SetLastUpdate(absl::string_view time) override { last_update = std::string(time); }
  bool has_last_update() const override { return !last_update.empty(); }
  void AddFooterLine(absl::string_view line) override { footer.emplace_back(line); }

  struct Domain {
    whois::DomainRecord record;
    std::vector<absl::string_view> statuses, nameservers, ds;
  };
  std::map<uint32_t, whois::RegistrarRecord> registrars;
  std::map<std::string, whois::ContactRecord> contacts;
  std::map<std::string, std::vector<std::string>> addresses;
  std::vector<Domain> domains;
  std::string last_update;
  std::vector<std::string> footer;

 private:
  absl::string_view Keep(absl::string_view text) { return store_.emplace_back(text); }
  std::deque<std::string> store_;
};

std::string Concat(const RdapAnswer& answer) {
  std::string out;
  for (int i = 0; i < answer.count; ++i) absl::StrAppend(&out, answer.pieces[i]);
  return out;
}

// Loads `text` both ways and compares every domain's answer; returns how many were compared.
size_t CompareAll(absl::string_view text) {
  RdapSnapshotBuilder builder("https://rdap.test/");
  EXPECT_TRUE(whois::LoadWhoisRecordsText(text, "db", builder).ok());
  const RdapRenderConfig config = builder.config();
  std::shared_ptr<const RdapSnapshot> snapshot = builder.Build();
  CollectingSink records;
  EXPECT_TRUE(whois::LoadWhoisRecordsText(text, "db", records).ok());
  EXPECT_EQ(config.last_update, records.last_update);
  EXPECT_EQ(config.terms, records.footer);
  size_t compared = 0;
  for (CollectingSink::Domain& d : records.domains) {
    d.record.statuses = d.statuses;
    d.record.nameservers = d.nameservers;
    d.record.ds_data = d.ds;
    std::vector<RdapContactRole> roles;
    const std::pair<const char*, absl::string_view> named[] = {{"registrant", d.record.registrant},
                                                               {"administrative", d.record.admin},
                                                               {"technical", d.record.tech}};
    for (const auto& [role, handle] : named) {
      if (!handle.empty())
        roles.push_back({role, &records.contacts.at(absl::AsciiStrToUpper(handle))});
    }
    std::vector<RdapHost> hosts;
    for (absl::string_view host : d.nameservers) {
      auto it = records.addresses.find(std::string(host));
      hosts.push_back({host, it == records.addresses.end()
                                 ? absl::Span<const std::string>()
                                 : absl::Span<const std::string>(it->second)});
    }
    const std::string fresh = RenderDomain(
        d.record, records.registrars.at(d.record.registrar_iana_id), roles, hosts, config);
    RdapAnswer answer;
    EXPECT_TRUE(snapshot->FindDomain(d.record.name, &answer)) << d.record.name;
    const std::string precompiled = Concat(answer);
    EXPECT_EQ(precompiled, fresh) << d.record.name;
    if (precompiled != fresh) return compared;  // one diff says it all
    // The ETag follows the bytes: equal answers of two loads have equal tags (checked by
    // the handler test); here: it is set.
    EXPECT_NE(answer.etag, 0u);
    ++compared;
  }
  return compared;
}

TEST(RdapSnapshotTest, PrecompiledEqualsRenderedEmbedded) {
  EXPECT_EQ(CompareAll(whois::EmbeddedWhoisDb()), 5u);
}

TEST(RdapSnapshotTest, PrecompiledEqualsRenderedGenerated) {
  const std::string path =
      ::testing::TempDir() + "/rdap_snapshot_test_" + std::to_string(getpid()) + ".db";
  auto generated = onepass::testing::RunCommand(
      {"python3", std::string(ONEPASS_SOURCE_DIR) + "/scripts/gen-whois-db.py", "--domains", "3000",
       "--seed", "11", "--output", path},
      absl::Seconds(120));
  ASSERT_TRUE(generated.ok()) << generated.status();
  ASSERT_EQ(generated->exit_code, 0) << generated->err;
  FILE* file = std::fopen(path.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  std::string text;
  char block[65536];
  for (size_t n; (n = std::fread(block, 1, sizeof(block), file)) > 0;) text.append(block, n);
  std::fclose(file);
  std::remove(path.c_str());
  EXPECT_EQ(CompareAll(text), 3000u);
}

TEST(RdapSnapshotTest, SearchIsBoundedAndOrdered) {
  RdapSnapshotBuilder builder("https://rdap.test/");
  ASSERT_TRUE(whois::LoadWhoisRecordsText(whois::EmbeddedWhoisDb(), "db", builder).ok());
  std::shared_ptr<const RdapSnapshot> snapshot = builder.Build();
  std::vector<uint32_t> ids;
  EXPECT_FALSE(snapshot->SearchDomains("EXAMPLE.", false, 10, &ids));
  EXPECT_EQ(ids.size(), 3u);  // .com, .net, .org
  EXPECT_TRUE(snapshot->SearchDomains("EXAMPLE.", false, 2, &ids));
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_FALSE(snapshot->SearchDomains("EXAMPLE.COM", true, 10, &ids));
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_FALSE(snapshot->SearchDomains("NOSUCH", false, 10, &ids));
  EXPECT_TRUE(ids.empty());
}

}  // namespace
}  // namespace onepass::rdap
