#include "handlers/rdap/rdap_snapshot.h"

#include <arpa/inet.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace onepass::rdap {
namespace {

uint64_t Mix(uint64_t hash, uint64_t value) {
  return hash ^ (value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2));
}

// RFC 5952 §4 text of an address the Whois loader already checked.
std::string CanonicalAddress(absl::string_view address) {
  const std::string text(address);
  unsigned char binary[16];
  char out[INET6_ADDRSTRLEN];
  const int family = text.find(':') == std::string::npos ? AF_INET : AF_INET6;
  if (inet_pton(family, text.c_str(), binary) != 1 ||
      inet_ntop(family, binary, out, sizeof(out)) == nullptr) {
    return text;
  }
  return out;
}

}  // namespace

uint64_t Fnv1a(absl::string_view text, uint64_t seed) {
  uint64_t hash = seed;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

uint64_t RdapSnapshot::DomainEtag(const DomainEntry& entry) const {
  uint64_t hash = Mix(shared_hash_, entry.own_hash);
  for (uint32_t piece :
       {entry.status, entry.registrar, entry.contacts, entry.redacted, entry.hosts}) {
    hash = Mix(hash, piece_hashes_[piece]);
  }
  return hash;
}

bool RdapSnapshot::FindDomain(absl::string_view name, RdapAnswer* answer) const {
  auto it = domain_index_.find(name);
  if (it == domain_index_.end()) return false;
  const DomainEntry& entry = domains_[it->second];
  answer->Add(top_);
  answer->Add(absl::string_view(entry.own, entry.own_bytes));
  answer->Add(events_end_);
  answer->Add(text_[entry.status]);
  answer->Add(text_[entry.registrar]);
  answer->Add(text_[entry.contacts]);
  answer->Add(text_[entry.redacted]);
  answer->Add(text_[entry.hosts]);
  answer->Add(bottom_);
  answer->etag = DomainEtag(entry);
  return true;
}

void RdapSnapshot::SearchResult(uint32_t id, RdapAnswer* answer) const {
  const DomainEntry& entry = domains_[id];
  answer->Add(absl::string_view(entry.own, entry.own_bytes));
  answer->Add(events_end_);
  answer->Add(text_[entry.status]);
  answer->Add(text_[entry.registrar]);
  answer->Add(text_[entry.contacts]);
  answer->Add(text_[entry.redacted]);
  answer->Add(text_[entry.hosts]);
}

bool RdapSnapshot::FindNameserver(absl::string_view name, RdapAnswer* answer) const {
  auto it = nameservers_.find(name);
  if (it == nameservers_.end()) return false;
  answer->Add(it->second.body);
  answer->etag = it->second.etag;
  return true;
}

bool RdapSnapshot::FindEntity(absl::string_view handle, RdapAnswer* answer) const {
  auto it = entities_.find(handle);
  if (it == entities_.end()) return false;
  answer->Add(it->second.body);
  answer->etag = it->second.etag;
  return true;
}

void RdapSnapshot::Help(RdapAnswer* answer) const {
  answer->Add(help_.body);
  answer->etag = help_.etag;
}

bool RdapSnapshot::SearchDomains(absl::string_view prefix, bool exact, size_t max,
                                 std::vector<uint32_t>* ids) const {
  ids->clear();
  if (exact) {
    auto it = domain_index_.find(prefix);
    if (it != domain_index_.end() && max > 0) ids->push_back(it->second);
    return it != domain_index_.end() && max == 0;
  }
  auto at = std::lower_bound(
      domains_by_name_.begin(), domains_by_name_.end(), prefix,
      [this](uint32_t id, absl::string_view key) { return domains_[id].key < key; });
  for (; at != domains_by_name_.end(); ++at) {
    if (!absl::StartsWith(domains_[*at].key, prefix)) return false;
    if (ids->size() == max) return true;
    ids->push_back(*at);
  }
  return false;
}

RdapSnapshotBuilder::RdapSnapshotBuilder(std::string base_url) : snapshot_(new RdapSnapshot()) {
  config_.base_url = std::move(base_url);
  snapshot_->piece_hashes_.push_back(0);  // of the empty text, number 0
}

void RdapSnapshotBuilder::ReserveDomains(size_t count) {
  snapshot_->domain_index_.reserve(count);
  snapshot_->domains_.reserve(count);
}

uint32_t RdapSnapshotBuilder::Intern(absl::string_view text) {
  RdapSnapshot& s = *snapshot_;
  const uint32_t id = s.text_.Intern(text);
  if (id == s.piece_hashes_.size()) s.piece_hashes_.push_back(Fnv1a(text));  // a new one
  return id;
}

void RdapSnapshotBuilder::StoreWhole(
    absl::string_view key, absl::string_view text,
    absl::flat_hash_map<absl::string_view, RdapSnapshot::Whole>& map) {
  RdapSnapshot& s = *snapshot_;
  map[s.text_.Store(key)] = {s.text_.Store(text), Fnv1a(text)};
  s.stats_.NoteBody(text.size());
}

absl::Status RdapSnapshotBuilder::AddRegistrar(const whois::RegistrarRecord& registrar) {
  if (registrar_by_iana_id_.contains(registrar.iana_id)) {
    return absl::AlreadyExistsError(
        absl::StrCat("registrar IANA ID ", registrar.iana_id, " is defined twice"));
  }
  whois::RegistrarRecord stored = registrar;
  for (absl::string_view* field :
       {&stored.name, &stored.whois_server, &stored.url, &stored.abuse_email, &stored.abuse_phone,
        &stored.address, &stored.phone, &stored.email, &stored.rdap_url}) {
    *field = snapshot_->text_.Store(*field);
  }
  scratch_.clear();
  RenderDomainRegistrar(stored, config_, &scratch_);
  registrar_piece_.push_back(Intern(scratch_));
  registrar_by_iana_id_.emplace(registrar.iana_id, static_cast<uint32_t>(registrars_.size()));
  registrars_.push_back(stored);
  RdapSnapshotStats& stats = snapshot_->stats_;
  ++stats.registrars;
  if (stored.abuse_email.empty() || stored.abuse_phone.empty()) ++stats.registrars_without_abuse;
  if (stored.rdap_url.empty()) ++stats.registrars_without_rdap_url;
  return absl::OkStatus();
}

absl::Status RdapSnapshotBuilder::AddContact(const whois::ContactRecord& contact) {
  std::string key = absl::AsciiStrToUpper(contact.handle);
  if (contact_by_handle_.contains(key)) {
    return absl::AlreadyExistsError(
        absl::StrCat("contact handle ", contact.handle, " is defined twice"));
  }
  whois::ContactRecord stored = contact;
  for (absl::string_view* field :
       {&stored.handle, &stored.name, &stored.organization, &stored.street, &stored.city,
        &stored.state, &stored.postal_code, &stored.country, &stored.phone, &stored.email}) {
    *field = snapshot_->text_.Store(*field);
  }
  contact_by_handle_.emplace(std::move(key), static_cast<uint32_t>(contacts_.size()));
  contacts_.push_back(stored);
  ++snapshot_->stats_.contacts;
  return absl::OkStatus();
}

absl::Status RdapSnapshotBuilder::AddNameserver(const whois::NameserverRecord& nameserver) {
  if (nameserver_by_name_.contains(nameserver.name)) {
    return absl::AlreadyExistsError(
        absl::StrCat("name server ", nameserver.name, " is defined twice"));
  }
  if (nameserver.registrar_iana_id != 0 &&
      !registrar_by_iana_id_.contains(nameserver.registrar_iana_id)) {
    return absl::NotFoundError(absl::StrCat("registrar IANA ID ", nameserver.registrar_iana_id,
                                            " is not defined (registrars must come before the "
                                            "name servers and domains that name them)"));
  }
  StoredNameserver stored;
  stored.name = snapshot_->text_.Store(nameserver.name);
  stored.registrar_iana_id = nameserver.registrar_iana_id;
  for (absl::string_view address : nameserver.addresses) {
    stored.addresses.push_back(CanonicalAddress(address));
  }
  nameserver_by_name_.emplace(stored.name, static_cast<uint32_t>(nameservers_.size()));
  nameservers_.push_back(std::move(stored));
  ++snapshot_->stats_.nameservers;
  return absl::OkStatus();
}

absl::Status RdapSnapshotBuilder::AddDomain(const whois::DomainRecord& domain) {
  RdapSnapshot& s = *snapshot_;
  auto registrar = registrar_by_iana_id_.find(domain.registrar_iana_id);
  if (registrar == registrar_by_iana_id_.end()) {
    return absl::NotFoundError(absl::StrCat("registrar IANA ID ", domain.registrar_iana_id,
                                            " is not defined (registrars must come before the "
                                            "domains that name them)"));
  }
  // Contacts in the profile's order (§2.7): registrant, administrative, technical.
  RdapContactRole roles[3];
  size_t role_count = 0;
  const std::pair<absl::string_view, absl::string_view> named[3] = {
      {"registrant", domain.registrant},
      {"administrative", domain.admin},
      {"technical", domain.tech}};
  for (const auto& [role, handle] : named) {
    if (handle.empty()) continue;
    auto it = contact_by_handle_.find(absl::AsciiStrToUpper(handle));
    if (it == contact_by_handle_.end()) {
      return absl::NotFoundError(absl::StrCat("contact handle ", handle,
                                              " is not defined (contacts must come before the "
                                              "domains that name them)"));
    }
    roles[role_count++] = {role, &contacts_[it->second]};
  }
  if (s.domain_index_.contains(domain.name)) {
    return absl::AlreadyExistsError(absl::StrCat("domain ", domain.name, " is defined twice"));
  }
  std::vector<RdapHost> hosts;
  hosts.reserve(domain.nameservers.size());
  for (absl::string_view host : domain.nameservers) {
    auto it = nameserver_by_name_.find(host);
    if (it == nameserver_by_name_.end()) {
      hosts.push_back({host, {}});  // a host the file does not define: no glue known
    } else {
      hosts.push_back({host, nameservers_[it->second].addresses});
    }
  }
  const whois::RegistrarRecord& r = registrars_[registrar->second];
  scratch_.clear();
  RenderDomainOwn(domain, r, config_, &scratch_);
  RdapSnapshot::DomainEntry entry;
  absl::string_view own = s.text_.Store(scratch_);
  entry.own = own.data();
  entry.own_bytes = static_cast<uint32_t>(own.size());
  entry.own_hash = Fnv1a(own);
  entry.key = s.text_.Store(domain.name);
  entry.registrar = registrar_piece_[registrar->second];
  scratch_.clear();
  RenderDomainStatus(domain.statuses, &scratch_);
  entry.status = Intern(scratch_);
  scratch_.clear();
  RenderDomainContacts(absl::MakeConstSpan(roles, role_count), &scratch_);
  entry.contacts = Intern(scratch_);
  scratch_.clear();
  RenderDomainRedactions(absl::MakeConstSpan(roles, role_count), &scratch_);
  entry.redacted = Intern(scratch_);
  scratch_.clear();
  RenderDomainHosts(hosts, domain.dnssec, domain.ds_data, config_, &scratch_);
  entry.hosts = Intern(scratch_);
  const uint32_t id = static_cast<uint32_t>(s.domains_.size());
  s.domains_.push_back(entry);
  s.domain_index_.emplace(entry.key, id);
  ++s.stats_.domains;
  const size_t bytes = own.size() + s.text_[entry.status].size() + s.text_[entry.registrar].size() +
                       s.text_[entry.contacts].size() + s.text_[entry.redacted].size() +
                       s.text_[entry.hosts].size();
  s.stats_.max_domain_bytes = std::max(s.stats_.max_domain_bytes, bytes);  // + shared, in Build
  return absl::OkStatus();
}

std::shared_ptr<const RdapSnapshot> RdapSnapshotBuilder::Build() {
  RdapSnapshot& s = *snapshot_;
  scratch_.clear();
  RenderTop(&scratch_);
  s.top_ = s.text_.Store(scratch_);
  scratch_.clear();
  RenderDomainEventsEnd(config_, &scratch_);
  s.events_end_ = s.text_.Store(scratch_);
  scratch_.clear();
  RenderBottom(config_, &scratch_);
  s.bottom_ = s.text_.Store(scratch_);
  // The search bottom: the same notices and the truncation notice (RFC 9083 §4.8).
  scratch_.pop_back();  // "}"
  scratch_.pop_back();  // "]"
  scratch_.push_back(',');
  RenderTruncatedNotice(&scratch_);
  scratch_.append("]}");
  s.truncated_bottom_ = s.text_.Store(scratch_);
  s.shared_hash_ = Mix(Mix(Fnv1a(s.top_), Fnv1a(s.events_end_)), Fnv1a(s.bottom_));
  s.last_update_ = s.text_.Store(config_.last_update);
  s.stats_.max_domain_bytes += s.top_.size() + s.events_end_.size() + s.bottom_.size();
  s.stats_.NoteBody(s.stats_.max_domain_bytes);

  for (const StoredNameserver& n : nameservers_) {
    std::vector<absl::string_view> addresses(n.addresses.begin(), n.addresses.end());
    whois::NameserverRecord record;
    record.name = n.name;
    record.registrar_iana_id = n.registrar_iana_id;
    record.addresses = addresses;
    const whois::RegistrarRecord* registrar = nullptr;
    if (n.registrar_iana_id != 0) {
      registrar = &registrars_[registrar_by_iana_id_.at(n.registrar_iana_id)];
    }
    StoreWhole(n.name, RenderNameserver(record, registrar, config_), s.nameservers_);
  }
  // Contacts by handle, registrars by IANA ID: a contact handle of digits only that equals a
  // registrar's IANA ID is shadowed by the registrar (the file's choice; --check says so).
  for (const whois::ContactRecord& c : contacts_) {
    StoreWhole(absl::AsciiStrToUpper(c.handle), RenderContactEntity(c, config_), s.entities_);
  }
  for (const whois::RegistrarRecord& r : registrars_) {
    StoreWhole(absl::StrCat(r.iana_id), RenderRegistrarEntity(r, config_), s.entities_);
  }
  const std::string help = RenderHelp(config_);
  s.help_ = {s.text_.Store(help), Fnv1a(help)};
  s.stats_.NoteBody(help.size());

  s.domains_by_name_.resize(s.domains_.size());
  for (uint32_t i = 0; i < s.domains_by_name_.size(); ++i) s.domains_by_name_[i] = i;
  std::sort(s.domains_by_name_.begin(), s.domains_by_name_.end(),
            [&s](uint32_t a, uint32_t b) { return s.domains_[a].key < s.domains_[b].key; });
  s.domains_.shrink_to_fit();
  s.text_.Seal();
  s.stats_.shared_pieces = s.text_.interned();
  s.stats_.text_bytes = s.text_.text_bytes();
  s.stats_.index_bytes = s.domains_.capacity() * sizeof(RdapSnapshot::DomainEntry) +
                         s.domains_by_name_.capacity() * sizeof(uint32_t) +
                         whois::TableBytes(s.domain_index_) + whois::TableBytes(s.nameservers_) +
                         whois::TableBytes(s.entities_) + s.text_.index_bytes() +
                         s.piece_hashes_.capacity() * sizeof(uint64_t);
  contact_by_handle_ = {};
  nameserver_by_name_ = {};
  return std::shared_ptr<const RdapSnapshot>(std::move(snapshot_));
}

}  // namespace onepass::rdap
