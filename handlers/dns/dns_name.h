// Helpers on uncompressed wire-format names ("\3www\7example\3com\0").
//
// Inside the handler every name is kept in canonical form: uncompressed wire format, ASCII
// lowercase (RFC 4034 §6.2). A name's parent is then a suffix of the same bytes, so walking
// towards the root needs no copy: absl::string_view::substr(1 + label length).
#ifndef ONEPASS_HANDLERS_DNS_DNS_NAME_H_
#define ONEPASS_HANDLERS_DNS_DNS_NAME_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace onepass::dns {

// True for the root name.
inline bool IsRoot(absl::string_view name) { return name.size() == 1; }

// The parent of a non-root canonical name (drops the first label).
inline absl::string_view Parent(absl::string_view name) {
  return name.substr(1 + static_cast<uint8_t>(name[0]));
}

// True if `name` equals `ancestor` or lies below it (both canonical).
bool IsSubdomain(absl::string_view name, absl::string_view ancestor);

// Canonical (lowercase) copy of a wire name.
std::string CanonicalName(const uint8_t* wire, size_t size);

// "www.example.com." for messages and tests.
std::string NameToText(absl::string_view name);

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DNS_NAME_H_
