#include "server/tls/ticket_keys.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/data_file.h"

namespace onepass::tls {

namespace {

constexpr absl::string_view kHowToMake =
    "a ticket key file is 80-byte keys back to back, newest first; make one with "
    "`openssl rand 80 > FILE`";

}  // namespace

absl::StatusOr<std::vector<TicketKey>> ParseTicketKeys(absl::string_view bytes) {
  if (bytes.empty()) return absl::InvalidArgumentError(absl::StrCat("empty; ", kHowToMake));
  if (bytes.size() % TicketKey::kFileBytes != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        bytes.size(), " bytes, not a multiple of 80 (a text or PEM file?); ", kHowToMake));
  }
  const size_t count = bytes.size() / TicketKey::kFileBytes;
  if (count > kMaxTicketKeys) {
    return absl::InvalidArgumentError(absl::StrCat(count, " keys, more than ", kMaxTicketKeys,
                                                   "; keep the newest few (rotation needs 3)"));
  }
  std::vector<TicketKey> keys(count);
  for (size_t i = 0; i < count; ++i) {
    const char* entry = bytes.data() + i * TicketKey::kFileBytes;
    TicketKey& key = keys[i];
    std::memcpy(key.name.data(), entry, key.name.size());
    std::memcpy(key.hmac_key.data(), entry + 16, key.hmac_key.size());
    std::memcpy(key.aes_key.data(), entry + 48, key.aes_key.size());
    for (size_t j = 0; j < i; ++j) {
      // The name picks the key that decrypts a ticket: two keys with one name would make a
      // ticket of one undecryptable under the other (a file with a key pasted twice).
      if (keys[j].name == key.name) {
        return absl::InvalidArgumentError(absl::StrCat("keys ", j + 1, " and ", i + 1,
                                                       " have the same name (first 16 bytes)",
                                                       "; a key is in the file twice"));
      }
    }
  }
  return keys;
}

absl::StatusOr<std::vector<TicketKey>> LoadTicketKeys(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadDataFile(path, "--tls-ticket-keys");
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<std::vector<TicketKey>> keys = ParseTicketKeys(*bytes);
  if (!keys.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-ticket-keys ", path, ": ", keys.status().message()));
  }
  return keys;
}

const TicketKey& ProcessTicketKey() {
  static const TicketKey key = [] {
    TicketKey made;
    if (RAND_bytes(made.name.data(), made.name.size()) != 1 ||
        RAND_bytes(made.hmac_key.data(), made.hmac_key.size()) != 1 ||
        RAND_bytes(made.aes_key.data(), made.aes_key.size()) != 1) {
      // No randomness means no safe keys of any kind; nothing sensible to continue with.
      std::abort();
    }
    return made;
  }();
  return key;
}

}  // namespace onepass::tls
