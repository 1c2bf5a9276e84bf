#include "handlers/ocsp/ocsp_request_reader.h"

#include <openssl/ocsp.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "handlers/ocsp/der_reader.h"
#include "tests/unit/handlers/ocsp/ocsp_test_pki.h"

namespace onepass::ocsp {
namespace {

using testing::CertRef;
using testing::TestPki;

absl::Span<const uint8_t> AsBytes(absl::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
std::string AsString(absl::Span<const uint8_t> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// A DER element with `tag` and `content` (definite, minimal length).
std::string Tlv(uint8_t tag, absl::string_view content) {
  std::string out(1, static_cast<char>(tag));
  const size_t n = content.size();
  if (n < 0x80) {
    out.push_back(static_cast<char>(n));
  } else if (n < 0x100) {
    out += {'\x81', static_cast<char>(n)};
  } else {
    out += {'\x82', static_cast<char>(n >> 8), static_cast<char>(n & 0xff)};
  }
  return absl::StrCat(out, content);
}

const std::string kSha1Oid = "\x2b\x0e\x03\x02\x1a";  // 1.3.14.3.2.26
std::string CertIdDer(absl::string_view serial = "\x10\x00", bool null_parameters = true) {
  return Tlv(0x30, absl::StrCat(Tlv(0x30, absl::StrCat(Tlv(0x06, kSha1Oid),
                                                       null_parameters ? Tlv(0x05, "") : "")),
                                Tlv(0x04, std::string(20, 'n')), Tlv(0x04, std::string(20, 'k')),
                                Tlv(0x02, serial)));
}
std::string RequestDer(absl::string_view tbs_prefix, absl::string_view request_list,
                       absl::string_view tbs_suffix = "", absl::string_view signature = "") {
  return Tlv(0x30,
             absl::StrCat(Tlv(0x30, absl::StrCat(tbs_prefix, Tlv(0x30, request_list), tbs_suffix)),
                          signature));
}

bool Reads(absl::string_view der) {
  OcspRequestCertIds ids;
  return ReadOcspRequestCertIds(AsBytes(der), ids);
}

// The CertIDs of `der` as OpenSSL reads them, in the same form as the walker's views.
std::vector<std::string> OpenSslCertIds(const std::string& der) {
  std::vector<std::string> out;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  OCSP_REQUEST* request = d2i_OCSP_REQUEST(nullptr, &p, static_cast<long>(der.size()));
  if (request == nullptr) return out;
  for (int i = 0; i < OCSP_request_onereq_count(request); ++i) {
    OCSP_CERTID* id = OCSP_onereq_get0_id(OCSP_request_onereq_get0(request, i));
    ASN1_OCTET_STRING* name_hash = nullptr;
    ASN1_OCTET_STRING* key_hash = nullptr;
    ASN1_OBJECT* algorithm = nullptr;
    ASN1_INTEGER* serial = nullptr;
    OCSP_id_get0_info(&name_hash, &algorithm, &key_hash, &serial, id);
    unsigned char* serial_der = nullptr;
    const int serial_size = i2d_ASN1_INTEGER(serial, &serial_der);
    out.push_back(absl::StrCat(
        AsString({OBJ_get0_data(algorithm), OBJ_length(algorithm)}), "|",
        AsString({ASN1_STRING_get0_data(name_hash), size_t(ASN1_STRING_length(name_hash))}), "|",
        AsString({ASN1_STRING_get0_data(key_hash), size_t(ASN1_STRING_length(key_hash))}), "|",
        // skip the INTEGER's tag and (short) length
        std::string(reinterpret_cast<char*>(serial_der) + 2, serial_size - 2)));
    OPENSSL_free(serial_der);
  }
  OCSP_REQUEST_free(request);
  return out;
}

std::string Joined(const CertIdView& id) {
  return absl::StrCat(AsString(id.hash_algorithm_oid), "|", AsString(id.issuer_name_hash), "|",
                      AsString(id.issuer_key_hash), "|", AsString(id.serial_number));
}

TEST(OcspRequestReaderTest, AgreesWithOpenSsl) {
  std::unique_ptr<TestPki> pki = TestPki::Create();
  const std::vector<std::vector<CertRef>> cases = {
      {{0x1000}},
      {{1}},
      {{128}},  // needs a leading 0x00
      {{0x7fffffffffffffff}},
      {{-5}},  // negative serials exist in the wild
      {{0x1000, {}, EVP_sha256()}},
      {{1}, {2}, {3, {}, EVP_sha512()}},
  };
  for (const auto& certs : cases) {
    for (bool nonce : {false, true}) {
      const std::string der = pki->MakeRequest(certs, nonce);
      OcspRequestCertIds ids;
      ASSERT_TRUE(ReadOcspRequestCertIds(AsBytes(der), ids));
      const std::vector<std::string> expected = OpenSslCertIds(der);
      ASSERT_EQ(ids.count, expected.size());
      ASSERT_EQ(ids.request_count, expected.size());
      for (size_t i = 0; i < ids.count; ++i) EXPECT_EQ(Joined(ids.ids[i]), expected[i]);
    }
  }
}

TEST(OcspRequestReaderTest, KeepsTheFirstCertIdsOfLongLists) {
  std::unique_ptr<TestPki> pki = TestPki::Create();
  std::vector<CertRef> certs;
  for (int i = 1; i <= 12; ++i) certs.push_back({i});
  const std::string der = pki->MakeRequest(certs);
  OcspRequestCertIds ids;
  ASSERT_TRUE(ReadOcspRequestCertIds(AsBytes(der), ids));
  EXPECT_EQ(ids.count, kMaxCertIdsPerRequest);
  EXPECT_EQ(ids.request_count, 12u);
  EXPECT_EQ(AsString(ids.ids[7].serial_number), "\x08");
}

TEST(OcspRequestReaderTest, EveryTruncationAndExtensionIsRejected) {
  std::unique_ptr<TestPki> pki = TestPki::Create();
  const std::string der = pki->MakeRequest({{0x1000}}, /*nonce=*/true);
  ASSERT_TRUE(Reads(der));
  for (size_t k = 0; k < der.size(); ++k) EXPECT_FALSE(Reads(der.substr(0, k))) << k;
  EXPECT_FALSE(Reads(der + '\0'));
}

TEST(OcspRequestReaderTest, HandBuiltStructures) {
  const std::string cert_id = CertIdDer();
  const std::string request = Tlv(0x30, cert_id);
  EXPECT_TRUE(Reads(RequestDer("", request)));
  // AlgorithmIdentifier parameters may be absent.
  EXPECT_TRUE(Reads(RequestDer("", Tlv(0x30, CertIdDer("\x10\x00", false)))));
  // version [0] EXPLICIT INTEGER 0 (v1) encoded although DEFAULT: accepted; v2: rejected.
  EXPECT_TRUE(Reads(RequestDer(Tlv(0xA0, Tlv(0x02, std::string(1, '\0'))), request)));
  EXPECT_FALSE(Reads(RequestDer(Tlv(0xA0, Tlv(0x02, "\x01")), request)));
  // requestorName [1], requestExtensions [2], singleRequestExtensions [0], signature [0].
  const std::string name = Tlv(0xA1, Tlv(0xA4, Tlv(0x30, "")));
  const std::string extensions = Tlv(0xA2, Tlv(0x30, Tlv(0x30, Tlv(0x06, "\x2b\x06"))));
  EXPECT_TRUE(Reads(RequestDer(name, request, extensions, Tlv(0xA0, Tlv(0x30, "")))));
  EXPECT_TRUE(Reads(RequestDer("", Tlv(0x30, cert_id + Tlv(0xA0, Tlv(0x30, ""))))));
  // Out of order, wrong tags, empty list, extra elements.
  EXPECT_FALSE(Reads(RequestDer("", "")));
  EXPECT_FALSE(Reads(RequestDer(extensions, request)));
  EXPECT_FALSE(Reads(RequestDer("", request, name)));
  EXPECT_FALSE(Reads(RequestDer("", Tlv(0x31, cert_id))));
  EXPECT_FALSE(Reads(RequestDer("", Tlv(0x30, cert_id + cert_id))));
  EXPECT_FALSE(Reads(RequestDer("", Tlv(0x30, cert_id + Tlv(0xA1, Tlv(0x30, ""))))));
  EXPECT_FALSE(Reads(RequestDer("", request, "", Tlv(0xA1, Tlv(0x30, "")))));
  // Serial numbers: non-minimal, empty, over the bound.
  EXPECT_FALSE(Reads(RequestDer("", Tlv(0x30, CertIdDer(std::string("\x00\x01", 2))))));
  EXPECT_FALSE(Reads(RequestDer("", Tlv(0x30, CertIdDer("\xff\x80")))));
  EXPECT_FALSE(Reads(RequestDer("", Tlv(0x30, CertIdDer("")))));
  EXPECT_FALSE(Reads(RequestDer("", Tlv(0x30, CertIdDer(std::string(65, '\x01'))))));
  EXPECT_TRUE(Reads(RequestDer("", Tlv(0x30, CertIdDer(std::string(64, '\x01'))))));
}

TEST(OcspRequestReaderTest, NonDerLengthsAreRejected) {
  const std::string good = RequestDer("", Tlv(0x30, CertIdDer()));
  ASSERT_TRUE(Reads(good));
  // Long form for a short length.
  std::string long_form = good;
  long_form.replace(0, 2, std::string("\x30\x81", 2) + good[1]);
  EXPECT_FALSE(Reads(long_form));
  // Indefinite length.
  EXPECT_FALSE(Reads(std::string("\x30\x80", 2) + good.substr(2) + std::string(2, '\0')));
  // High tag number form.
  EXPECT_FALSE(Reads(std::string("\x1f\x01\x00", 3)));
}

TEST(DerReaderTest, Primitives) {
  EXPECT_TRUE(IsMinimalDerInteger(AsBytes(std::string(1, '\0'))));
  EXPECT_TRUE(IsMinimalDerInteger(AsBytes(std::string("\x00\x80", 2))));
  EXPECT_FALSE(IsMinimalDerInteger(AsBytes(std::string("\x00\x7f", 2))));
  EXPECT_TRUE(IsMinimalDerInteger(AsBytes("\xff\x7f")));
  EXPECT_FALSE(IsMinimalDerInteger(AsBytes("\xff\xff")));
  EXPECT_FALSE(IsMinimalDerInteger({}));
  EXPECT_TRUE(IsWellFormedDerOid(AsBytes(kSha1Oid)));
  EXPECT_TRUE(IsWellFormedDerOid(AsBytes("\x60\x86\x48\x01\x65\x03\x04\x02\x01")));  // SHA-256
  EXPECT_FALSE(IsWellFormedDerOid(AsBytes("\x2b\x86")));                             // unterminated
  EXPECT_FALSE(IsWellFormedDerOid(AsBytes("\x2b\x80\x01")));                         // non-minimal
  EXPECT_FALSE(IsWellFormedDerOid({}));

  const std::string two = Tlv(0x04, std::string(200, 'x')) + Tlv(0x05, "");
  absl::Span<const uint8_t> input = AsBytes(two);
  DerElement element;
  ASSERT_TRUE(ReadDerElement(input, element));
  EXPECT_EQ(element.tag, 0x04);
  EXPECT_EQ(element.content.size(), 200u);
  ASSERT_TRUE(ReadDerElement(input, element));
  EXPECT_EQ(element.tag, 0x05);
  EXPECT_TRUE(input.empty());
  EXPECT_FALSE(ReadDerElement(input, element));
}

// Random corruptions never crash; whenever both readers accept, they agree.
TEST(OcspRequestReaderTest, CorruptionsAgreeWithOpenSslWhenBothAccept) {
  std::unique_ptr<TestPki> pki = TestPki::Create();
  const std::string der = pki->MakeRequest({{0x1000}, {77}}, /*nonce=*/true);
  std::mt19937 random(7);
  int both_accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string mutated = der;
    const int flips = 1 + static_cast<int>(random() % 3);
    for (int f = 0; f < flips; ++f) {
      mutated[random() % mutated.size()] = static_cast<char>(random());
    }
    OcspRequestCertIds ids;
    if (!ReadOcspRequestCertIds(AsBytes(mutated), ids)) continue;
    const std::vector<std::string> expected = OpenSslCertIds(mutated);
    if (expected.empty()) continue;
    ++both_accepted;
    ASSERT_EQ(ids.request_count, expected.size());
    for (size_t k = 0; k < ids.count; ++k) ASSERT_EQ(Joined(ids.ids[k]), expected[k]);
  }
  EXPECT_GT(both_accepted, 0);
}

}  // namespace
}  // namespace onepass::ocsp
