#include "handlers/ocsp/ocsp_flags.h"

#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "handlers/ocsp/crl_snapshot.h"
#include "handlers/ocsp/ocsp_handler.h"
#include "handlers/ocsp/ocsp_snapshot.h"

ABSL_FLAG(std::string, ocsp_responses, "",
          "ocsp: directory of pre-signed DER OCSP responses, one file per certificate (as "
          "`openssl ocsp -respout` writes them). Default: /etc/onepass/ocsp. A test set: "
          "scripts/make-ocsp-testdata.sh OUT, then --ocsp-responses OUT/responses.");
ABSL_FLAG(std::string, ocsp_path, "/",
          "ocsp: URL path of the responder: POST to it, GET <path>/<url-encoded base64 request>");
ABSL_FLAG(int64_t, ocsp_max_header_bytes, 8192,
          "ocsp: largest request line + header fields in bytes (414/431 beyond)");
ABSL_FLAG(int64_t, ocsp_max_body_bytes, 16384, "ocsp: largest POST body in bytes (413 beyond)");
ABSL_FLAG(int64_t, ocsp_max_response_bytes, 16384,
          "ocsp: largest pre-signed response loaded, in bytes (bigger files are skipped)");
ABSL_FLAG(std::string, crl_dir, "",
          "ocsp: directory of DER CRLs, each NAME.crl served at /crl/NAME.crl beside the OCSP "
          "responses (checked at start and on SIGHUP: a bad or expired CRL fails the load, so "
          "the old data keeps serving). Empty: no CRLs.");
ABSL_FLAG(int, crl_warn_days, 7,
          "ocsp: warn at load when a CRL's nextUpdate is closer than this [days].");
ABSL_FLAG(int64_t, crl_max_bytes, int64_t{64} << 20,
          "ocsp: largest CRL file loaded, in bytes (a larger one fails the load): a bound on "
          "memory. CRLs over 16 KiB are sent from memory by sendfile, not copied into buffers, "
          "so this costs nothing until a CRL is that large.");
ABSL_FLAG(std::string, crl_issuers, "",
          "ocsp: PEM file of the CA certificates whose CRLs --crl-dir holds; when given, each "
          "CRL's issuer must be one of them and its signature must verify (RFC 5280 §6.3.3).");

namespace onepass::ocsp {
namespace {

absl::Status CheckRange(absl::string_view flag, int64_t value, int64_t low, int64_t high) {
  if (value < low || value > high) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, "=", value, " is out of range [", low, ", ", high, "]"));
  }
  return absl::OkStatus();
}

absl::Status CheckPath(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("--ocsp-path='", path, "' must start with '/'"));
  }
  for (char c : path) {
    if (c <= 0x20 || c >= 0x7F || c == '?' || c == '#' || c == '%') {
      return absl::InvalidArgumentError(absl::StrCat(
          "--ocsp-path='", path, "' may hold only visible ASCII without '?', '#' or '%'"));
    }
  }
  return absl::OkStatus();
}

// --ocsp-responses, or the installed default when it exists; otherwise an error that says
// what to pass (an operator who forgot the flag should not see "cannot open /etc/...").
absl::StatusOr<std::string> ResponsesDir() {
  std::string dir = absl::GetFlag(FLAGS_ocsp_responses);
  if (!dir.empty()) return dir;
  dir = std::string(kDefaultOcspResponsesDir);
  struct stat info;
  if (stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return absl::NotFoundError(absl::StrCat(
        "ocsp: no --ocsp-responses given and no ", dir,
        " directory; pass --ocsp-responses DIR (pre-signed DER responses, one file each), "
        "e.g. the test set of scripts/make-ocsp-testdata.sh OUT in OUT/responses"));
  }
  return dir;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HandlerFactory>> NewFactoryFromFlags() {
  const int64_t max_header = absl::GetFlag(FLAGS_ocsp_max_header_bytes);
  const int64_t max_body = absl::GetFlag(FLAGS_ocsp_max_body_bytes);
  const int64_t max_response = absl::GetFlag(FLAGS_ocsp_max_response_bytes);
  // A head must at least hold a request line; beyond 1 MiB it is no longer a short request.
  if (absl::Status s = CheckRange("ocsp-max-header-bytes", max_header, 64, 1 << 20); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckRange("ocsp-max-body-bytes", max_body, 0, 1 << 20); !s.ok()) return s;
  if (absl::Status s = CheckRange("ocsp-max-response-bytes", max_response, 64, 1 << 20); !s.ok()) {
    return s;
  }
  OcspHandlerConfig config;
  config.http.max_header_bytes = static_cast<size_t>(max_header);
  config.http.max_body_bytes = static_cast<size_t>(max_body);
  config.max_response_bytes = static_cast<size_t>(max_response);
  config.path = absl::GetFlag(FLAGS_ocsp_path);
  if (absl::Status s = CheckPath(config.path); !s.ok()) return s;

  OcspLoadOptions options;
  options.max_response_bytes = config.max_response_bytes;
  // Loading at startup is the one place the clock is read: to skip already-expired responses.
  absl::StatusOr<std::string> dir = ResponsesDir();
  if (!dir.ok()) return dir.status();
  absl::StatusOr<std::shared_ptr<const OcspSnapshot>> snapshot =
      OcspSnapshot::LoadDirectory(*dir, absl::Now(), options);
  if (!snapshot.ok()) return snapshot.status();
  if (!absl::GetFlag(FLAGS_crl_dir).empty()) {
    const int warn_days = absl::GetFlag(FLAGS_crl_warn_days);
    if (absl::Status s = CheckRange("crl-warn-days", warn_days, 0, 3650); !s.ok()) return s;
    const int64_t crl_max = absl::GetFlag(FLAGS_crl_max_bytes);
    if (absl::Status s = CheckRange("crl-max-bytes", crl_max, 1024, int64_t{1} << 30); !s.ok())
      return s;
    CrlLoadConfig crl;
    crl.dir = absl::GetFlag(FLAGS_crl_dir);
    crl.issuers_file = absl::GetFlag(FLAGS_crl_issuers);
    crl.warn_within = absl::Hours(24) * warn_days;
    crl.max_bytes = static_cast<size_t>(crl_max);
    std::vector<std::string> warnings;
    absl::StatusOr<std::shared_ptr<const CrlSnapshot>> crls =
        LoadCrlDir(crl, absl::Now(), &warnings);
    if (!crls.ok()) return crls.status();
    for (const std::string& warning : warnings) LogWarning("ocsp: CRL %s", warning);
    LogInfo("ocsp: %d CRLs from %s served at /crl/NAME.crl", (*crls)->size(), crl.dir);
    config.crls = *std::move(crls);
  }
  return std::make_unique<OcspHandlerFactory>(std::move(config), *std::move(snapshot));
}

}  // namespace onepass::ocsp
