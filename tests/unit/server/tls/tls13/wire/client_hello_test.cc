// ParseClientHello: a well-formed hello read field by field, and each §4.1.2/§4.2 rule as a
// table of hand-built hellos with the alert each earns; every truncation fails cleanly.
#include "server/tls/tls13/wire/client_hello.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/server/tls/tls13/crypto/hex.h"
#include "tests/unit/server/tls/tls13/crypto/rfc8448_simple.h"

namespace onepass::tls::tls13 {
namespace {

using Bytes = std::vector<uint8_t>;

void Put16(Bytes* b, size_t v) {
  b->push_back(static_cast<uint8_t>(v >> 8));
  b->push_back(static_cast<uint8_t>(v));
}
Bytes Vec16(const Bytes& inner) {
  Bytes b;
  Put16(&b, inner.size());
  b.insert(b.end(), inner.begin(), inner.end());
  return b;
}
Bytes Vec8(const Bytes& inner) {
  Bytes b{static_cast<uint8_t>(inner.size())};
  b.insert(b.end(), inner.begin(), inner.end());
  return b;
}
Bytes Extension(uint16_t type, const Bytes& data) {
  Bytes b;
  Put16(&b, type);
  Bytes v = Vec16(data);
  b.insert(b.end(), v.begin(), v.end());
  return b;
}
Bytes X25519Share(uint16_t group = kGroupX25519, size_t size = 32) {
  Bytes entry;
  Put16(&entry, group);
  Bytes key(size, 0x42);
  if (group == kGroupSecp256r1 && size > 0) key[0] = 4;
  Bytes v = Vec16(key);
  entry.insert(entry.end(), v.begin(), v.end());
  return entry;
}

// A TLS 1.3 ClientHello as a client sends it; `extensions` replaces the default set when given.
struct HelloBuilder {
  Bytes session_id = Bytes(32, 0x11);
  Bytes suites = {0x13, 0x01, 0x13, 0x02};
  Bytes compression = {0};
  std::vector<Bytes> extensions = {
      Extension(kExtSupportedVersions, Vec8({0x03, 0x04})),
      Extension(kExtSupportedGroups, Vec16({0x00, 0x1d, 0x00, 0x17})),
      Extension(kExtSignatureAlgorithms, Vec16({0x04, 0x03})),
      Extension(kExtKeyShare, Vec16(X25519Share())),
      Extension(kExtServerName, Vec16([] {
                  Bytes e{0};
                  Bytes n = Vec16({'d', 'n', 's'});
                  e.insert(e.end(), n.begin(), n.end());
                  return e;
                }())),
      Extension(kExtAlpn, Vec16(Vec8({'d', 'o', 't'}))),
  };
  Bytes Build() const {
    Bytes b;
    Put16(&b, 0x0303);
    b.insert(b.end(), 32, 0x22);
    Bytes v = Vec8(session_id);
    b.insert(b.end(), v.begin(), v.end());
    v = Vec16(suites);
    b.insert(b.end(), v.begin(), v.end());
    v = Vec8(compression);
    b.insert(b.end(), v.begin(), v.end());
    Bytes all;
    for (const Bytes& e : extensions) all.insert(all.end(), e.begin(), e.end());
    v = Vec16(all);
    b.insert(b.end(), v.begin(), v.end());
    return b;
  }
};

Bytes PskExtension(size_t identities, size_t binders) {
  Bytes ids, bs;
  for (size_t i = 0; i < identities; ++i) {
    Bytes id = Vec16(Bytes(16, 0x33));
    ids.insert(ids.end(), id.begin(), id.end());
    ids.insert(ids.end(), {0, 0, 0, 7});
  }
  for (size_t i = 0; i < binders; ++i) {
    Bytes b = Vec8(Bytes(32, 0x44));
    bs.insert(bs.end(), b.begin(), b.end());
  }
  Bytes data = Vec16(ids);
  Bytes v = Vec16(bs);
  data.insert(data.end(), v.begin(), v.end());
  return Extension(kExtPreSharedKey, data);
}

TEST(ClientHelloTest, ReadsEveryField) {
  HelloBuilder builder;
  builder.extensions.push_back(Extension(kExtPskKeyExchangeModes, Vec8({1})));
  builder.extensions.push_back(PskExtension(1, 1));
  const Bytes body = builder.Build();
  ClientHello hello;
  const ClientHelloResult result = ParseClientHello(body, &hello);
  ASSERT_TRUE(result.ok) << result.reason;
  EXPECT_EQ(hello.legacy_version, 0x0303);
  EXPECT_EQ(hello.legacy_session_id.size(), 32u);
  ASSERT_EQ(hello.cipher_suites.size(), 2u);
  EXPECT_EQ(hello.cipher_suites.at(1), 0x1302);
  EXPECT_TRUE(hello.supported_versions.Contains(0x0304));
  EXPECT_TRUE(hello.supported_groups.Contains(kGroupSecp256r1));
  EXPECT_TRUE(hello.signature_algorithms.Contains(0x0403));
  ASSERT_EQ(hello.key_share_count, 1u);
  EXPECT_EQ(hello.key_shares[0].group, kGroupX25519);
  EXPECT_EQ(hello.key_shares[0].key_exchange.size(), 32u);
  EXPECT_EQ(std::string(hello.server_name.begin(), hello.server_name.end()), "dns");
  EXPECT_TRUE(hello.has_alpn);
  EXPECT_EQ(hello.alpn_list.size(), 4u);
  EXPECT_TRUE(hello.psk_dhe_ke);
  ASSERT_EQ(hello.psk_identity_count, 1u);
  EXPECT_EQ(hello.psk_identities[0].obfuscated_ticket_age, 7u);
  EXPECT_EQ(hello.psk_identities[0].identity.size(), 16u);
  // §4.2.11.2: the binders list is the body's last 35 bytes (2-byte length, 1 + 32).
  EXPECT_EQ(hello.binders_offset, body.size() - 35);
  EXPECT_EQ(hello.binders.size(), 33u);
}

// RFC 8448 §3's ClientHello (an NSS client): every field the engine decides on.
TEST(ClientHelloTest, ReadsRfc8448ClientHello) {
  const Bytes message = testing::Hex(testing::kRfc8448ClientHello);
  ASSERT_EQ(message[0], 1);  // client_hello, then a 3-byte length
  const Bytes body(message.begin() + 4, message.end());
  ClientHello hello;
  const ClientHelloResult result = ParseClientHello(body, &hello);
  ASSERT_TRUE(result.ok) << result.reason;
  EXPECT_EQ(hello.legacy_session_id.size(), 0u);
  ASSERT_EQ(hello.cipher_suites.size(), 3u);
  EXPECT_EQ(hello.cipher_suites.at(0), 0x1301);
  EXPECT_EQ(hello.cipher_suites.at(1), 0x1303);
  EXPECT_TRUE(hello.supported_versions.Contains(0x0304));
  EXPECT_EQ(hello.supported_groups.size(), 9u);
  ASSERT_EQ(hello.key_share_count, 1u);
  EXPECT_EQ(hello.key_shares[0].group, kGroupX25519);
  EXPECT_EQ(hello.key_shares[0].key_exchange[0], 0x99);
  EXPECT_TRUE(hello.signature_algorithms.Contains(0x0403));
  EXPECT_EQ(std::string(hello.server_name.begin(), hello.server_name.end()), "server");
  EXPECT_TRUE(hello.psk_dhe_ke);
  EXPECT_FALSE(hello.has_pre_shared_key);
  EXPECT_TRUE(hello.has_record_size_limit);
  EXPECT_EQ(hello.record_size_limit, 0x4001);
  EXPECT_FALSE(hello.has_alpn);
}

struct RuleCase {
  const char* name;
  HelloBuilder hello;
  AlertDescription alert;
};

std::vector<RuleCase> RuleCases() {
  std::vector<RuleCase> cases;
  auto with = [](auto change) {
    HelloBuilder b;
    change(&b);
    return b;
  };
  cases.push_back({"duplicate extension",
                   with([](HelloBuilder* b) { b->extensions.push_back(b->extensions[1]); }),
                   AlertDescription::kIllegalParameter});
  cases.push_back({"pre_shared_key not last", with([](HelloBuilder* b) {
                     b->extensions.push_back(Extension(kExtPskKeyExchangeModes, Vec8({1})));
                     b->extensions.insert(b->extensions.begin(), PskExtension(1, 1));
                   }),
                   AlertDescription::kIllegalParameter});
  cases.push_back({"psk without modes",
                   with([](HelloBuilder* b) { b->extensions.push_back(PskExtension(1, 1)); }),
                   AlertDescription::kMissingExtension});
  cases.push_back({"binders != identities", with([](HelloBuilder* b) {
                     b->extensions.push_back(Extension(kExtPskKeyExchangeModes, Vec8({1})));
                     b->extensions.push_back(PskExtension(2, 1));
                   }),
                   AlertDescription::kIllegalParameter});
  cases.push_back({"x25519 share of 31 bytes", with([](HelloBuilder* b) {
                     b->extensions[3] =
                         Extension(kExtKeyShare, Vec16(X25519Share(kGroupX25519, 31)));
                   }),
                   AlertDescription::kIllegalParameter});
  cases.push_back({"p256 share not 65 bytes", with([](HelloBuilder* b) {
                     b->extensions[3] =
                         Extension(kExtKeyShare, Vec16(X25519Share(kGroupSecp256r1, 64)));
                   }),
                   AlertDescription::kIllegalParameter});
  cases.push_back({"one group shared twice", with([](HelloBuilder* b) {
                     Bytes two = X25519Share();
                     Bytes again = X25519Share();
                     two.insert(two.end(), again.begin(), again.end());
                     b->extensions[3] = Extension(kExtKeyShare, Vec16(two));
                   }),
                   AlertDescription::kIllegalParameter});
  cases.push_back({"share for a group not supported", with([](HelloBuilder* b) {
                     b->extensions[1] = Extension(kExtSupportedGroups, Vec16({0x00, 0x17}));
                   }),
                   AlertDescription::kIllegalParameter});
  cases.push_back({"TLS 1.3 with compression", with([](HelloBuilder* b) {
                     b->compression = {1, 0};
                   }),
                   AlertDescription::kIllegalParameter});
  cases.push_back({"record_size_limit 63", with([](HelloBuilder* b) {
                     b->extensions.push_back(Extension(kExtRecordSizeLimit, {0, 63}));
                   }),
                   AlertDescription::kIllegalParameter});
  cases.push_back({"empty ALPN name", with([](HelloBuilder* b) {
                     b->extensions[5] = Extension(kExtAlpn, Vec16({0, 3, 'd', 'o', 't'}));
                   }),
                   AlertDescription::kDecodeError});
  cases.push_back({"session id of 33 bytes",
                   with([](HelloBuilder* b) { b->session_id = Bytes(33, 1); }),
                   AlertDescription::kDecodeError});
  cases.push_back({"odd cipher_suites", with([](HelloBuilder* b) {
                     b->suites = {0x13, 0x01, 0x13};
                   }),
                   AlertDescription::kDecodeError});
  cases.push_back({"early_data with a body", with([](HelloBuilder* b) {
                     b->extensions.push_back(Extension(kExtEarlyData, {0}));
                   }),
                   AlertDescription::kDecodeError});
  // Extensions the engine does not use, held to OpenSSL's syntax (a hello OpenSSL refuses is
  // not served).
  cases.push_back({"server_name with a NUL", with([](HelloBuilder* b) {
                     Bytes e{0};
                     Bytes n = Vec16({'d', 0, 's'});
                     e.insert(e.end(), n.begin(), n.end());
                     b->extensions[4] = Extension(kExtServerName, Vec16(e));
                   }),
                   AlertDescription::kUnrecognizedName});
  cases.push_back({"server_name with two names", with([](HelloBuilder* b) {
                     Bytes e{0};
                     Bytes n = Vec16({'a'});
                     e.insert(e.end(), n.begin(), n.end());
                     e.push_back(0);
                     e.insert(e.end(), n.begin(), n.end());
                     b->extensions[4] = Extension(kExtServerName, Vec16(e));
                   }),
                   AlertDescription::kDecodeError});
  cases.push_back({"status_request not plain OCSP", with([](HelloBuilder* b) {
                     b->extensions.push_back(Extension(kExtStatusRequest, {1, 0, 1, 0, 0}));
                   }),
                   AlertDescription::kDecodeError});
  cases.push_back({"post_handshake_auth not empty", with([](HelloBuilder* b) {
                     b->extensions.push_back(Extension(kExtPostHandshakeAuth, {0}));
                   }),
                   AlertDescription::kDecodeError});
  cases.push_back({"renegotiation_info of a renegotiation", with([](HelloBuilder* b) {
                     b->extensions.push_back(Extension(kExtRenegotiationInfo, {1, 0}));
                   }),
                   AlertDescription::kHandshakeFailure});
  return cases;
}

TEST(ClientHelloTest, EachRuleEarnsItsAlert) {
  for (const RuleCase& c : RuleCases()) {
    ClientHello hello;
    const ClientHelloResult result = ParseClientHello(c.hello.Build(), &hello);
    EXPECT_FALSE(result.ok) << c.name;
    EXPECT_EQ(result.alert, c.alert) << c.name << ": " << result.reason;
  }
}

TEST(ClientHelloTest, EveryTruncationFailsWithDecodeError) {
  HelloBuilder builder;
  builder.extensions.push_back(Extension(kExtPskKeyExchangeModes, Vec8({1})));
  builder.extensions.push_back(PskExtension(1, 1));
  const Bytes body = builder.Build();
  // Cut anywhere but after the compression methods (a hello with no extensions is well formed)
  // or at the end.
  const size_t no_extensions = 2 + 32 + 1 + 32 + 2 + 4 + 1 + 1;
  for (size_t n = 0; n < body.size(); ++n) {
    if (n == no_extensions) continue;
    ClientHello hello;
    const Bytes cut(body.begin(), body.begin() + n);
    const ClientHelloResult result = ParseClientHello(cut, &hello);
    EXPECT_FALSE(result.ok) << n;
    EXPECT_EQ(result.alert, AlertDescription::kDecodeError) << n << ": " << result.reason;
  }
}

}  // namespace
}  // namespace onepass::tls::tls13
