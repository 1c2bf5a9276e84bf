// PROXY protocol v2 (server/core/proxy_protocol.h): table-driven cases from HAProxy's
// proxy-protocol.txt §2.2, split invariance, and the trust policy.
#include "server/core/proxy_protocol.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onepass {
namespace {

using Bytes = std::vector<uint8_t>;
using Status = ProxyHeader::Status;

// A v2 header: `ver_cmd`, `family_transport`, then `block` (its length is written).
Bytes Header(uint8_t ver_cmd, uint8_t family_transport, const Bytes& block) {
  Bytes out(kProxyV2Signature.begin(), kProxyV2Signature.end());
  out.push_back(ver_cmd);
  out.push_back(family_transport);
  out.push_back(static_cast<uint8_t>(block.size() >> 8));
  out.push_back(static_cast<uint8_t>(block.size() & 0xFF));
  out.insert(out.end(), block.begin(), block.end());
  return out;
}

// TCP over IPv4 from 192.0.2.7:4242 to 198.51.100.1:53.
Bytes Tcp4() { return Header(0x21, 0x11, {192, 0, 2, 7, 198, 51, 100, 1, 0x10, 0x92, 0, 53}); }

Bytes Tcp6() {
  Bytes block(36, 0);
  block[0] = 0x20;
  block[1] = 0x01;
  block[2] = 0x0d;
  block[3] = 0xb8;
  block[15] = 9;
  block[32] = 0x01;
  block[33] = 0x02;
  return Header(0x21, 0x21, block);
}

ClientAddress V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  ClientAddress address{};
  address[10] = address[11] = 0xff;
  address[12] = a;
  address[13] = b;
  address[14] = c;
  address[15] = d;
  return address;
}

TEST(ProxyProtocolTest, Tcp4) {
  Bytes input = Tcp4();
  const size_t header_bytes = input.size();
  input.push_back(0x00);  // the request follows
  const ProxyHeader header = ParseProxyHeader(input);
  ASSERT_EQ(header.status, Status::kComplete);
  EXPECT_EQ(header.length, header_bytes);
  EXPECT_TRUE(header.has_client);
  EXPECT_EQ(header.client, V4(192, 0, 2, 7));
  EXPECT_EQ(header.client_port, 4242);
}

TEST(ProxyProtocolTest, Tcp6) {
  const ProxyHeader header = ParseProxyHeader(Tcp6());
  ASSERT_EQ(header.status, Status::kComplete);
  EXPECT_TRUE(header.has_client);
  EXPECT_EQ(header.client[0], 0x20);
  EXPECT_EQ(header.client[15], 9);
  EXPECT_EQ(header.client_port, 0x0102);
}

TEST(ProxyProtocolTest, Table) {
  struct Case {
    const char* name;
    Bytes input;
    Status status;
    bool has_client;
  };
  Bytes tlv = Tcp4();
  tlv[15] += 4;  // a TLV after the addresses (§2.2.1): skipped
  tlv.insert(tlv.end(), {0x04, 0x00, 0x01, 0x00});
  const Bytes tcp4 = Tcp4();
  const std::vector<Case> cases = {
      {"empty", {}, Status::kIncomplete, false},
      {"signature prefix", Bytes(kProxyV2Signature.begin(), kProxyV2Signature.begin() + 5),
       Status::kIncomplete, false},
      {"DNS query", {0x00, 0x1d, 0x12, 0x34}, Status::kNotProxy, false},
      {"v1 text", Bytes{'P', 'R', 'O', 'X', 'Y', ' '}, Status::kNotProxy, false},
      {"version 1 binary", Header(0x11, 0x11, Bytes(12)), Status::kInvalid, false},
      {"command 2", Header(0x22, 0x11, Bytes(12)), Status::kInvalid, false},
      {"family 4", Header(0x21, 0x41, Bytes(12)), Status::kInvalid, false},
      {"inet block too short", Header(0x21, 0x11, Bytes(8)), Status::kInvalid, false},
      {"inet6 block too short", Header(0x21, 0x21, Bytes(12)), Status::kInvalid, false},
      {"too long", Header(0x21, 0x11, Bytes(kMaxProxyHeaderBytes)), Status::kInvalid, false},
      {"local", Header(0x20, 0x00, {}), Status::kComplete, false},
      {"unspec", Header(0x21, 0x00, Bytes(3)), Status::kComplete, false},
      {"udp", Header(0x21, 0x12, Bytes(12)), Status::kComplete, false},
      {"with TLV", tlv, Status::kComplete, true},
      {"header only half", Bytes(tcp4.begin(), tcp4.begin() + 20), Status::kIncomplete, false},
  };
  for (const Case& c : cases) {
    const ProxyHeader header = ParseProxyHeader(c.input);
    EXPECT_EQ(header.status, c.status) << c.name;
    EXPECT_EQ(header.has_client, c.has_client) << c.name;
    if (header.status == Status::kComplete) {
      EXPECT_LE(header.length, c.input.size()) << c.name;
    }
  }
}

// Fed any prefix, the parser answers incomplete (or the final verdict, once the bytes that
// decide it are there) and never a different complete header: byte by byte and at every split
// it ends with the answer it gives the whole input.
TEST(ProxyProtocolTest, SplitInvariance) {
  Bytes with_request = Tcp4();
  with_request.insert(with_request.end(), {0x00, 0x1d, 0xab});
  for (const Bytes& input :
       {Tcp4(), Tcp6(), with_request, Header(0x20, 0x00, {}), Header(0x21, 0x41, Bytes(12))}) {
    const ProxyHeader whole = ParseProxyHeader(input);
    for (size_t split = 0; split <= input.size(); ++split) {
      const ProxyHeader part = ParseProxyHeader(absl::MakeConstSpan(input.data(), split));
      if (part.status == Status::kComplete) {
        EXPECT_EQ(part.length, whole.length) << split;
        EXPECT_EQ(part.client, whole.client) << split;
      } else if (part.status != Status::kIncomplete) {
        EXPECT_EQ(part.status, whole.status) << split;
      }
      // The two halves as received: the first alone, then both.
      if (part.status == Status::kIncomplete) {
        const ProxyHeader again = ParseProxyHeader(input);
        EXPECT_EQ(again.status, whole.status);
        EXPECT_EQ(again.length, whole.length);
      }
    }
  }
}

TEST(ProxyPolicyTest, Cidrs) {
  ProxyPolicy policy;
  ASSERT_TRUE(policy.Add("10.0.0.0/8").ok());
  ASSERT_TRUE(policy.Add("192.0.2.1").ok());
  ASSERT_TRUE(policy.Add("2001:db8::/32").ok());
  EXPECT_TRUE(policy.Trusts(V4(10, 200, 1, 1)));
  EXPECT_FALSE(policy.Trusts(V4(11, 0, 0, 1)));
  EXPECT_TRUE(policy.Trusts(V4(192, 0, 2, 1)));
  EXPECT_FALSE(policy.Trusts(V4(192, 0, 2, 2)));
  ClientAddress v6{};
  v6[0] = 0x20;
  v6[1] = 0x01;
  v6[2] = 0x0d;
  v6[3] = 0xb8;
  EXPECT_TRUE(policy.Trusts(v6));
  v6[3] = 0xb9;
  EXPECT_FALSE(policy.Trusts(v6));
  EXPECT_FALSE(policy.Add("10.0.0.0/33").ok());
  EXPECT_FALSE(policy.Add("::/129").ok());
  EXPECT_FALSE(policy.Add("nonsense").ok());
  EXPECT_FALSE(policy.Add("10.0.0.0/x").ok());
}

TEST(ProxyPolicyTest, Steps) {
  ProxyPolicy policy;
  ASSERT_TRUE(policy.Add("127.0.0.1/32").ok());
  const ClientAddress balancer = V4(127, 0, 0, 1);
  const ClientAddress stranger = V4(127, 0, 0, 2);
  Bytes input = Tcp4();
  const size_t header_bytes = input.size();
  input.push_back(0);
  ProxyStep step = TakeProxyHeader(input, balancer, policy, false);
  EXPECT_EQ(step.action, ProxyStep::Action::kDone);
  EXPECT_EQ(step.consumed, header_bytes);
  EXPECT_EQ(step.client, V4(192, 0, 2, 7));
  // The balancer without a header, a stranger with one: both refused.
  EXPECT_EQ(TakeProxyHeader(Bytes{0, 1, 2}, balancer, policy, false).action,
            ProxyStep::Action::kReject);
  EXPECT_EQ(TakeProxyHeader(input, stranger, policy, false).action, ProxyStep::Action::kReject);
  // A stranger's ordinary request goes through untouched.
  step = TakeProxyHeader(Bytes{0, 1, 2}, stranger, policy, false);
  EXPECT_EQ(step.action, ProxyStep::Action::kDone);
  EXPECT_EQ(step.consumed, 0u);
  // Half a header: read more, unless the balancer has closed.
  const Bytes half(input.begin(), input.begin() + 20);
  EXPECT_EQ(TakeProxyHeader(half, balancer, policy, false).action, ProxyStep::Action::kReadMore);
  EXPECT_EQ(TakeProxyHeader(half, balancer, policy, true).action, ProxyStep::Action::kReject);
}

}  // namespace
}  // namespace onepass
