#include "handlers/ocsp/get_request_decoder.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"

namespace onepass::ocsp {
namespace {

absl::optional<std::string> Decode(absl::string_view encoded, size_t capacity = 256) {
  std::vector<uint8_t> out(capacity);
  absl::optional<size_t> size = DecodeGetRequestPath(encoded, absl::MakeSpan(out));
  if (!size.has_value()) return absl::nullopt;
  return std::string(reinterpret_cast<const char*>(out.data()), *size);
}

TEST(GetRequestDecoderTest, Base64WithAndWithoutPercentEncoding) {
  // 0xfb 0xff 0xbf encodes as "+/+/": both characters that URLs may or may not escape.
  const std::string bytes("\xfb\xff\xbf\x01", 4);
  const std::string encoded = absl::Base64Escape(bytes);  // "+/+/AQ=="
  ASSERT_EQ(encoded, "+/+/AQ==");
  EXPECT_EQ(Decode(encoded), bytes);
  EXPECT_EQ(Decode("%2B%2F%2B%2FAQ%3D%3D"), bytes);
  EXPECT_EQ(Decode("%2b%2f%2b%2fAQ%3d%3d"), bytes);           // lowercase hex
  EXPECT_EQ(Decode("+%2F+/AQ%3D="), bytes);                   // mixed
  EXPECT_EQ(Decode("+/+/AQ"), bytes);                         // no padding
  EXPECT_EQ(Decode("-_-_AQ=="), bytes);                       // URL-safe alphabet
  EXPECT_EQ(Decode("%41%51%3D%3D"), std::string("\x01", 1));  // any %XX
  EXPECT_EQ(Decode(""), std::string());
}

TEST(GetRequestDecoderTest, RejectsInvalid) {
  for (absl::string_view bad : {"A", "AB=", "ABC==", "A===", "AQ==AQ==", "AQ=A", "AQ%3", "AQ%",
                                "AQ%zz", "AQ*=", "AQ ==", "AQ\n", "AR==", "ABC=", "%00AA"}) {
    EXPECT_FALSE(Decode(bad).has_value()) << bad;
  }
  EXPECT_TRUE(Decode("ABA=").has_value());  // canonical: unused bits zero
}

TEST(GetRequestDecoderTest, RespectsOutputCapacity) {
  EXPECT_EQ(Decode("AAAA", 3), std::string(3, '\0'));
  EXPECT_FALSE(Decode("AAAA", 2).has_value());
  EXPECT_FALSE(Decode("AAAAAA", 3).has_value());
}

TEST(GetRequestDecoderTest, RoundTripsRandomBytes) {
  std::mt19937 random(4);
  for (int i = 0; i < 500; ++i) {
    std::string bytes(random() % 100, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    const std::string encoded = absl::Base64Escape(bytes);
    EXPECT_EQ(Decode(encoded), bytes);
    const std::string url_encoded =
        absl::StrReplaceAll(encoded, {{"/", "%2F"}, {"+", "%2B"}, {"=", "%3D"}});
    EXPECT_EQ(Decode(url_encoded), bytes);
    EXPECT_EQ(Decode(absl::WebSafeBase64Escape(bytes)), bytes);
  }
}

}  // namespace
}  // namespace onepass::ocsp
