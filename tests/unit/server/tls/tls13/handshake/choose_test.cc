// ChooseForFirstHello and ChooseForSecondHello: each decision from a ClientHello read by the
// real parser, in the server's order of suites (ChaCha20 first only for a client that puts it
// first), the client's order of key shares, and what is handed to OpenSSL or refused.
#include "server/tls/tls13/handshake/choose.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onepass::tls::tls13 {
namespace {

using Bytes = std::vector<uint8_t>;

void Put16(Bytes* b, size_t v) {
  b->push_back(static_cast<uint8_t>(v >> 8));
  b->push_back(static_cast<uint8_t>(v));
}
Bytes Vec(int length_bytes, const Bytes& inner) {
  Bytes b;
  if (length_bytes == 1) {
    b.push_back(static_cast<uint8_t>(inner.size()));
  } else {
    Put16(&b, inner.size());
  }
  b.insert(b.end(), inner.begin(), inner.end());
  return b;
}
void AddExtension(Bytes* all, uint16_t type, const Bytes& data) {
  Put16(all, type);
  const Bytes v = Vec(2, data);
  all->insert(all->end(), v.begin(), v.end());
}

struct Hello {
  std::vector<uint16_t> suites = {0x1301, 0x1302, 0x1303};
  std::vector<uint16_t> versions = {0x0304, 0x0303};
  std::vector<uint16_t> groups = {kGroupX25519, kGroupSecp256r1};
  std::vector<uint16_t> shares = {kGroupX25519};
  std::vector<uint16_t> schemes = {0x0403, 0x0804};
  std::vector<std::string> alpn = {"dot"};
  bool early_data = false;
  bool psk = false;
  // psk_key_exchange_modes (§4.2.9), sent with psk: 1 psk_dhe_ke, 0 psk_ke.
  Bytes psk_modes = {1};

  Bytes Body() const {
    Bytes b;
    Put16(&b, 0x0303);
    b.insert(b.end(), 32, 0x22);
    b.push_back(0);  // no session id
    Bytes s;
    for (uint16_t v : suites) Put16(&s, v);
    Bytes v = Vec(2, s);
    b.insert(b.end(), v.begin(), v.end());
    b.insert(b.end(), {1, 0});
    Bytes ext;
    Bytes list;
    for (uint16_t x : versions) Put16(&list, x);
    AddExtension(&ext, kExtSupportedVersions, Vec(1, list));
    list.clear();
    for (uint16_t x : groups) Put16(&list, x);
    AddExtension(&ext, kExtSupportedGroups, Vec(2, list));
    list.clear();
    for (uint16_t x : schemes) Put16(&list, x);
    AddExtension(&ext, kExtSignatureAlgorithms, Vec(2, list));
    Bytes entries;
    for (uint16_t g : shares) {
      Put16(&entries, g);
      Bytes key(g == kGroupSecp256r1 ? 65 : g == kGroupX25519 ? 32 : 56, 0x42);
      key[0] = 4;
      const Bytes k = Vec(2, key);
      entries.insert(entries.end(), k.begin(), k.end());
    }
    AddExtension(&ext, kExtKeyShare, Vec(2, entries));
    if (!alpn.empty()) {
      Bytes names;
      for (const std::string& a : alpn) {
        const Bytes n = Vec(1, Bytes(a.begin(), a.end()));
        names.insert(names.end(), n.begin(), n.end());
      }
      AddExtension(&ext, kExtAlpn, Vec(2, names));
    }
    if (early_data) AddExtension(&ext, kExtEarlyData, {});
    if (psk) {
      AddExtension(&ext, kExtPskKeyExchangeModes, Vec(1, psk_modes));
      Bytes identity = Vec(2, Bytes(16, 0x33));
      identity.insert(identity.end(), {0, 0, 0, 1});
      Bytes data = Vec(2, identity);
      const Bytes binders = Vec(2, Vec(1, Bytes(32, 0x44)));
      data.insert(data.end(), binders.begin(), binders.end());
      AddExtension(&ext, kExtPreSharedKey, data);
    }
    v = Vec(2, ext);
    b.insert(b.end(), v.begin(), v.end());
    return b;
  }
};

ServerPolicy Policy(const char* suites =
                        "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                        "TLS_CHACHA20_POLY1305_SHA256") {
  auto policy = MakeServerPolicy(suites, {"dot"}, 1, false);
  EXPECT_TRUE(policy.ok()) << policy.status();
  return *policy;
}

// The Choice's ALPN is a view into the hello: the last body stays alive until the next call.
Choice First(const Hello& hello, const ServerPolicy& policy = Policy()) {
  static Bytes body;
  body = hello.Body();
  ClientHello parsed;
  const ClientHelloResult result = ParseClientHello(body, &parsed);
  EXPECT_TRUE(result.ok) << result.reason;
  return ChooseForFirstHello(parsed, policy);
}

TEST(ChooseTest, ServesTheFirstSuiteOfOursAndTheClientsShare) {
  const Choice choice = First(Hello());
  ASSERT_EQ(choice.action, Choice::Action::kServe);
  EXPECT_EQ(choice.suite, 0x1301);
  EXPECT_EQ(choice.group, kGroupX25519);
  EXPECT_EQ(std::string(choice.alpn.begin(), choice.alpn.end()), "dot");
  EXPECT_FALSE(choice.offers_resumption);
}

TEST(ChooseTest, ServerOrderButChaChaForAClientThatPutsItFirst) {
  Hello hello;
  hello.suites = {0x1302, 0x1301};
  EXPECT_EQ(First(hello).suite, 0x1301);
  hello.suites = {0x1303, 0x1301};
  EXPECT_EQ(First(hello).suite, 0x1303);
  EXPECT_EQ(First(hello, Policy("TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256")).suite, 0x1301);
}

TEST(ChooseTest, TheClientsFirstShareOnAGroupOfOurs) {
  Hello hello;
  hello.groups = {0x0018, kGroupSecp256r1, kGroupX25519};
  hello.shares = {0x0018, kGroupSecp256r1, kGroupX25519};
  const Choice choice = First(hello);
  ASSERT_EQ(choice.action, Choice::Action::kServe);
  EXPECT_EQ(choice.group, kGroupSecp256r1);
  EXPECT_EQ(choice.key_share_index, 1u);
}

TEST(ChooseTest, RetriesForASupportedGroupWithoutShare) {
  Hello hello;
  hello.groups = {0x0018, kGroupSecp256r1};
  hello.shares = {0x0018};
  Choice choice = First(hello);
  ASSERT_EQ(choice.action, Choice::Action::kRetry);
  EXPECT_EQ(choice.group, kGroupSecp256r1);
  hello.groups = {0x0018, kGroupSecp256r1, kGroupX25519};
  choice = First(hello);
  ASSERT_EQ(choice.action, Choice::Action::kRetry);
  EXPECT_EQ(choice.group, kGroupX25519);  // ours is the order of a retry
}

TEST(ChooseTest, HandsToOpenSslWhatItDoesNotServe) {
  struct Case {
    const char* name;
    Hello hello;
    Fallback fallback;
  };
  std::vector<Case> cases;
  Hello h;
  h.versions = {0x0303};
  cases.push_back({"TLS 1.2 only", h, Fallback::k_not_tls13});
  h = Hello();
  h.suites = {0x1304};
  cases.push_back({"CCM only", h, Fallback::k_suite});
  h = Hello();
  h.schemes = {0x0804};
  cases.push_back({"RSA-PSS only", h, Fallback::k_signature});
  h = Hello();
  h.alpn = {"h2"};
  cases.push_back({"ALPN h2", h, Fallback::k_alpn});
  h = Hello();
  h.groups = {0x0018};
  h.shares = {0x0018};
  cases.push_back({"P-384 only", h, Fallback::k_group});
  h = Hello();
  h.early_data = true;
  cases.push_back({"early data", h, Fallback::k_early_data});
  for (const Case& c : cases) {
    const Choice choice = First(c.hello);
    EXPECT_EQ(choice.action, Choice::Action::kFallback) << c.name;
    EXPECT_EQ(choice.fallback, c.fallback) << c.name << ": " << FallbackName(choice.fallback);
  }
  // A suite OpenSSL has and we do not, first in the server's order.
  Hello ccm;
  ccm.suites = {0x1304, 0x1301};
  EXPECT_EQ(First(ccm, Policy("TLS_AES_128_CCM_SHA256:TLS_AES_128_GCM_SHA256")).fallback,
            Fallback::k_suite);
}

TEST(ChooseTest, NoAlpnOfferedIsServedWithout) {
  Hello hello;
  hello.alpn.clear();
  const Choice choice = First(hello);
  EXPECT_EQ(choice.action, Choice::Action::kServe);
  EXPECT_TRUE(choice.alpn.empty());
}

TEST(ChooseTest, ResumptionOfferedWithPskDheKe) {
  Hello hello;
  hello.psk = true;
  EXPECT_TRUE(First(hello).offers_resumption);
}

// §4.2.9: psk_ke alone is resumption without (EC)DHE, which this engine does not do: the
// ticket is not tried (a full handshake); with psk_dhe_ke among the modes it is.
TEST(ChooseTest, ResumptionNotOfferedWithPskKeOnly) {
  Hello hello;
  hello.psk = true;
  hello.psk_modes = {0};
  Choice choice = First(hello);
  EXPECT_EQ(choice.action, Choice::Action::kServe);
  EXPECT_FALSE(choice.offers_resumption);
  hello.psk_modes = {0, 1};
  choice = First(hello);
  EXPECT_EQ(choice.action, Choice::Action::kServe);
  EXPECT_TRUE(choice.offers_resumption);
}

TEST(ChooseTest, SecondHelloMustMatchTheRetry) {
  const ServerPolicy policy = Policy();
  Bytes body;
  auto second = [&](const Hello& hello, uint16_t suite, uint16_t group) {
    body = hello.Body();
    ClientHello parsed;
    EXPECT_TRUE(ParseClientHello(body, &parsed).ok);
    return ChooseForSecondHello(parsed, policy, suite, group);
  };
  Hello hello;
  hello.shares = {kGroupSecp256r1};
  Choice choice = second(hello, 0x1301, kGroupSecp256r1);
  ASSERT_EQ(choice.action, Choice::Action::kServe);
  EXPECT_EQ(choice.group, kGroupSecp256r1);
  choice = second(hello, 0x1301, kGroupX25519);  // not the share we asked for
  EXPECT_EQ(choice.action, Choice::Action::kRefuse);
  EXPECT_EQ(choice.alert, AlertDescription::kIllegalParameter);
  choice = second(hello, 0x1302, kGroupSecp256r1);  // the suite would change
  EXPECT_EQ(choice.alert, AlertDescription::kIllegalParameter);
  hello.shares = {kGroupSecp256r1, kGroupX25519};  // two shares: §4.2.8 says exactly one
  EXPECT_EQ(second(hello, 0x1301, kGroupSecp256r1).action, Choice::Action::kRefuse);
  hello.shares = {kGroupSecp256r1};
  hello.alpn = {"h2"};
  EXPECT_EQ(second(hello, 0x1301, kGroupSecp256r1).alert, AlertDescription::kNoApplicationProtocol);
}

TEST(ChooseTest, PolicyRefusesUnknownSuiteNames) {
  EXPECT_FALSE(MakeServerPolicy("TLS_AES_128_GCM_SHA256:TLS_NOPE", {}, 1, false).ok());
  EXPECT_FALSE(MakeServerPolicy("", {}, 1, false).ok());
}

}  // namespace
}  // namespace onepass::tls::tls13
