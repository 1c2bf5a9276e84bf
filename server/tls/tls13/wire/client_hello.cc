#include "server/tls/tls13/wire/client_hello.h"

#include <algorithm>

namespace onepass::tls::tls13 {
namespace {

// A bounds-checked cursor over one vector of the message: every read either succeeds within
// the bytes it was given or marks the cursor failed, so a short or lying length never reads
// past the body.
class Cursor {
 public:
  explicit Cursor(absl::Span<const uint8_t> bytes) : bytes_(bytes) {}

  bool ok() const { return ok_; }
  bool empty() const { return pos_ == bytes_.size(); }
  size_t pos() const { return pos_; }

  uint8_t U8() {
    if (!Has(1)) return 0;
    return bytes_[pos_++];
  }
  uint16_t U16() {
    if (!Has(2)) return 0;
    const uint16_t v = static_cast<uint16_t>(bytes_[pos_] << 8 | bytes_[pos_ + 1]);
    pos_ += 2;
    return v;
  }
  uint32_t U32() {
    const uint32_t high = U16();
    return high << 16 | U16();
  }
  absl::Span<const uint8_t> Bytes(size_t n) {
    if (!Has(n)) return {};
    const absl::Span<const uint8_t> out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  // A vector with a `length_bytes`-byte length (RFC 8446 §3.4) whose length is within
  // [min, max].
  absl::Span<const uint8_t> Vector(int length_bytes, size_t min, size_t max) {
    const size_t n = length_bytes == 1 ? U8() : U16();
    if (!ok_ || n < min || n > max) {
      ok_ = false;
      return {};
    }
    return Bytes(n);
  }

 private:
  bool Has(size_t n) {
    if (!ok_ || bytes_.size() - pos_ < n) ok_ = false;
    return ok_;
  }

  absl::Span<const uint8_t> bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

ClientHelloResult Fail(AlertDescription alert, const char* reason) {
  return {.ok = false, .alert = alert, .reason = reason};
}

ClientHelloResult DecodeError(const char* reason) {
  return Fail(AlertDescription::kDecodeError, reason);
}

// A list of 16-bit values with a 2-byte length of [min, max] bytes, even.
bool ReadU16List(absl::Span<const uint8_t> data, size_t min, size_t max, U16List* out) {
  Cursor c(data);
  out->bytes = c.Vector(2, min, max);
  return c.ok() && c.empty() && out->bytes.size() % 2 == 0;
}

ClientHelloResult ReadKeyShare(absl::Span<const uint8_t> data, ClientHello* hello) {
  Cursor outer(data);
  Cursor c(outer.Vector(2, 0, 0xffff));
  if (!outer.ok() || !outer.empty()) return DecodeError("key_share: bad length");
  while (!c.empty()) {
    const uint16_t group = c.U16();
    const absl::Span<const uint8_t> key = c.Vector(2, 1, 0xffff);
    if (!c.ok()) return DecodeError("key_share: bad entry");
    // §4.2.8: each KeyShareEntry for a different group.
    for (size_t i = 0; i < hello->key_share_count; ++i) {
      if (hello->key_shares[i].group == group) {
        return Fail(AlertDescription::kIllegalParameter, "key_share: group twice");
      }
    }
    // §4.2.8.2 (secp256r1: uncompressed point, 65 bytes), RFC 7748 via §4.2.8.2 (X25519: 32).
    if ((group == kGroupX25519 && key.size() != 32) ||
        (group == kGroupSecp256r1 && (key.size() != 65 || key[0] != 4))) {
      return Fail(AlertDescription::kIllegalParameter, "key_share: bad key size");
    }
    if (hello->key_share_count == ClientHello::kMaxKeyShares) {
      return Fail(AlertDescription::kIllegalParameter, "key_share: too many entries");
    }
    hello->key_shares[hello->key_share_count++] = {.group = group, .key_exchange = key};
  }
  hello->has_key_share = true;
  return {.ok = true};
}

// §4.2.11: identities<7..2^16-1> then binders<33..2^16-1>, as many binders as identities.
ClientHelloResult ReadPreSharedKey(absl::Span<const uint8_t> data, size_t data_offset,
                                   ClientHello* hello) {
  Cursor outer(data);
  Cursor ids(outer.Vector(2, 7, 0xffff));
  const size_t binders_start = outer.pos();
  const absl::Span<const uint8_t> binders = outer.Vector(2, 33, 0xffff);
  if (!outer.ok() || !outer.empty()) return DecodeError("pre_shared_key: bad length");
  while (!ids.empty()) {
    const absl::Span<const uint8_t> identity = ids.Vector(2, 1, 0xffff);
    const uint32_t age = ids.U32();
    if (!ids.ok()) return DecodeError("pre_shared_key: bad identity");
    if (hello->psk_identity_count == ClientHello::kMaxPskIdentities) {
      return Fail(AlertDescription::kIllegalParameter, "pre_shared_key: too many identities");
    }
    hello->psk_identities[hello->psk_identity_count++] = {.identity = identity,
                                                          .obfuscated_ticket_age = age};
  }
  size_t binder_count = 0;
  for (Cursor b(binders); !b.empty(); ++binder_count) {
    b.Vector(1, 32, 255);
    if (!b.ok()) return DecodeError("pre_shared_key: bad binder");
  }
  if (binder_count != hello->psk_identity_count) {
    return Fail(AlertDescription::kIllegalParameter, "pre_shared_key: binders != identities");
  }
  hello->has_pre_shared_key = true;
  hello->binders = binders;
  hello->binders_offset = data_offset + binders_start;
  return {.ok = true};
}

// RFC 6066 §3: server_name_list<1..2^16-1> of {name_type, HostName<1..2^16-1>}. Read as
// strictly as OpenSSL's server reads it (one entry, a host_name of at most 255 bytes without
// a NUL), so that what OpenSSL refuses this engine refuses too (and hands to OpenSSL for its
// alert) rather than serving it.
ClientHelloResult ReadServerName(absl::Span<const uint8_t> data, ClientHello* hello) {
  Cursor outer(data);
  Cursor c(outer.Vector(2, 1, 0xffff));
  if (!outer.ok() || !outer.empty()) return DecodeError("server_name: bad length");
  const uint8_t type = c.U8();
  const absl::Span<const uint8_t> name = c.Vector(2, 1, 0xffff);
  if (!c.ok() || type != 0) return DecodeError("server_name: bad entry");
  if (!c.empty()) return DecodeError("server_name: more than one name");
  if (name.size() > 255 || std::find(name.begin(), name.end(), 0) != name.end()) {
    return Fail(AlertDescription::kUnrecognizedName, "server_name: not a host name");
  }
  hello->server_name = name;
  return {.ok = true};
}

// RFC 7301 §3.1: protocol_name_list<2..2^16-1> of ProtocolName<1..2^8-1>.
ClientHelloResult ReadAlpn(absl::Span<const uint8_t> data, ClientHello* hello) {
  Cursor outer(data);
  const absl::Span<const uint8_t> list = outer.Vector(2, 2, 0xffff);
  if (!outer.ok() || !outer.empty()) return DecodeError("alpn: bad length");
  for (Cursor c(list); !c.empty();) {
    c.Vector(1, 1, 255);
    if (!c.ok()) return DecodeError("alpn: empty or bad protocol name");
  }
  hello->has_alpn = true;
  hello->alpn_list = list;
  return {.ok = true};
}

// One extension of `type` with its `data`, which starts at `data_offset` in the body.
ClientHelloResult ReadExtension(uint16_t type, absl::Span<const uint8_t> data, size_t data_offset,
                                ClientHello* hello) {
  switch (type) {
    case kExtSupportedVersions:  // §4.2.1: versions<2..254>
      hello->has_supported_versions = true;
      {
        Cursor outer(data);  // a 1-byte length, unlike the other lists
        hello->supported_versions.bytes = outer.Vector(1, 2, 254);
        if (!outer.ok() || !outer.empty() || hello->supported_versions.bytes.size() % 2 != 0) {
          return DecodeError("supported_versions: bad length");
        }
      }
      return {.ok = true};
    case kExtSupportedGroups:  // §4.2.7: named_group_list<2..2^16-1>
      hello->has_supported_groups = true;
      if (!ReadU16List(data, 2, 0xffff, &hello->supported_groups)) {
        return DecodeError("supported_groups: bad length");
      }
      return {.ok = true};
    case kExtSignatureAlgorithms:  // §4.2.3: supported_signature_algorithms<2..2^16-2>
      hello->has_signature_algorithms = true;
      if (!ReadU16List(data, 2, 0xfffe, &hello->signature_algorithms)) {
        return DecodeError("signature_algorithms: bad length");
      }
      return {.ok = true};
    case kExtSignatureAlgorithmsCert: {
      U16List ignored;
      if (!ReadU16List(data, 2, 0xfffe, &ignored)) {
        return DecodeError("signature_algorithms_cert: bad length");
      }
      return {.ok = true};
    }
    case kExtKeyShare:
      return ReadKeyShare(data, hello);
    case kExtPskKeyExchangeModes: {  // §4.2.9: ke_modes<1..255>
      Cursor outer(data);
      const absl::Span<const uint8_t> modes = outer.Vector(1, 1, 255);
      if (!outer.ok() || !outer.empty()) return DecodeError("psk_key_exchange_modes: bad length");
      hello->has_psk_modes = true;
      for (uint8_t mode : modes) hello->psk_dhe_ke |= mode == 1;
      return {.ok = true};
    }
    case kExtPreSharedKey:
      return ReadPreSharedKey(data, data_offset, hello);
    case kExtServerName:
      return ReadServerName(data, hello);
    case kExtAlpn:
      return ReadAlpn(data, hello);
    case kExtRecordSizeLimit:  // RFC 8449 §4: a uint16; below 64 is illegal_parameter
      if (data.size() != 2) return DecodeError("record_size_limit: bad length");
      hello->has_record_size_limit = true;
      hello->record_size_limit = static_cast<uint16_t>(data[0] << 8 | data[1]);
      if (hello->record_size_limit < 64) {
        return Fail(AlertDescription::kIllegalParameter, "record_size_limit below 64");
      }
      return {.ok = true};
    case kExtEarlyData:  // §4.2.10: empty in a ClientHello
      if (!data.empty()) return DecodeError("early_data: not empty");
      hello->early_data = true;
      return {.ok = true};
    case kExtCookie: {  // §4.2.2: cookie<1..2^16-1>
      Cursor outer(data);
      hello->cookie = outer.Vector(2, 1, 0xffff);
      if (!outer.ok() || !outer.empty()) return DecodeError("cookie: bad length");
      hello->has_cookie = true;
      return {.ok = true};
    }
    // Extensions this engine does not use but OpenSSL's server reads: held to the syntax
    // OpenSSL holds them to, so that a hello it refuses is not served here.
    case kExtStatusRequest:  // RFC 6066 §8: ocsp (1) with two empty lists is all clients send
      if (data.size() != 5 || data[0] != 1 || data[1] != 0 || data[2] != 0 || data[3] != 0 ||
          data[4] != 0) {
        return DecodeError("status_request: not the plain OCSP request");
      }
      return {.ok = true};
    case kExtEcPointFormats: {  // RFC 8422 §5.1.2: ec_point_format_list<1..2^8-1>
      Cursor outer(data);
      outer.Vector(1, 1, 255);
      if (!outer.ok() || !outer.empty()) return DecodeError("ec_point_formats: bad length");
      return {.ok = true};
    }
    case kExtEncryptThenMac:        // RFC 7366 §2: empty
    case kExtExtendedMasterSecret:  // RFC 7627 §5.1: empty
    case kExtPostHandshakeAuth:     // RFC 8446 §4.2.6: empty
      if (!data.empty()) return DecodeError("an extension that must be empty is not");
      return {.ok = true};
    case kExtRenegotiationInfo:  // RFC 5746 §3.2: an initial handshake's is the empty byte list
      if (data.size() != 1 || data[0] != 0) {
        return Fail(AlertDescription::kHandshakeFailure, "renegotiation_info not empty");
      }
      return {.ok = true};
    case kExtMaxFragmentLength:       // RFC 6066 §4: rare, and RFC 8449 replaces it
    case kExtUseSrtp:                 // RFC 5764: DTLS only; OpenSSL refuses it in TLS
    case kExtCertificateAuthorities:  // §4.2.4: distinguished names this engine does not read
      return Fail(AlertDescription::kIllegalParameter,
                  "an extension this engine leaves to OpenSSL");
    default:  // padding and everything unknown: ignored (§4.2: "MUST ignore unrecognized")
      return {.ok = true};
  }
}

// The rules that need the whole extension block.
ClientHelloResult CheckAcrossExtensions(const ClientHello& hello) {
  // §4.2.9: a client offering a PSK MUST send psk_key_exchange_modes.
  if (hello.has_pre_shared_key && !hello.has_psk_modes) {
    return Fail(AlertDescription::kMissingExtension, "pre_shared_key without psk modes");
  }
  // §4.2.8: each KeyShareEntry's group MUST be in supported_groups.
  if (hello.has_key_share) {
    if (!hello.has_supported_groups) {
      return Fail(AlertDescription::kMissingExtension, "key_share without supported_groups");
    }
    for (size_t i = 0; i < hello.key_share_count; ++i) {
      if (!hello.supported_groups.Contains(hello.key_shares[i].group)) {
        return Fail(AlertDescription::kIllegalParameter, "key_share group not in supported");
      }
    }
  }
  return {.ok = true};
}

}  // namespace

bool U16List::Contains(uint16_t value) const {
  for (size_t i = 0; i < size(); ++i) {
    if (at(i) == value) return true;
  }
  return false;
}

ClientHelloResult ParseClientHello(absl::Span<const uint8_t> body, ClientHello* hello) {
  *hello = ClientHello();
  Cursor c(body);
  hello->legacy_version = c.U16();
  hello->random = c.Bytes(32);
  hello->legacy_session_id = c.Vector(1, 0, 32);
  hello->cipher_suites.bytes = c.Vector(2, 2, 0xfffe);  // §4.1.2: cipher_suites<2..2^16-2>
  const absl::Span<const uint8_t> compression = c.Vector(1, 1, 255);
  if (!c.ok() || hello->cipher_suites.bytes.size() % 2 != 0) {
    return DecodeError("bad fixed fields");
  }
  const bool null_compression_only = compression.size() == 1 && compression[0] == 0;
  if (c.empty()) {  // no extensions: a TLS 1.2-or-older hello, for the fallback to judge
    return {.ok = true};
  }
  const size_t extensions_start = c.pos() + 2;
  Cursor extensions(c.Vector(2, 0, 0xffff));
  if (!c.ok() || !c.empty()) return DecodeError("bad extensions length");
  // §4.2: no two extensions of one type. 64 distinct ones is more than any client sends.
  constexpr size_t kMaxExtensions = 64;
  uint16_t seen[kMaxExtensions];
  size_t seen_count = 0;
  while (!extensions.empty()) {
    if (hello->has_pre_shared_key) {  // §4.2.11: pre_shared_key MUST be the last extension
      return Fail(AlertDescription::kIllegalParameter, "pre_shared_key not last");
    }
    const uint16_t type = extensions.U16();
    const size_t data_offset = extensions_start + extensions.pos() + 2;
    const absl::Span<const uint8_t> data = extensions.Vector(2, 0, 0xffff);
    if (!extensions.ok()) return DecodeError("bad extension length");
    for (size_t i = 0; i < seen_count; ++i) {
      if (seen[i] == type) return Fail(AlertDescription::kIllegalParameter, "extension twice");
    }
    if (seen_count == kMaxExtensions) return DecodeError("too many extensions");
    seen[seen_count++] = type;
    const ClientHelloResult read = ReadExtension(type, data, data_offset, hello);
    if (!read.ok) return read;
  }
  // §4.1.2: a TLS 1.3 ClientHello's legacy_compression_methods is exactly the null method.
  if (hello->supported_versions.Contains(0x0304) && !null_compression_only) {
    return Fail(AlertDescription::kIllegalParameter, "TLS 1.3 with compression");
  }
  return CheckAcrossExtensions(*hello);
}

}  // namespace onepass::tls::tls13
