// The client's post-ClientHello messages: RFC 8448 §3's client Finished read back, and each
// length and value that earns decode_error or illegal_parameter.
#include "server/tls/tls13/wire/client_messages.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/server/tls/tls13/wire/rfc8448_messages.h"
#include "tests/unit/server/tls/tls13/wire/wire_test_util.h"

namespace onepass::tls::tls13 {
namespace {

using testing::ByteVec;

TEST(ClientMessages, FinishedIsRfc8448Section3) {
  const ByteVec message = testing::Hex(testing::kRfc8448ClientFinished);
  const absl::Span<const uint8_t> body = absl::MakeConstSpan(message).subspan(4);
  absl::Span<const uint8_t> verify_data;
  ASSERT_TRUE(ParseFinished(body, 32, &verify_data));
  EXPECT_EQ(verify_data.data(), body.data());  // a view, not a copy
  EXPECT_EQ(verify_data.size(), 32u);
}

TEST(ClientMessages, FinishedOfAnotherLengthIsRefused) {
  const ByteVec verify_data(48, 0x42);
  const absl::Span<const uint8_t> all = verify_data;
  absl::Span<const uint8_t> out;
  EXPECT_TRUE(ParseFinished(all, 48, &out));  // SHA-384 suites
  for (size_t size : {0, 1, 31, 33, 47}) {
    SCOPED_TRACE(size);
    out = {};
    EXPECT_FALSE(ParseFinished(all.subspan(0, size), 48, &out));
    EXPECT_FALSE(ParseFinished(all.subspan(0, size), 32, &out));
    EXPECT_TRUE(out.empty());
  }
  EXPECT_FALSE(ParseFinished({}, 0, &out));  // no suite has an empty hash
}

TEST(ClientMessages, KeyUpdate) {
  const uint8_t not_requested[] = {0};
  const uint8_t requested[] = {1};
  KeyUpdateResult result = ParseKeyUpdate(not_requested);
  EXPECT_TRUE(result.ok);
  EXPECT_FALSE(result.update_requested);
  result = ParseKeyUpdate(requested);
  EXPECT_TRUE(result.ok);
  EXPECT_TRUE(result.update_requested);
}

TEST(ClientMessages, KeyUpdateErrors) {
  struct Case {
    ByteVec body;
    AlertDescription alert;
  };
  const Case cases[] = {
      {{}, AlertDescription::kDecodeError},          {{0, 0}, AlertDescription::kDecodeError},
      {{1, 0}, AlertDescription::kDecodeError},      {{2}, AlertDescription::kIllegalParameter},
      {{0xff}, AlertDescription::kIllegalParameter},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body.size());
    const KeyUpdateResult result = ParseKeyUpdate(c.body);
    EXPECT_FALSE(result.ok);
    EXPECT_FALSE(result.update_requested);
    EXPECT_EQ(result.alert, c.alert);
  }
}

}  // namespace
}  // namespace onepass::tls::tls13
