#include "handlers/whois/whois_snapshot.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace onepass::whois {
namespace {

// Registrar names compare as the query parser folds them: blanks to one space, ASCII upper.
std::string RegistrarKey(absl::string_view name) {
  std::string key;
  bool in_blank = false;
  for (char c : name) {
    if (c == ' ' || c == '\t') {
      in_blank = !key.empty();
      continue;
    }
    if (in_blank) key.push_back(' ');
    in_blank = false;
    key.push_back(absl::ascii_toupper(static_cast<unsigned char>(c)));
  }
  return key;
}

std::string Upper(absl::string_view text) { return absl::AsciiStrToUpper(text); }

}  // namespace

size_t WhoisSnapshot::DomainKeyHash::operator()(uint32_t index) const {
  return absl::Hash<absl::string_view>{}(DomainName((*entries)[index]));
}
size_t WhoisSnapshot::DomainKeyHash::operator()(absl::string_view name) const {
  return absl::Hash<absl::string_view>{}(name);
}
bool WhoisSnapshot::DomainKeyEq::operator()(uint32_t a, absl::string_view b) const {
  return DomainName((*entries)[a]) == b;
}

WhoisSnapshot::WhoisSnapshot()
    : domain_index_(0, DomainKeyHash{&domains_}, DomainKeyEq{&domains_}) {}

bool WhoisSnapshot::FindDomain(absl::string_view name, ReplyPieces* reply) const {
  auto it = domain_index_.find(name);
  if (it == domain_index_.end()) return false;
  const DomainEntry& entry = domains_[*it];
  const RegistrarEntry& registrar = registrars_[entry.registrar];
  reply->Add(absl::string_view(entry.text, entry.head_bytes));
  reply->Add(registrar.top);
  reply->Add(absl::string_view(entry.text + entry.head_bytes, entry.dates_bytes));
  reply->Add(registrar.middle);
  reply->Add(text_[entry.statuses]);
  reply->Add(text_[entry.contacts]);
  reply->Add(text_[entry.nameservers]);
  return true;
}

bool WhoisSnapshot::FindNameserver(absl::string_view name, ReplyPieces* reply) const {
  auto it = nameservers_.find(name);
  if (it == nameservers_.end()) return false;
  reply->Add(it->second);
  return true;
}

bool WhoisSnapshot::FindRegistrar(absl::string_view key, ReplyPieces* reply) const {
  uint32_t iana_id = 0;
  if (!key.empty() && absl::ascii_isdigit(static_cast<unsigned char>(key.front())) &&
      absl::SimpleAtoi(key, &iana_id)) {
    auto it = registrar_by_iana_id_.find(iana_id);
    if (it != registrar_by_iana_id_.end()) {
      reply->Add(registrars_[it->second].reply);
      return true;
    }
  }
  auto it = registrar_by_name_.find(key);
  if (it == registrar_by_name_.end()) return false;
  reply->Add(registrars_[it->second].reply);
  return true;
}

bool WhoisSnapshot::FindContact(absl::string_view handle, ReplyPieces* reply) const {
  auto it = contacts_.find(handle);
  if (it == contacts_.end()) return false;
  reply->Add(it->second);
  return true;
}

WhoisSnapshotBuilder::WhoisSnapshotBuilder() : snapshot_(new WhoisSnapshot()) {}

absl::Status WhoisSnapshotBuilder::AddRegistrar(const RegistrarRecord& registrar) {
  WhoisSnapshot& s = *snapshot_;
  if (s.registrar_by_iana_id_.contains(registrar.iana_id)) {
    return absl::AlreadyExistsError(
        absl::StrCat("registrar IANA ID ", registrar.iana_id, " is defined twice"));
  }
  const std::string key = RegistrarKey(registrar.name);
  if (s.registrar_by_name_.contains(key)) {
    return absl::AlreadyExistsError(
        absl::StrCat("registrar name \"", registrar.name, "\" is defined twice"));
  }
  RegistrarRecord stored = registrar;
  for (absl::string_view* field :
       {&stored.name, &stored.whois_server, &stored.url, &stored.abuse_email, &stored.abuse_phone,
        &stored.address, &stored.phone, &stored.email, &stored.rdap_url}) {
    *field = s.text_.Store(*field);
  }
  WhoisSnapshot::RegistrarEntry entry;
  scratch_.clear();
  RenderRegistrarTop(stored, &scratch_);
  entry.top = s.text_.Store(scratch_);
  scratch_.clear();
  RenderRegistrarMiddle(stored, &scratch_);
  entry.middle = s.text_.Store(scratch_);
  scratch_.clear();
  RenderRegistrarReply(stored, &scratch_);
  entry.reply = s.text_.Store(scratch_);
  s.stats_.NoteBody(entry.reply.size());
  const uint32_t index = static_cast<uint32_t>(s.registrars_.size());
  s.registrars_.push_back(entry);
  registrars_.push_back(stored);
  s.registrar_by_iana_id_.emplace(registrar.iana_id, index);
  s.registrar_by_name_.emplace(s.text_.Store(key), index);
  ++s.stats_.registrars;
  return absl::OkStatus();
}

absl::Status WhoisSnapshotBuilder::AddContact(const ContactRecord& contact) {
  WhoisSnapshot& s = *snapshot_;
  const std::string key = Upper(contact.handle);
  if (contact_index_.contains(key)) {
    return absl::AlreadyExistsError(
        absl::StrCat("contact handle ", contact.handle, " is defined twice"));
  }
  ContactRecord stored = contact;
  for (absl::string_view* field :
       {&stored.handle, &stored.name, &stored.organization, &stored.street, &stored.city,
        &stored.state, &stored.postal_code, &stored.country, &stored.phone, &stored.email}) {
    *field = s.text_.Store(*field);
  }
  scratch_.clear();
  RenderContactReply(stored, &scratch_);
  absl::string_view reply = s.text_.Store(scratch_);
  s.stats_.NoteBody(reply.size());
  absl::string_view stored_key = s.text_.Store(key);
  s.contacts_.emplace(stored_key, reply);
  contact_index_.emplace(stored_key, static_cast<uint32_t>(contacts_.size()));
  contacts_.push_back(stored);
  ++s.stats_.contacts;
  return absl::OkStatus();
}

absl::Status WhoisSnapshotBuilder::AddNameserver(const NameserverRecord& nameserver) {
  WhoisSnapshot& s = *snapshot_;
  if (s.nameservers_.contains(nameserver.name)) {
    return absl::AlreadyExistsError(
        absl::StrCat("name server ", nameserver.name, " is defined twice"));
  }
  const RegistrarRecord* registrar = nullptr;
  if (nameserver.registrar_iana_id != 0) {
    auto it = s.registrar_by_iana_id_.find(nameserver.registrar_iana_id);
    if (it == s.registrar_by_iana_id_.end()) {
      return absl::NotFoundError(absl::StrCat("registrar IANA ID ", nameserver.registrar_iana_id,
                                              " is not defined (registrars must come before the "
                                              "name servers and domains that name them)"));
    }
    registrar = &registrars_[it->second];
  }
  scratch_.clear();
  RenderNameserverReply(nameserver, registrar, &scratch_);
  absl::string_view reply = s.text_.Store(scratch_);
  s.stats_.NoteBody(reply.size());
  s.nameservers_.emplace(s.text_.Store(nameserver.name), reply);
  ++s.stats_.nameservers;
  return absl::OkStatus();
}

uint32_t WhoisSnapshotBuilder::InternContacts(const DomainRecord& domain) {
  // Contact slots + 1, 0 for none; the parser checked that the handles exist.
  std::array<uint32_t, 3> key = {0, 0, 0};
  const absl::string_view handles[3] = {domain.registrant, domain.admin, domain.tech};
  for (int i = 0; i < 3; ++i) {
    if (handles[i].empty()) continue;
    auto it = contact_index_.find(Upper(handles[i]));
    if (it != contact_index_.end()) key[i] = it->second + 1;
  }
  if (key == std::array<uint32_t, 3>{0, 0, 0}) return 0;
  auto it = contact_blocks_.find(key);
  if (it != contact_blocks_.end()) return it->second;
  std::string block;
  const absl::string_view roles[3] = {"Registrant", "Admin", "Tech"};
  for (int i = 0; i < 3; ++i) {
    if (key[i] != 0) RenderContactRole(roles[i], contacts_[key[i] - 1], &block);
  }
  const uint32_t id = snapshot_->text_.Intern(block);
  contact_blocks_.emplace(key, id);
  return id;
}

absl::Status WhoisSnapshotBuilder::AddDomain(const DomainRecord& domain) {
  WhoisSnapshot& s = *snapshot_;
  if (domain.name.empty() || domain.name.size() > std::numeric_limits<uint8_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("domain name of ", domain.name.size(), " bytes; 1 to 253 expected"));
  }
  auto registrar = s.registrar_by_iana_id_.find(domain.registrar_iana_id);
  if (registrar == s.registrar_by_iana_id_.end()) {
    return absl::NotFoundError(absl::StrCat("registrar IANA ID ", domain.registrar_iana_id,
                                            " is not defined (registrars must come before the "
                                            "domains that name them)"));
  }
  for (absl::string_view handle : {domain.registrant, domain.admin, domain.tech}) {
    if (!handle.empty() && !contact_index_.contains(Upper(handle))) {
      return absl::NotFoundError(absl::StrCat("contact handle ", handle,
                                              " is not defined (contacts must come before the "
                                              "domains that name them)"));
    }
  }
  scratch_.clear();
  RenderDomainHead(domain, &scratch_);
  const size_t head_bytes = scratch_.size();
  RenderDomainDates(domain, &scratch_);
  const size_t dates_bytes = scratch_.size() - head_bytes;
  if (head_bytes > std::numeric_limits<uint16_t>::max() ||
      dates_bytes > std::numeric_limits<uint16_t>::max()) {
    return absl::InvalidArgumentError("domain fields too long");
  }
  WhoisSnapshot::DomainEntry entry;
  entry.text = s.text_.Store(scratch_).data();
  entry.head_bytes = static_cast<uint16_t>(head_bytes);
  entry.dates_bytes = static_cast<uint16_t>(dates_bytes);
  entry.name_bytes = static_cast<uint8_t>(domain.name.size());
  entry.registrar = registrar->second;

  // The shared pieces are looked up by their fields first: most domains repeat a status set
  // and a name server set already seen, and the fields are shorter than the rendered text.
  key_.assign("s");
  for (absl::string_view status : domain.statuses) absl::StrAppend(&key_, status, ",");
  auto statuses = blocks_by_fields_.find(key_);
  if (statuses != blocks_by_fields_.end()) {
    entry.statuses = statuses->second;
  } else {
    scratch_.clear();
    RenderStatuses(domain.statuses, &scratch_);
    entry.statuses = s.text_.Intern(scratch_);
    blocks_by_fields_.emplace(key_, entry.statuses);
  }
  entry.contacts = InternContacts(domain);
  key_.assign(domain.dnssec.data(), domain.dnssec.size());
  for (absl::string_view ds : domain.ds_data) absl::StrAppend(&key_, "|", ds);
  for (absl::string_view host : domain.nameservers) absl::StrAppend(&key_, ",", host);
  auto nameservers = blocks_by_fields_.find(key_);
  if (nameservers != blocks_by_fields_.end()) {
    entry.nameservers = nameservers->second;
  } else {
    scratch_.clear();
    RenderNameservers(domain.nameservers, domain.dnssec, domain.ds_data, &scratch_);
    entry.nameservers = s.text_.Intern(scratch_);
    blocks_by_fields_.emplace(key_, entry.nameservers);
  }

  const uint32_t index = static_cast<uint32_t>(s.domains_.size());
  s.domains_.push_back(entry);
  if (!s.domain_index_.insert(index).second) {
    s.domains_.pop_back();  // the load fails; the stored text is dropped with the snapshot
    return absl::AlreadyExistsError(absl::StrCat("domain ", domain.name, " is defined twice"));
  }
  s.stats_.NoteBody(head_bytes + dates_bytes + s.registrars_[entry.registrar].top.size() +
                    s.registrars_[entry.registrar].middle.size() + s.text_[entry.statuses].size() +
                    s.text_[entry.contacts].size() + s.text_[entry.nameservers].size());
  ++s.stats_.domains;
  return absl::OkStatus();
}

std::shared_ptr<const WhoisSnapshot> WhoisSnapshotBuilder::Build() {
  WhoisSnapshot& s = *snapshot_;
  scratch_.clear();
  RenderTail(last_update_, footer_, &scratch_);
  s.tail_ = s.text_.Store(scratch_);
  s.last_update_ = s.text_.Store(last_update_);
  s.domains_.shrink_to_fit();
  s.text_.Seal();
  s.stats_.shared_pieces = s.text_.interned();
  s.stats_.text_bytes = s.text_.text_bytes();
  s.stats_.index_bytes = s.domains_.capacity() * sizeof(WhoisSnapshot::DomainEntry) +
                         s.domain_index_.capacity() * (sizeof(uint32_t) + 1) +
                         s.text_.index_bytes() + TableBytes(s.registrar_by_name_) +
                         TableBytes(s.registrar_by_iana_id_) + TableBytes(s.nameservers_) +
                         TableBytes(s.contacts_);
  // Load-time helpers go now; the snapshot keeps only what serving reads.
  blocks_by_fields_ = {};
  contact_index_ = {};
  contact_blocks_ = {};
  return std::shared_ptr<const WhoisSnapshot>(std::move(snapshot_));
}

}  // namespace onepass::whois
