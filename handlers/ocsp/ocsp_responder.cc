#include "handlers/ocsp/ocsp_responder.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "handlers/ocsp/cert_id.h"
#include "handlers/ocsp/get_request_decoder.h"
#include "handlers/ocsp/ocsp_counters.h"
#include "handlers/ocsp/ocsp_request_reader.h"

namespace onepass::ocsp {
namespace {

// RFC 6960 Appendix A.1 / RFC 5019 §5: the request media type.
constexpr absl::string_view kOcspRequestMediaType = "application/ocsp-request";

std::string StripTrailingSlash(absl::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
}

// The path of an origin-form or absolute-form (RFC 9112 §3.2.2) request-target.
absl::string_view PathOf(absl::string_view target) {
  for (absl::string_view scheme : {"http://", "https://"}) {
    if (absl::StartsWithIgnoreCase(target, scheme)) {
      target.remove_prefix(scheme.size());
      const size_t slash = target.find('/');
      return slash == absl::string_view::npos ? absl::string_view("/") : target.substr(slash);
    }
  }
  return target;
}

// "application/ocsp-request", any case, optionally with parameters (RFC 9110 §8.3.1).
bool IsOcspRequestMediaType(absl::string_view content_type) {
  const size_t semicolon = content_type.find(';');
  if (semicolon != absl::string_view::npos) content_type = content_type.substr(0, semicolon);
  return absl::EqualsIgnoreCase(absl::StripTrailingAsciiWhitespace(content_type),
                                kOcspRequestMediaType);
}

absl::Span<const uint8_t> AsBytes(absl::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

}  // namespace

OcspResponder::OcspResponder(const OcspHandlerConfig& config,
                             std::shared_ptr<const OcspSnapshot> snapshot,
                             HandlerCounters& counters)
    : config_(config),
      path_prefix_(StripTrailingSlash(config.path)),
      snapshot_(std::move(snapshot)),
      counters_(counters),
      // Base64 decodes 4 characters to 3 bytes, and the path is shorter than the head limit.
      get_scratch_(config.http.max_header_bytes / 4 * 3 + 3) {}

bool OcspResponder::Respond(const HttpRequest& request, absl::Time now, OutputBuffer& out) {
  const absl::string_view path = PathOf(request.target);
  // Below the prefix: "<prefix>" or "<prefix>/..." (so "/ocspx" is not under "/ocsp").
  if (!absl::StartsWith(path, path_prefix_)) return AnswerHttpError(404, "no such path", now, out);
  absl::string_view rest = path.substr(path_prefix_.size());
  if (!rest.empty() && rest[0] != '/') return AnswerHttpError(404, "no such path", now, out);
  if (!rest.empty()) rest.remove_prefix(1);

  if (request.method == "GET") {
    const absl::optional<size_t> size = DecodeGetRequestPath(rest, absl::MakeSpan(get_scratch_));
    if (!size.has_value()) return AnswerHttpError(400, "request path is not base64", now, out);
    return AnswerOcspRequest(absl::MakeConstSpan(get_scratch_.data(), *size), now, out);
  }
  if (request.method == "POST") {
    if (!rest.empty()) return AnswerHttpError(404, "no such path", now, out);
    if (!request.has_content_type || !IsOcspRequestMediaType(request.content_type)) {
      return AnswerHttpError(415, "Content-Type must be application/ocsp-request", now, out);
    }
    if (!request.has_content_length) {
      return AnswerHttpError(411, "Content-Length required", now, out);
    }
    return AnswerOcspRequest(AsBytes(request.body), now, out);
  }
  return AnswerHttpError(405, "only GET and POST", now, out);
}

bool OcspResponder::RespondHttpError(HttpError error, absl::Time now, OutputBuffer& out) {
  return AnswerHttpError(HttpErrorStatus(error), HttpErrorText(error), now, out);
}

bool OcspResponder::AnswerOcspRequest(absl::Span<const uint8_t> der, absl::Time now,
                                      OutputBuffer& out) {
  OcspRequestCertIds request;
  if (!ReadOcspRequestCertIds(der, request)) {
    Count(counters_, OcspCounter::kMalformedRequest);
    return writer_.AppendOcspStatus(OcspResponseStatus::kMalformedRequest, now, out);
  }
  // Several CertIDs (RFC 5019 §2.1.1 asks for one): answer the first one we know.
  bool saw_expired = false;
  for (size_t i = 0; i < request.count; ++i) {
    CertIdKeyBuffer buffer;
    const absl::string_view key = EncodeCertIdKey(request.ids[i], buffer);
    const OcspResponseEntry* entry = key.empty() ? nullptr : snapshot_->Find(key);
    if (entry == nullptr) continue;
    if (entry->ExpiredAt(now)) {
      saw_expired = true;
      continue;
    }
    Count(counters_, OcspCounter::kSuccessful);
    return writer_.AppendPresigned(entry->head_prefix, entry->der, entry->next_update, now, out);
  }
  Count(counters_, OcspCounter::kUnauthorized);
  if (saw_expired) Count(counters_, OcspCounter::kExpired);
  return writer_.AppendOcspStatus(OcspResponseStatus::kUnauthorized, now, out);
}

bool OcspResponder::AnswerHttpError(int status, absl::string_view detail, absl::Time now,
                                    OutputBuffer& out) {
  Count(counters_, HttpErrorCounter(status));
  return writer_.AppendHttpError(status, detail, now, out);
}

}  // namespace onepass::ocsp
