#include "tests/unit/handlers/dns/dns_test_util.h"

#include <ldns/ldns.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "handlers/dns/default_zone.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_responder.h"
#include "handlers/dns/zone_loader.h"
#include "handlers/dns/zone_text.h"
#include "handlers/dns/zone_text_dnssec.h"

namespace onepass::dns::testing {
namespace {

struct PktDeleter {
  void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};

std::string RrText(const ldns_rr* rr, bool question) {
  char* text = question ? ldns_rr2str(rr) : ldns_rr2str(rr);
  std::string s = text != nullptr ? text : "?";
  free(text);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  // ldns separates fields with tabs; one space is easier to read in failures.
  std::replace(s.begin(), s.end(), '\t', ' ');
  return absl::AsciiStrToLower(s);
}

std::vector<std::string> Section(const ldns_rr_list* list, bool question) {
  std::vector<std::string> out;
  for (size_t i = 0; list != nullptr && i < ldns_rr_list_rr_count(list); ++i) {
    out.push_back(RrText(ldns_rr_list_rr(list, i), question));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<uint8_t> MakeQuery(const std::string& name, const std::string& type,
                               const QueryOptions& options) {
  ldns_rdf* owner = ldns_dname_new_frm_str(name.c_str());
  ldns_pkt* pkt =
      ldns_pkt_query_new(owner, ldns_get_rr_type_by_name(type.c_str()),
                         static_cast<ldns_rr_class>(options.qclass), options.rd ? LDNS_RD : 0);
  std::unique_ptr<ldns_pkt, PktDeleter> holder(pkt);
  ldns_pkt_set_id(pkt, options.id);
  ldns_pkt_set_cd(pkt, options.cd);
  if (options.edns) {
    ldns_pkt_set_edns_udp_size(pkt, 4096);
    ldns_pkt_set_edns_version(pkt, options.edns_version);
    if (options.do_bit) ldns_pkt_set_edns_do(pkt, true);
    std::vector<uint8_t> option_bytes;
    if (options.keepalive) {
      // RFC 7828 §3.1: code 11, length 0 in a query.
      option_bytes.insert(option_bytes.end(), {0, 11, 0, 0});
    }
    if (options.padding >= 0) {
      // RFC 7830 §3: code 12, then the padding.
      option_bytes.insert(option_bytes.end(), {0, 12, static_cast<uint8_t>(options.padding >> 8),
                                               static_cast<uint8_t>(options.padding)});
      option_bytes.insert(option_bytes.end(), static_cast<size_t>(options.padding),
                          options.padding_byte);
    }
    if (!option_bytes.empty()) {
      ldns_rdf* data =
          ldns_rdf_new_frm_data(LDNS_RDF_TYPE_UNKNOWN, option_bytes.size(), option_bytes.data());
      ldns_pkt_set_edns_data(pkt, data);
    }
    // ldns adds the OPT only if something in it differs from the defaults.
    ldns_pkt_set_edns_udp_size(pkt, 4096);
  }
  uint8_t* wire = nullptr;
  size_t size = 0;
  if (ldns_pkt2wire(&wire, pkt, &size) != LDNS_STATUS_OK) std::abort();
  std::vector<uint8_t> bytes(wire, wire + size);
  free(wire);
  return bytes;
}

std::vector<uint8_t> Framed(const std::vector<uint8_t>& message) {
  std::vector<uint8_t> out(2 + message.size());
  out[0] = static_cast<uint8_t>(message.size() >> 8);
  out[1] = static_cast<uint8_t>(message.size());
  std::copy(message.begin(), message.end(), out.begin() + 2);
  return out;
}

absl::StatusOr<DecodedResponse> DecodeResponse(const uint8_t* data, size_t size) {
  ldns_pkt* raw = nullptr;
  const ldns_status status = ldns_wire2pkt(&raw, data, size);
  if (status != LDNS_STATUS_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("ldns cannot parse the response: ", ldns_get_errorstr_by_id(status)));
  }
  std::unique_ptr<ldns_pkt, PktDeleter> pkt(raw);
  DecodedResponse r;
  r.id = ldns_pkt_id(raw);
  r.qr = ldns_pkt_qr(raw);
  r.aa = ldns_pkt_aa(raw);
  r.tc = ldns_pkt_tc(raw);
  r.rd = ldns_pkt_rd(raw);
  r.ra = ldns_pkt_ra(raw);
  r.ad = ldns_pkt_ad(raw);
  r.cd = ldns_pkt_cd(raw);
  r.opcode = ldns_pkt_get_opcode(raw);
  r.rcode = ldns_pkt_get_rcode(raw) | (ldns_pkt_edns_extended_rcode(raw) << 4);
  r.question = Section(ldns_pkt_question(raw), true);
  r.answer = Section(ldns_pkt_answer(raw), false);
  r.authority = Section(ldns_pkt_authority(raw), false);
  r.additional = Section(ldns_pkt_additional(raw), false);
  r.has_opt = ldns_pkt_edns(raw) || ldns_pkt_edns_udp_size(raw) != 0;
  if (r.has_opt) {
    r.opt_udp_size = ldns_pkt_edns_udp_size(raw);
    r.opt_do = ldns_pkt_edns_do(raw);
    r.opt_version = ldns_pkt_edns_version(raw);
    const ldns_rdf* opt_data = ldns_pkt_edns_data(raw);
    if (opt_data != nullptr) {
      const uint8_t* p = ldns_rdf_data(opt_data);
      size_t left = ldns_rdf_size(opt_data);
      while (left >= 4) {
        const size_t len = std::min<size_t>((p[2] << 8) | p[3], left - 4);
        std::string hex;
        for (size_t i = 0; i < len; ++i)
          absl::StrAppend(&hex, absl::Hex(p[4 + i], absl::kZeroPad2));
        r.opt_options.push_back(absl::StrCat((p[0] << 8) | p[1], ":", hex));
        p += 4 + len;
        left -= 4 + len;
      }
    }
  }
  return r;
}

std::string DecodedResponse::ToString() const {
  std::string s = absl::StrCat("rcode=", rcode, " opcode=", opcode, qr ? " qr" : "",
                               aa ? " aa" : "", tc ? " tc" : "", rd ? " rd" : "", ra ? " ra" : "",
                               ad ? " ad" : "", cd ? " cd" : "", "\n");
  if (has_opt) {
    absl::StrAppend(&s, "OPT udp=", opt_udp_size, " version=", opt_version, opt_do ? " do" : "",
                    " options=[", absl::StrJoin(opt_options, ","), "]\n");
  }
  absl::StrAppend(&s, "QUESTION:\n  ", absl::StrJoin(question, "\n  "), "\nANSWER:\n  ",
                  absl::StrJoin(answer, "\n  "), "\nAUTHORITY:\n  ",
                  absl::StrJoin(authority, "\n  "), "\nADDITIONAL:\n  ",
                  absl::StrJoin(additional, "\n  "), "\n");
  return s;
}

std::shared_ptr<const ZoneSnapshot> DefaultSnapshot() {
  auto snapshot = BuildSnapshot({ZoneSource{"default", std::string(DefaultZoneText())}});
  if (!snapshot.ok()) std::abort();
  return *snapshot;
}

std::string WireName(const std::string& text) {
  ldns_rdf* rdf = ldns_dname_new_frm_str(text.c_str());
  if (rdf == nullptr) return std::string();
  std::string name = CanonicalName(ldns_rdf_data(rdf), ldns_rdf_size(rdf));
  ldns_rdf_deep_free(rdf);
  return name;
}

absl::StatusOr<DecodedResponse> Ask(std::shared_ptr<const ZoneSnapshot> snapshot,
                                    const std::string& name, const std::string& type,
                                    const QueryOptions& options) {
  DnsResponder responder(std::move(snapshot), ResponderConfig{}, nullptr);
  std::vector<uint8_t> out(65535);
  const Response response =
      responder.Respond(MakeQuery(name, type, options), absl::MakeSpan(out), {});
  if (response.kind != Response::Kind::kAnswer) return absl::InternalError("no answer");
  return DecodeResponse(out.data(), response.size);
}

absl::StatusOr<std::string> LdnsRdata(const std::string& type_text, const std::string& rdata_text,
                                      const std::string& origin) {
  ldns_rdf* origin_rdf = nullptr;
  if (ldns_str2rdf_dname(&origin_rdf, origin.c_str()) != LDNS_STATUS_OK) {
    return absl::InvalidArgumentError("bad origin");
  }
  const std::string line = absl::StrCat(". 3600 IN ", type_text, " ", rdata_text);
  ldns_rr* rr = nullptr;
  const ldns_status status = ldns_rr_new_frm_str(&rr, line.c_str(), 3600, origin_rdf, nullptr);
  ldns_rdf_deep_free(origin_rdf);
  if (status != LDNS_STATUS_OK) {
    ldns_rr_free(rr);
    return absl::InvalidArgumentError(ldns_get_errorstr_by_id(status));
  }
  std::string rdata;
  for (size_t i = 0; i < ldns_rr_rd_count(rr); ++i) {
    const ldns_rdf* rdf = ldns_rr_rdf(rr, i);
    rdata.append(reinterpret_cast<const char*>(ldns_rdf_data(rdf)), ldns_rdf_size(rdf));
  }
  ldns_rr_free(rr);
  return rdata;
}

bool FastDnssecRdata(const std::string& type_text, const std::string& rdata_text,
                     const std::string& origin, std::string& rdata) {
  const std::vector<absl::string_view> tokens =
      absl::StrSplit(rdata_text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  rdata.clear();
  if (type_text == "DS") return DsRdataFromText(tokens, rdata);
  if (type_text == "NSEC3") return Nsec3RdataFromText(tokens, rdata);
  std::string signer;
  return type_text == "RRSIG" && tokens.size() > 7 && NameFromText(tokens[7], origin, signer) &&
         RrsigRdataFromText(tokens, signer, rdata);
}

}  // namespace onepass::dns::testing
