#include "tests/integration/dns/signed_zone.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "tests/support/subprocess.h"

namespace onepass::dns::testing {
namespace {

// Runs `command` with sh in `dir`; returns its stdout without the final newline.
absl::StatusOr<std::string> RunIn(const std::string& dir, const std::string& command) {
  auto result = onepass::testing::RunCommand(
      {"sh", "-c", absl::StrCat("cd '", dir, "' && ", command)}, absl::Seconds(60));
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat(command, ": exit ", result->exit_code, ": ", result->err, result->out));
  }
  return std::string(absl::StripTrailingAsciiWhitespace(result->out));
}

}  // namespace

const char* DenialName(Denial denial) {
  switch (denial) {
    case Denial::kNsec:
      return "NSEC";
    case Denial::kNsec3:
      return "NSEC3";
    case Denial::kNsec3OptOut:
      return "NSEC3 opt-out";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<SignedZone>> SignedZone::Make(const std::string& template_path,
                                                             const std::string& origin,
                                                             Denial denial, bool sign) {
  for (const char* program : {"ldns-keygen", "ldns-signzone"}) {
    if (!onepass::testing::ProgramExists(program)) {
      return absl::FailedPreconditionError(
          absl::StrCat(program, " is not installed (Debian package ldnsutils)"));
    }
  }
  auto zone = std::unique_ptr<SignedZone>(new SignedZone());
  char dir_template[] = "/tmp/onepass-signed-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return absl::InternalError("mkdtemp failed");
  zone->dir_ = dir_template;
  std::filesystem::copy_file(template_path, zone->dir_ + "/zone");
  struct Key {
    const char* args;
    bool ksk;
  };
  const Key keys[] = {{"-a ECDSAP256SHA256 -k", true},
                      {"-a ECDSAP256SHA256", false},
                      {"-a RSASHA256 -b 4096 -k", true},
                      {"-a RSASHA256 -b 4096", false}};
  std::vector<std::string> names;
  for (const Key& key : keys) {
    absl::StatusOr<std::string> name =
        RunIn(zone->dir_, absl::StrCat("ldns-keygen ", key.args, " ", origin));
    if (!name.ok()) return name.status();
    names.push_back(*name);
    if (key.ksk) {
      std::ifstream in(absl::StrCat(zone->dir_, "/", *name, ".key"));
      std::string line;
      std::getline(in, line);
      zone->ksk_dnskeys_.push_back(line);
    }
  }
  if (!sign) {
    zone->path_ = zone->dir_ + "/zone";
    return zone;
  }
  std::string options;
  switch (denial) {
    case Denial::kNsec:
      break;
    case Denial::kNsec3:
      options = "-n -s beef -t 5";
      break;
    case Denial::kNsec3OptOut:
      options = "-n -p -t 0";
      break;
  }
  // -A: the DNSKEY RRset signed by every key, so each algorithm signs it (RFC 6840 §5.11).
  absl::StatusOr<std::string> signed_zone =
      RunIn(zone->dir_, absl::StrCat("ldns-signzone -A ", options, " -o ", origin,
                                     " -f zone.signed zone ", absl::StrJoin(names, " ")));
  if (!signed_zone.ok()) return signed_zone.status();
  zone->path_ = zone->dir_ + "/zone.signed";
  return zone;
}

absl::StatusOr<std::unique_ptr<SignedZone>> SignedZone::MakeWithBind(
    const std::string& template_path, const std::string& origin, Denial denial) {
  for (const char* program : {"dnssec-keygen", "dnssec-signzone"}) {
    if (!onepass::testing::ProgramExists(program)) {
      return absl::FailedPreconditionError(
          absl::StrCat(program, " is not installed (Debian package bind9-utils)"));
    }
  }
  auto zone = std::unique_ptr<SignedZone>(new SignedZone());
  char dir_template[] = "/tmp/onepass-bind-signed-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return absl::InternalError("mkdtemp failed");
  zone->dir_ = dir_template;
  std::filesystem::copy_file(template_path, zone->dir_ + "/zone");
  std::ofstream apex(zone->dir_ + "/zone", std::ios::app);
  for (const bool ksk : {true, false}) {
    absl::StatusOr<std::string> name = RunIn(
        zone->dir_,
        absl::StrCat("dnssec-keygen -q -a ECDSAP256SHA256 -n ZONE ", ksk ? "-f KSK " : "", origin));
    if (!name.ok()) return name.status();
    // BIND's .key file starts with comment lines; the record is the one that is not.
    std::ifstream in(absl::StrCat(zone->dir_, "/", *name, ".key"));
    std::string line;
    while (std::getline(in, line) && (line.empty() || line[0] == ';')) {
    }
    apex << line << "\n";
    if (ksk) zone->ksk_dnskeys_.push_back(line);
  }
  apex.close();
  std::string options;
  switch (denial) {
    case Denial::kNsec:
      break;
    case Denial::kNsec3:
      options = "-3 beef -H 5";
      break;
    case Denial::kNsec3OptOut:
      options = "-3 - -H 0 -A";
      break;
  }
  absl::StatusOr<std::string> signed_zone = RunIn(
      zone->dir_,
      absl::StrCat("dnssec-signzone -q -S -K . ", options, " -o ", origin, " -f zone.signed zone"));
  if (!signed_zone.ok()) return signed_zone.status();
  zone->path_ = zone->dir_ + "/zone.signed";
  return zone;
}

SignedZone::~SignedZone() {
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

}  // namespace onepass::dns::testing
