#include "handlers/dns/dns_name.h"

#include "handlers/dns/dns_wire.h"

namespace onepass::dns {

bool IsSubdomain(absl::string_view name, absl::string_view ancestor) {
  // Walk label boundaries of `name` so that "xexample.com" never matches "example.com".
  while (name.size() > ancestor.size()) name = Parent(name);
  return name == ancestor;
}

std::string CanonicalName(const uint8_t* wire, size_t size) {
  std::string out(size, '\0');
  for (size_t i = 0; i < size; ++i) out[i] = static_cast<char>(LowerAscii(wire[i]));
  // Label length octets are < 64 and so never in 'A'..'Z' (65..90): lowercasing all is safe.
  return out;
}

std::string NameToText(absl::string_view name) {
  if (IsRoot(name)) return ".";
  std::string text;
  while (!name.empty() && name[0] != 0) {
    const size_t len = static_cast<uint8_t>(name[0]);
    for (size_t i = 1; i <= len && i < name.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(name[i]);
      if (c == '.' || c == '\\') {
        text.push_back('\\');
        text.push_back(static_cast<char>(c));
      } else if (c <= ' ' || c >= 0x7f) {
        static constexpr char kDigits[] = "0123456789";
        text.push_back('\\');
        text.push_back(kDigits[c / 100]);
        text.push_back(kDigits[(c / 10) % 10]);
        text.push_back(kDigits[c % 10]);
      } else {
        text.push_back(static_cast<char>(c));
      }
    }
    text.push_back('.');
    name = name.substr(1 + len);
  }
  return text;
}

}  // namespace onepass::dns
