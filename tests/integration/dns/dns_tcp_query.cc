#include "tests/integration/dns/dns_tcp_query.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/support/tcp_client.h"

namespace onepass::dns::testing {

absl::StatusOr<std::vector<std::vector<uint8_t>>> SplitFrames(const std::string& bytes) {
  std::vector<std::vector<uint8_t>> messages;
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < 2) return absl::DataLossError("partial length prefix");
    const size_t length =
        (static_cast<uint8_t>(bytes[pos]) << 8) | static_cast<uint8_t>(bytes[pos + 1]);
    if (bytes.size() - pos - 2 < length) {
      return absl::DataLossError(absl::StrCat("partial message: ", length, " announced, ",
                                              bytes.size() - pos - 2, " received"));
    }
    messages.emplace_back(bytes.begin() + pos + 2, bytes.begin() + pos + 2 + length);
    pos += 2 + length;
  }
  return messages;
}

absl::StatusOr<std::vector<std::vector<uint8_t>>> ExchangeTcp(
    int port, const std::vector<std::vector<uint8_t>>& messages, absl::Duration timeout) {
  absl::StatusOr<onepass::testing::TcpClient> client =
      onepass::testing::TcpClient::Connect("127.0.0.1", port, timeout);
  if (!client.ok()) return client.status();
  std::string wire;
  for (const auto& message : messages) {
    wire.push_back(static_cast<char>(message.size() >> 8));
    wire.push_back(static_cast<char>(message.size()));
    wire.append(message.begin(), message.end());
  }
  if (absl::Status s = client->Send(wire, timeout); !s.ok()) return s;
  client->ShutdownWrite();
  absl::StatusOr<std::string> reply = client->ReadUntilClose(timeout);
  if (!reply.ok()) return reply.status();
  return SplitFrames(*reply);
}

}  // namespace onepass::dns::testing
