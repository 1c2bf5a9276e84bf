#include "server/tls/tls13/wire/server_messages.h"

#include <cstring>

#include "server/tls/tls13/wire/client_hello.h"
#include "server/tls/tls13/wire/handshake_type.h"

namespace onepass::tls::tls13 {
namespace {

constexpr uint16_t kLegacyVersion = 0x0303;  // §4.1.3: TLS 1.2, for middleboxes
constexpr uint16_t kTls13 = 0x0304;          // §4.2.1
constexpr size_t kMaxSessionId = 32;         // §4.1.2: legacy_session_id<0..32>
constexpr size_t kRandomSize = 32;

// RFC 8449 §4: below 64 the client must reject it; above 2^14 + 1 (a full TLS 1.3 record
// plus its content type) no TLS 1.3 peer may send it.
constexpr uint16_t kMinRecordSizeLimit = 64;
constexpr uint16_t kMaxRecordSizeLimit = (1 << 14) + 1;

// §4.4.3: the server's context string, without its terminating 0x00.
constexpr char kServerCertificateVerifyContext[] = "TLS 1.3, server CertificateVerify";
constexpr size_t kCertificateVerifyPadding = 64;

// An extension (§4.2): its type, then extension_data<0..2^16-1>. Returns where its length
// goes, for CloseVector(at, 2).
size_t OpenExtension(MessageWriter* out, uint16_t type) {
  out->U16(type);
  return out->OpenVector(2);
}

// The part ServerHello and HelloRetryRequest share (§4.1.3) up to the extensions.
void WriteServerHelloStart(absl::Span<const uint8_t> random,
                           absl::Span<const uint8_t> legacy_session_id, uint16_t cipher_suite,
                           MessageWriter* out) {
  out->U16(kLegacyVersion);
  out->Bytes(random);
  out->Vector8(legacy_session_id);
  out->U16(cipher_suite);
  out->U8(0);  // legacy_compression_method: null
}

void WriteSupportedVersions(MessageWriter* out) {
  const size_t at = OpenExtension(out, kExtSupportedVersions);
  out->U16(kTls13);  // §4.2.1: the ServerHello form is selected_version alone
  out->CloseVector(at, 2);
}

}  // namespace

absl::Span<const uint8_t> WriteServerHello(const ServerHelloFields& fields, MessageWriter* out) {
  const size_t start = out->BeginMessage(kServerHello);
  if (fields.random.size() != kRandomSize || fields.legacy_session_id.size() > kMaxSessionId ||
      fields.key_share.empty()) {
    out->Fail();
    return out->EndMessage(start);
  }
  WriteServerHelloStart(fields.random, fields.legacy_session_id, fields.cipher_suite, out);
  const size_t extensions = out->OpenVector(2);
  if (fields.has_psk) {
    const size_t at = OpenExtension(out, kExtPreSharedKey);
    out->U16(fields.psk_identity);  // §4.2.11: the ServerHello form is selected_identity
    out->CloseVector(at, 2);
  }
  const size_t key_share = OpenExtension(out, kExtKeyShare);
  out->U16(fields.key_share_group);  // §4.2.8: KeyShareServerHello, one KeyShareEntry
  out->Vector16(fields.key_share);
  out->CloseVector(key_share, 2);
  WriteSupportedVersions(out);
  out->CloseVector(extensions, 2);
  return out->EndMessage(start);
}

absl::Span<const uint8_t> WriteHelloRetryRequest(absl::Span<const uint8_t> legacy_session_id,
                                                 uint16_t cipher_suite, uint16_t selected_group,
                                                 absl::Span<const uint8_t> cookie,
                                                 MessageWriter* out) {
  const size_t start = out->BeginMessage(kServerHello);
  if (legacy_session_id.size() > kMaxSessionId) {
    out->Fail();
    return out->EndMessage(start);
  }
  WriteServerHelloStart(kHelloRetryRequestRandom, legacy_session_id, cipher_suite, out);
  const size_t extensions = out->OpenVector(2);
  const size_t key_share = OpenExtension(out, kExtKeyShare);
  out->U16(selected_group);  // §4.2.8: KeyShareHelloRetryRequest
  out->CloseVector(key_share, 2);
  if (!cookie.empty()) {
    const size_t at = OpenExtension(out, kExtCookie);
    out->Vector16(cookie);  // §4.2.2: opaque cookie<1..2^16-1>
    out->CloseVector(at, 2);
  }
  WriteSupportedVersions(out);
  out->CloseVector(extensions, 2);
  return out->EndMessage(start);
}

absl::Span<const uint8_t> WriteEncryptedExtensions(const EncryptedExtensionsFields& fields,
                                                   MessageWriter* out) {
  const size_t start = out->BeginMessage(kEncryptedExtensions);
  const bool limit_ok =
      fields.record_size_limit == 0 || (fields.record_size_limit >= kMinRecordSizeLimit &&
                                        fields.record_size_limit <= kMaxRecordSizeLimit);
  if (!limit_ok || fields.alpn_protocol.size() > 255) {
    out->Fail();
    return out->EndMessage(start);
  }
  const size_t extensions = out->OpenVector(2);
  if (!fields.supported_groups.empty()) {
    const size_t at = OpenExtension(out, kExtSupportedGroups);
    const size_t list = out->OpenVector(2);  // §4.2.7: NamedGroup named_group_list<2..2^16-1>
    for (uint16_t group : fields.supported_groups) out->U16(group);
    out->CloseVector(list, 2);
    out->CloseVector(at, 2);
  }
  if (fields.record_size_limit != 0) {
    const size_t at = OpenExtension(out, kExtRecordSizeLimit);
    out->U16(fields.record_size_limit);
    out->CloseVector(at, 2);
  }
  if (fields.server_name_acknowledged) {
    const size_t at = OpenExtension(out, kExtServerName);  // RFC 6066 §3: empty data
    out->CloseVector(at, 2);
  }
  if (!fields.alpn_protocol.empty()) {
    // RFC 7301 §3.1: a ProtocolNameList holding exactly the one selected name.
    const size_t at = OpenExtension(out, kExtAlpn);
    const size_t list = out->OpenVector(2);
    out->Vector8(fields.alpn_protocol);
    out->CloseVector(list, 2);
    out->CloseVector(at, 2);
  }
  out->CloseVector(extensions, 2);
  return out->EndMessage(start);
}

std::vector<uint8_t> EncodeCertificateMessage(absl::Span<const std::vector<uint8_t>> der_chain) {
  if (der_chain.empty()) return {};
  // header, certificate_request_context<0..2^8-1>, certificate_list<0..2^24-1>
  size_t size = 4 + 1 + 3;
  for (const std::vector<uint8_t>& der : der_chain) {
    if (der.empty()) return {};  // cert_data<1..2^24-1>
    size += 3 + der.size() + 2;  // cert_data, then extensions<0..2^16-1>
  }
  std::vector<uint8_t> message(size);
  MessageWriter out(absl::MakeSpan(message));
  const size_t start = out.BeginMessage(kCertificate);
  out.Vector8({});  // certificate_request_context: empty, this is no reply to a request
  const size_t list = out.OpenVector(3);
  for (const std::vector<uint8_t>& der : der_chain) {
    out.Vector24(der);
    out.U16(0);  // no per-certificate extensions (no OCSP, no SCT)
  }
  out.CloseVector(list, 3);
  if (out.EndMessage(start).empty()) return {};  // only past 2^24 - 1 bytes
  return message;
}

size_t ServerCertificateVerifyContent(absl::Span<const uint8_t> transcript_hash,
                                      absl::Span<uint8_t> out) {
  const size_t context = sizeof(kServerCertificateVerifyContext);  // with its 0x00
  const size_t size = kCertificateVerifyPadding + context + transcript_hash.size();
  if (out.size() < size) return 0;
  std::memset(out.data(), 0x20, kCertificateVerifyPadding);
  std::memcpy(out.data() + kCertificateVerifyPadding, kServerCertificateVerifyContext, context);
  if (!transcript_hash.empty()) {
    std::memcpy(out.data() + kCertificateVerifyPadding + context, transcript_hash.data(),
                transcript_hash.size());
  }
  return size;
}

absl::Span<const uint8_t> WriteCertificateVerify(uint16_t signature_scheme,
                                                 absl::Span<const uint8_t> signature,
                                                 MessageWriter* out) {
  const size_t start = out->BeginMessage(kCertificateVerify);
  out->U16(signature_scheme);
  out->Vector16(signature);
  return out->EndMessage(start);
}

absl::Span<const uint8_t> WriteFinished(absl::Span<const uint8_t> verify_data, MessageWriter* out) {
  const size_t start = out->BeginMessage(kFinished);
  if (verify_data.empty()) out->Fail();
  out->Bytes(verify_data);
  return out->EndMessage(start);
}

absl::Span<const uint8_t> WriteNewSessionTicket(uint32_t lifetime_seconds, uint32_t age_add,
                                                absl::Span<const uint8_t> nonce,
                                                absl::Span<const uint8_t> ticket,
                                                MessageWriter* out) {
  const size_t start = out->BeginMessage(kNewSessionTicket);
  if (lifetime_seconds > kMaxNewSessionTicketLifetime || ticket.empty()) out->Fail();
  out->U32(lifetime_seconds);
  out->U32(age_add);
  out->Vector8(nonce);    // ticket_nonce<0..255>: over 255 fails the writer
  out->Vector16(ticket);  // ticket<1..2^16-1>
  out->U16(0);            // extensions: no early_data (no 0-RTT offered)
  return out->EndMessage(start);
}

absl::Span<const uint8_t> WriteKeyUpdate(bool update_requested, MessageWriter* out) {
  const size_t start = out->BeginMessage(kKeyUpdate);
  out->U8(update_requested ? 1 : 0);
  return out->EndMessage(start);
}

}  // namespace onepass::tls::tls13
