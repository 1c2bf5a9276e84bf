// Sends DNS messages over TCP (RFC 1035 §4.2.2 framing) for the end-to-end tests, with a
// deadline on every step.
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_DNS_TCP_QUERY_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_DNS_TCP_QUERY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace onepass::dns::testing {

// Opens a connection, sends every message (framed) in one write, half-closes, and returns
// the messages read until the server closes, without their length prefixes.
absl::StatusOr<std::vector<std::vector<uint8_t>>> ExchangeTcp(
    int port, const std::vector<std::vector<uint8_t>>& messages,
    absl::Duration timeout = absl::Seconds(5));

// Splits length-prefixed messages; fails on a partial one.
absl::StatusOr<std::vector<std::vector<uint8_t>>> SplitFrames(const std::string& bytes);

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_DNS_TCP_QUERY_H_
