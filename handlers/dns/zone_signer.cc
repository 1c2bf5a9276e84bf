#include "handlers/dns/zone_signer.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/data_file.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/zone_text.h"

// After the C++ headers: ldns (1.8.3) defines `bool` for C, which breaks C++20 <optional>.
#include <ldns/ldns.h>  // NOLINT(build/include_order)

namespace onepass::dns {
namespace {

struct FileCloser {
  void operator()(FILE* f) const { fclose(f); }
};
struct ZoneDeepFree {
  void operator()(ldns_zone* z) const { ldns_zone_deep_free(z); }
};
struct KeyListFree {  // frees the keys too
  void operator()(ldns_key_list* k) const { ldns_key_list_free(k); }
};
struct RrDeepFree {
  void operator()(ldns_rr* rr) const { ldns_rr_free(rr); }
};
struct RrListDeepFree {
  void operator()(ldns_rr_list* l) const { ldns_rr_list_deep_free(l); }
};
struct DnssecZoneFree {  // shallow: the records belong to the ldns_zone and the added list
  void operator()(ldns_dnssec_zone* z) const { ldns_dnssec_zone_free(z); }
};

// A key file, with the checks every data file gets (common/data_file.h): a FIFO or a device
// in the folder must not hang or crash the load.
absl::StatusOr<std::unique_ptr<FILE, FileCloser>> OpenKeyFile(const std::string& path) {
  absl::StatusOr<OpenedDataFile> opened = OpenDataFile(path, "--dnssec_keys file");
  if (!opened.ok()) return opened.status();
  std::unique_ptr<FILE, FileCloser> file(fdopen(opened->fd, "r"));
  if (file == nullptr) {
    close(opened->fd);
    return absl::InternalError(absl::StrCat("cannot read ", path));
  }
  return file;
}

std::string AlgorithmName(int algorithm) {
  const ldns_lookup_table* entry = ldns_lookup_by_id(ldns_algorithms, algorithm);
  return entry != nullptr ? absl::StrCat(algorithm, " (", entry->name, ")")
                          : absl::StrCat(algorithm);
}

// The .key must hold the public half of the .private: the same algorithm (RFC 4034 §2.1.3)
// and the public key that the private key derives (ldns_key2rr computes it from the private
// key), or every signature would fail validation against the published DNSKEY.
absl::Status CheckKeyPair(const std::string& base, const ldns_key* key, const ldns_rr* dnskey) {
  const std::string files = absl::StrCat(base, ".key and ", base, ".private");
  const int published = ldns_rdf2native_int8(ldns_rr_rdf(dnskey, 2));
  const int private_algorithm = ldns_key_algorithm(key);
  if (published != private_algorithm) {
    return absl::InvalidArgumentError(absl::StrCat(
        files, " are not one key pair: the DNSKEY is algorithm ", AlgorithmName(published),
        ", the private key algorithm ", AlgorithmName(private_algorithm),
        "; make the pair again (ldns-keygen, dnssec-keygen) or restore the matching file"));
  }
  std::unique_ptr<ldns_rr, RrDeepFree> derived(ldns_key2rr(key));
  if (derived == nullptr || ldns_rr_rd_count(derived.get()) < 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(base, ".private: cannot derive its public key (algorithm ",
                     AlgorithmName(private_algorithm), ") to check it against ", base, ".key"));
  }
  if (ldns_rdf_compare(ldns_rr_rdf(derived.get(), 3), ldns_rr_rdf(dnskey, 3)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        files,
        " are not one key pair: the DNSKEY's public key is not the one of the private "
        "key; make the pair again (ldns-keygen, dnssec-keygen) or restore the matching file"));
  }
  return absl::OkStatus();
}

// True if `zone` already holds a DNSKEY with the same RDATA as `dnskey`.
bool HasKey(const ldns_zone* zone, const ldns_rr* dnskey) {
  const ldns_rr_list* rrs = ldns_zone_rrs(zone);
  for (size_t i = 0; i < ldns_rr_list_rr_count(rrs); ++i) {
    const ldns_rr* rr = ldns_rr_list_rr(rrs, i);
    if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_DNSKEY && ldns_rr_compare(rr, dnskey) == 0) {
      return true;
    }
  }
  return false;
}

// Loads every key pair for `origin_text` ("example.org.") from the folder into `keys`, adding
// its DNSKEY to `zone` when missing.
absl::Status LoadKeys(const SigningConfig& config, const std::string& origin_text,
                      const ldns_rdf* origin, ldns_zone* zone, ldns_key_list* keys) {
  std::error_code error;
  std::filesystem::directory_iterator it(config.keys_dir, error);
  if (error) {
    return absl::NotFoundError(
        absl::StrCat("--dnssec_keys ", config.keys_dir, ": ", error.message()));
  }
  std::vector<std::string> bases;
  const std::string prefix = absl::StrCat("K", origin_text, "+");
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    // Origins compare case-insensitively; ldns-keygen writes them as given.
    if (name.size() > prefix.size() && absl::StartsWithIgnoreCase(name, prefix) &&
        absl::EndsWith(name, ".private")) {
      bases.push_back(entry.path().string().substr(0, entry.path().string().size() - 8));
    }
  }
  if (bases.empty()) {
    return absl::NotFoundError(absl::StrCat("no key for ", origin_text, " in ", config.keys_dir,
                                            " (expected ", prefix, "...private/.key)"));
  }
  for (const std::string& base : bases) {
    absl::StatusOr<std::unique_ptr<FILE, FileCloser>> private_file = OpenKeyFile(base + ".private");
    if (!private_file.ok()) return private_file.status();
    absl::StatusOr<std::unique_ptr<FILE, FileCloser>> public_file = OpenKeyFile(base + ".key");
    if (!public_file.ok()) return public_file.status();
    ldns_key* key = nullptr;
    ldns_status status = ldns_key_new_frm_fp(&key, private_file->get());
    if (status != LDNS_STATUS_OK) {
      return absl::InvalidArgumentError(
          absl::StrCat(base, ".private: ", ldns_get_errorstr_by_id(status)));
    }
    ldns_key_list_push_key(keys, key);  // owned by the list from here
    ldns_rr* raw = nullptr;
    status = ldns_rr_new_frm_fp(&raw, public_file->get(), nullptr, nullptr, nullptr);
    std::unique_ptr<ldns_rr, RrDeepFree> dnskey(raw);
    if (status != LDNS_STATUS_OK || ldns_rr_get_type(dnskey.get()) != LDNS_RR_TYPE_DNSKEY ||
        ldns_rr_rd_count(dnskey.get()) != 4) {
      return absl::InvalidArgumentError(absl::StrCat(base, ".key: not a DNSKEY record"));
    }
    if (absl::Status pair = CheckKeyPair(base, key, dnskey.get()); !pair.ok()) return pair;
    // The flags (SEP: a KSK) and key tag come from the public record, as ldns-signzone does.
    ldns_key_set_flags(key, ldns_rdf2native_int16(ldns_rr_rdf(dnskey.get(), 0)));
    ldns_key_set_keytag(key, ldns_calc_keytag(dnskey.get()));
    ldns_key_set_pubkey_owner(key, ldns_rdf_clone(origin));
    ldns_key_set_inception(key, config.inception);
    ldns_key_set_expiration(key, config.expiration);
    if (!HasKey(zone, dnskey.get())) {
      // The apex's own spelling of the owner (the file's may differ in case).
      ldns_rdf_deep_free(ldns_rr_owner(dnskey.get()));
      ldns_rr_set_owner(dnskey.get(), ldns_rdf_clone(origin));
      ldns_zone_push_rr(zone, dnskey.release());
    }
  }
  return absl::OkStatus();
}

// The zone as ldns records, read by the loader's own reader (zone_text.h) and handed to ldns
// in wire form: ldns_zone_new_frm_fp does not follow $INCLUDE ("not implemented"), and its error
// path leaks. Owners come canonical (lower case), as the signatures cover them (RFC 4034 §6.2).
absl::StatusOr<std::unique_ptr<ldns_zone, ZoneDeepFree>> ReadLdnsZone(const ZoneSource& source) {
  std::unique_ptr<ldns_zone, ZoneDeepFree> zone(ldns_zone_new());
  std::string wire;
  const absl::Status read =
      ReadMasterFile(source.display_name, source.text, ZoneTextOptions{}, [&](TextRecord& text) {
        // RFC 1035 §4.1.3: owner, type, class, TTL, RDLENGTH, RDATA (big-endian).
        const ParsedRecord& record = text.record;
        auto put = [&wire](uint32_t value, int bytes) {
          for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) {
            wire.push_back(static_cast<char>(value >> shift));
          }
        };
        wire.assign(text.owner.data(), text.owner.size());
        put(text.type, 2);
        put(text.rr_class, 2);
        put(record.ttl, 4);
        put(static_cast<uint32_t>(record.rdata.size()), 2);
        wire.append(record.rdata);
        ldns_rr* rr = nullptr;
        size_t pos = 0;
        if (ldns_wire2rr(&rr, reinterpret_cast<const uint8_t*>(wire.data()), wire.size(), &pos,
                         LDNS_SECTION_ANSWER) != LDNS_STATUS_OK) {
          return absl::InvalidArgumentError(absl::StrCat("ldns cannot take: ", text.text));
        }
        if (text.type == kTypeSoa && ldns_zone_soa(zone.get()) == nullptr) {
          ldns_zone_set_soa(zone.get(), rr);
        } else {
          ldns_zone_push_rr(zone.get(), rr);
        }
        return absl::OkStatus();
      });
  if (!read.ok()) return read;
  if (ldns_zone_soa(zone.get()) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(source.display_name, ": no SOA record"));
  }
  return zone;
}

}  // namespace

absl::StatusOr<ZoneSource> SignZone(const ZoneSource& source, const SigningConfig& config) {
  // The loader's own parse first: its errors name the line.
  absl::StatusOr<std::unique_ptr<Zone>> checked = ParseZone(source);
  if (!checked.ok()) return checked.status();
  const std::string origin_text = NameToText((*checked)->origin());
  checked->reset();

  absl::StatusOr<std::unique_ptr<ldns_zone, ZoneDeepFree>> zone = ReadLdnsZone(source);
  if (!zone.ok()) return zone.status();
  const ldns_rdf* origin = ldns_rr_owner(ldns_zone_soa(zone->get()));
  std::unique_ptr<ldns_key_list, KeyListFree> keys(ldns_key_list_new());
  if (absl::Status s = LoadKeys(config, origin_text, origin, zone->get(), keys.get()); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(source.display_name, ": ", s.message()));
  }

  std::unique_ptr<ldns_dnssec_zone, DnssecZoneFree> signing(ldns_dnssec_zone_new());
  ldns_dnssec_zone_add_rr(signing.get(), ldns_zone_soa(zone->get()));
  const ldns_rr_list* rrs = ldns_zone_rrs(zone->get());
  for (size_t i = 0; i < ldns_rr_list_rr_count(rrs); ++i) {
    ldns_rr* rr = ldns_rr_list_rr(rrs, i);
    // Old signatures and denial records are replaced by new ones.
    const ldns_rr_type type = ldns_rr_get_type(rr);
    if (type == LDNS_RR_TYPE_RRSIG || type == LDNS_RR_TYPE_NSEC || type == LDNS_RR_TYPE_NSEC3 ||
        type == LDNS_RR_TYPE_NSEC3PARAM) {
      continue;
    }
    if (const ldns_status status = ldns_dnssec_zone_add_rr(signing.get(), rr);
        status != LDNS_STATUS_OK) {
      return absl::InvalidArgumentError(
          absl::StrCat(source.display_name, ": ", ldns_get_errorstr_by_id(status)));
    }
  }
  std::unique_ptr<ldns_rr_list, RrListDeepFree> added(ldns_rr_list_new());
  const ldns_status status =
      config.nsec3 ? ldns_dnssec_zone_sign_nsec3(signing.get(), added.get(), keys.get(),
                                                 ldns_dnssec_default_replace_signatures, nullptr,
                                                 LDNS_SHA1, /*flags=*/0, /*iterations=*/0,
                                                 /*salt_length=*/0, /*salt=*/nullptr)
                   : ldns_dnssec_zone_sign(signing.get(), added.get(), keys.get(),
                                           ldns_dnssec_default_replace_signatures, nullptr);
  if (status != LDNS_STATUS_OK) {
    return absl::InternalError(
        absl::StrCat(source.display_name, ": signing failed: ", ldns_get_errorstr_by_id(status)));
  }
  char* text = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  if (out == nullptr) return absl::InternalError("open_memstream failed");
  ldns_dnssec_zone_print(out, signing.get());
  fclose(out);
  ZoneSource signed_source{source.display_name, std::string(text, size)};
  free(text);
  return signed_source;
}

}  // namespace onepass::dns
