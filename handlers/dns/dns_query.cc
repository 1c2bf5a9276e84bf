#include "handlers/dns/dns_query.h"

namespace onepass::dns {
namespace {

// NSD accepts at most this many records in an IXFR query's authority section.
constexpr int kMaxIxfrAuthorityRecords = 64;

class Reader {
 public:
  explicit Reader(absl::Span<const uint8_t> message) : message_(message) {}
  size_t pos() const { return pos_; }
  size_t remaining() const { return message_.size() - pos_; }
  const uint8_t* at() const { return message_.data() + pos_; }
  void Skip(size_t n) { pos_ += n; }

  // Skips a possibly compressed name (RFC 1035 §4.1.4); false if it runs off the end.
  bool SkipName() {
    while (true) {
      if (remaining() < 1) return false;
      const uint8_t len = *at();
      if ((len & 0xc0) == 0xc0) {
        if (remaining() < 2) return false;
        pos_ += 2;
        return true;
      }
      if ((len & 0xc0) != 0) return false;  // RFC 6891 §5: extended label types are gone
      if (remaining() < size_t{len} + 1) return false;
      pos_ += len + 1;
      if (len == 0) return true;
    }
  }

  // Skips a whole resource record; false if malformed. `type` gets its TYPE.
  bool SkipRecord(uint16_t& type) {
    if (!SkipName() || remaining() < 10) return false;
    type = ReadU16(at());
    const size_t rdlength = ReadU16(at() + 8);
    pos_ += 10;
    if (remaining() < rdlength) return false;
    pos_ += rdlength;
    return true;
  }

 private:
  absl::Span<const uint8_t> message_;
  size_t pos_ = kHeaderBytes;
};

// The question's name: uncompressed (NSD refuses pointers there too), at most 255 bytes.
bool ReadQuestion(Reader& reader, ParsedQuery& query) {
  size_t size = 0;
  while (true) {
    if (reader.remaining() < 1) return false;
    const uint8_t len = *reader.at();
    if ((len & 0xc0) != 0) return false;
    if (reader.remaining() < size_t{len} + 1 || size + len + 1 > kMaxNameBytes) return false;
    for (size_t i = 0; i <= len; ++i) {
      const uint8_t c = reader.at()[i];
      query.qname[size + i] = c;
      query.qname_lower[size + i] = i == 0 ? c : LowerAscii(c);
    }
    size += len + 1;
    reader.Skip(len + 1);
    if (len == 0) break;
  }
  if (reader.remaining() < 4) return false;
  query.qname_size = static_cast<uint8_t>(size);
  query.qtype = ReadU16(reader.at());
  query.qclass = ReadU16(reader.at() + 2);
  WriteU16(query.qname_lower + size, query.qtype);
  reader.Skip(4);
  return true;
}

// Reads an OPT record at the reader's position (RFC 6891 §6.1.2). Returns false, leaving the
// position alone, if the record there is not an OPT; `malformed` is set if it is an OPT whose
// options do not add up.
bool ReadOpt(Reader& reader, EdnsQuery& edns, bool& malformed) {
  if (reader.remaining() < 11) return false;
  const uint8_t* p = reader.at();
  if (p[0] != 0 || ReadU16(p + 1) != kTypeOpt) return false;
  const uint8_t version = p[6];
  const uint16_t flags = ReadU16(p + 7);
  size_t rdlength = ReadU16(p + 9);
  if (reader.remaining() - 11 < rdlength) {
    malformed = true;
    return true;
  }
  edns.present = true;
  edns.version = version;
  edns.do_bit = (flags & kEdnsFlagDo) != 0;
  const uint8_t* option = p + 11;
  while (rdlength >= 4) {
    const uint16_t code = ReadU16(option);
    const size_t length = ReadU16(option + 2);
    rdlength -= 4;
    if (length > rdlength) {
      malformed = true;
      return true;
    }
    if (code == kOptionTcpKeepalive) {
      // RFC 7828 §3.2.1: a client sends the option without a TIMEOUT value.
      if (length != 0) malformed = true;
      edns.keepalive = true;
    } else if (code == kOptionPadding) {
      // RFC 7830 §3: the octets SHOULD be 0x00, but any value MUST be accepted.
      edns.padding = true;
    }
    option += 4 + length;
    rdlength -= length;
  }
  if (rdlength != 0) malformed = true;
  reader.Skip(option - p);
  return true;
}

}  // namespace

void ParseQuery(absl::Span<const uint8_t> message, ParsedQuery& query) {
  query.edns = EdnsQuery{};
  query.qname_size = 0;
  query.id = ReadU16(message.data());
  query.flags = ReadU16(message.data() + 2);
  const uint16_t qdcount = ReadU16(message.data() + 4);
  const uint16_t ancount = ReadU16(message.data() + 6);
  const uint16_t nscount = ReadU16(message.data() + 8);
  uint16_t arcount = ReadU16(message.data() + 10);
  query.status = QueryStatus::kFormErr;
  if ((query.flags & kFlagQr) != 0) {
    query.status = QueryStatus::kDrop;
    return;
  }
  // The opcode first: another opcode may give the rest of the message another meaning.
  if (((query.flags & kOpcodeMask) >> kOpcodeShift) != kOpcodeQuery) {
    query.status = QueryStatus::kNotImp;
    return;
  }
  if ((query.flags & kRcodeMask) != 0 || qdcount != 1) return;
  Reader reader(message);
  if (!ReadQuestion(reader, query)) {
    query.qname_size = 0;
    return;
  }
  // A query carries no answer or authority records; only IXFR puts the client's SOA in the
  // authority section (RFC 1995 §3).
  if (ancount != 0 || (nscount != 0 && query.qtype != kTypeIxfr)) return;
  if (nscount > kMaxIxfrAuthorityRecords) return;
  uint16_t type = 0;
  for (int i = 0; i < nscount; ++i) {
    if (!reader.SkipRecord(type)) return;
  }
  // RFC 6891 §6.1.1: at most one OPT, in the additional section; RFC 8945 §5.1: a TSIG, if
  // any, comes last. NSD accepts the OPT only first: anything else left over is FORMERR.
  bool tsig = false;
  if (arcount > 0) {
    bool malformed = false;
    if (ReadOpt(reader, query.edns, malformed)) {
      if (malformed) {
        query.edns = EdnsQuery{};
        return;
      }
      --arcount;
    }
  }
  if (arcount > 0) {
    if (!reader.SkipRecord(type) || type != kTypeTsig) return;
    tsig = true;
    --arcount;
  }
  if (arcount > 0) return;
  // Bytes after the last record are ignored, as NSD does without STRICT_MESSAGE_PARSE.
  query.status = tsig ? QueryStatus::kNotAuth : QueryStatus::kOk;
}

}  // namespace onepass::dns
