#include "server/tls/tls_server_context.h"

#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onepass::tls {
namespace {

std::string FormatDate(absl::Time when) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", when, absl::UTCTimeZone());
}

}  // namespace

absl::StatusOr<std::shared_ptr<const TlsServerContext>> TlsServerContext::Create(
    const TlsConfig& config, absl::Time now) {
  std::shared_ptr<TlsServerContext> context(new TlsServerContext(config));
  for (const std::string& name : config.alpn) {
    if (name.empty() || name.size() > 255) {
      return absl::InvalidArgumentError(
          absl::StrCat("TLS: ALPN protocol \"", name, "\" must be 1 to 255 bytes (RFC 7301 §3.1)"));
    }
    context->alpn_wire_.push_back(static_cast<char>(name.size()));
    context->alpn_wire_ += name;
  }
  if (config.ticket_keys_file.empty()) {
    context->ticket_keys_ = {ProcessTicketKey()};
  } else {
    absl::StatusOr<std::vector<TicketKey>> keys = LoadTicketKeys(config.ticket_keys_file);
    if (!keys.ok()) return keys.status();
    context->ticket_keys_ = *std::move(keys);
  }
  absl::StatusOr<std::unique_ptr<TlsEngine>> engine =
      MakeTlsEngine(*context, now, &context->certificate_);
  if (!engine.ok()) return engine.status();
  context->engine_ = *std::move(engine);
  context->not_after_ = context->certificate_.not_after;
  context->WarnOfValidity(now);
  return std::shared_ptr<const TlsServerContext>(std::move(context));
}

TlsServerContext::~TlsServerContext() = default;

void TlsServerContext::WarnOfValidity(absl::Time now) {
  const CertificateFacts& cert = certificate_;
  const std::string where = absl::StrCat("--tls-cert ", config_.cert_file, ": ");
  if (now >= cert.not_after) {
    warnings_.push_back(absl::StrCat(where, "the certificate expired on ",
                                     FormatDate(cert.not_after),
                                     "; clients that verify it (RFC 8310 strict privacy) refuse "
                                     "it: renew it, then SIGHUP"));
  } else if (cert.not_after - now < config_.expiry_warning) {
    warnings_.push_back(absl::StrCat(
        where, "the certificate expires on ", FormatDate(cert.not_after), ", in ",
        absl::ToInt64Hours(cert.not_after - now) / 24, " days: renew it, then SIGHUP"));
  }
  if (now < cert.not_before) {
    warnings_.push_back(absl::StrCat(where, "the certificate is not valid before ",
                                     FormatDate(cert.not_before),
                                     "; clients that verify it refuse it until then (clock?)"));
  }
}

std::string TlsServerContext::Summary() const {
  const CertificateFacts& cert = certificate_;
  std::vector<std::string> lines;
  lines.push_back(absl::StrCat("tls certificate ", config_.cert_file, ": subject ", cert.subject,
                               ", issuer ", cert.issuer, ", ", cert.chain_length,
                               cert.chain_length == 1 ? " certificate" : " certificates"));
  lines.push_back(absl::StrCat("tls validity: ", FormatDate(cert.not_before), " to ",
                               FormatDate(cert.not_after)));
  lines.push_back(absl::StrCat("tls key ", config_.key_file, ": ", cert.key_description));
  if (ticket_keys_from_file()) {
    lines.push_back(absl::StrCat("tls ticket keys ", config_.ticket_keys_file, ": ",
                                 ticket_keys_.size(), " (the first encrypts, all decrypt)"));
  } else {
    lines.push_back(
        "tls ticket keys: one random key for this process (no --tls-ticket-keys): resumption "
        "does not survive a restart nor span hosts");
  }
  lines.push_back(
      absl::StrCat("tls versions: ", config_.allow_tls12 ? "1.3, 1.2" : "1.3",
                   "; alpn: ", config_.alpn.empty() ? "none" : absl::StrJoin(config_.alpn, ","),
                   "; cipher suites (TLS 1.3, ours first): ", config_.ciphersuites,
                   "; engine: ", engine_->name()));
  if (const std::string coverage = engine_->Coverage(); !coverage.empty()) {
    lines.push_back(absl::StrCat("tls ", coverage));
  }
  return absl::StrJoin(lines, "\n");
}

}  // namespace onepass::tls
