#include "handlers/ocsp/cert_id.h"

#include <cstring>

namespace onepass::ocsp {
namespace {

bool AppendField(absl::Span<const uint8_t> field, size_t max_bytes, CertIdKeyBuffer& buffer,
                 size_t& size) {
  if (field.empty() || field.size() > max_bytes) return false;
  buffer[size++] = static_cast<char>(field.size());
  std::memcpy(buffer.data() + size, field.data(), field.size());
  size += field.size();
  return true;
}

}  // namespace

absl::string_view EncodeCertIdKey(const CertIdView& id, CertIdKeyBuffer& buffer) {
  static_assert(kMaxCertIdHashBytes < 256 && kMaxSerialNumberBytes < 256);
  size_t size = 0;
  if (!AppendField(id.hash_algorithm_oid, kMaxHashAlgorithmOidBytes, buffer, size) ||
      !AppendField(id.issuer_name_hash, kMaxCertIdHashBytes, buffer, size) ||
      !AppendField(id.issuer_key_hash, kMaxCertIdHashBytes, buffer, size) ||
      !AppendField(id.serial_number, kMaxSerialNumberBytes, buffer, size)) {
    return {};
  }
  return absl::string_view(buffer.data(), size);
}

}  // namespace onepass::ocsp
