#include "handlers/ocsp/ocsp_responder.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "handlers/http/http_conditional.h"
#include "handlers/http/http_date.h"
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

// RFC 9110 §13.2.2 steps 3-4: If-None-Match when present, else If-Modified-Since (a valid
// HTTP-date no earlier than Last-Modified, which is thisUpdate to the second).
bool NotModified(const http::HttpRequest& request, const OcspResponseEntry& entry) {
  if (request.has_if_none_match) return http::IfNoneMatchMatches(request.if_none_match, entry.etag);
  if (!request.has_if_modified_since) return false;
  const absl::optional<absl::Time> since = http::ParseHttpDate(request.if_modified_since);
  return since.has_value() && absl::ToUnixSeconds(entry.this_update) <= absl::ToUnixSeconds(*since);
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
      get_scratch_(config.http.max_header_bytes / 4 * 3 + 3) {
  if (config.crls != nullptr) crl_responder_.emplace(config.crls, counters);
}

bool OcspResponder::Respond(const http::HttpRequest& request, absl::Time now, OutputBuffer& out) {
  // HEAD is GET without the content (RFC 9110 §9.3.2): caches probe with it.
  const bool head = request.method == "HEAD";
  const HttpBody send_body = head ? HttpBody::kOmit : HttpBody::kSend;
  const absl::string_view path = PathOf(request.target);
  // CRLs (--crl-dir) beside the responses: /crl/NAME.crl, GET and HEAD. A POST there is no
  // OCSP request (those go to --ocsp-path itself): 405 saying what a CRL takes.
  if (crl_responder_.has_value() && absl::StartsWith(path, kCrlPathPrefix)) {
    if (request.method != "GET" && !head) {
      return AnswerHttpError(405, "a CRL is read with GET or HEAD", now, out, HttpBody::kSend,
                             kCrlAllowedMethods);
    }
    const int answered =
        crl_responder_->Respond(request, path.substr(kCrlPathPrefix.size()), now, out);
    if (answered <= 0) return answered == 0;
    return AnswerHttpError(answered, "no such CRL", now, out, send_body);
  }
  // Below the prefix: "<prefix>" or "<prefix>/..." (so "/ocspx" is not under "/ocsp").
  if (!absl::StartsWith(path, path_prefix_)) {
    return AnswerHttpError(404, "no such path", now, out, send_body);
  }
  absl::string_view rest = path.substr(path_prefix_.size());
  if (!rest.empty() && rest[0] != '/') {
    return AnswerHttpError(404, "no such path", now, out, send_body);
  }
  if (!rest.empty()) rest.remove_prefix(1);

  if (request.method == "GET" || head) {
    const absl::optional<size_t> size = DecodeGetRequestPath(rest, absl::MakeSpan(get_scratch_));
    if (!size.has_value()) {
      return AnswerHttpError(400, "request path is not base64", now, out, send_body);
    }
    return AnswerOcspRequest(absl::MakeConstSpan(get_scratch_.data(), *size), &request, send_body,
                             now, out);
  }
  if (request.method == "POST") {
    if (!rest.empty()) return AnswerHttpError(404, "no such path", now, out);
    if (!request.has_content_type || !IsOcspRequestMediaType(request.content_type)) {
      return AnswerHttpError(415, "Content-Type must be application/ocsp-request", now, out);
    }
    if (!request.has_content_length) {
      return AnswerHttpError(411, "Content-Length required", now, out);
    }
    return AnswerOcspRequest(AsBytes(request.body), nullptr, HttpBody::kSend, now, out);
  }
  return AnswerHttpError(405, "only GET, HEAD and POST", now, out);
}

bool OcspResponder::RespondHttpError(http::HttpError error, absl::Time now, OutputBuffer& out) {
  return AnswerHttpError(http::HttpErrorStatus(error), http::HttpErrorText(error), now, out);
}

bool OcspResponder::AnswerOcspRequest(absl::Span<const uint8_t> der,
                                      const http::HttpRequest* conditional, HttpBody send_body,
                                      absl::Time now, OutputBuffer& out) {
  OcspRequestCertIds request;
  if (!ReadOcspRequestCertIds(der, request)) {
    Count(counters_, OcspCounter::kMalformedRequest);
    return writer_.AppendOcspStatus(OcspResponseStatus::kMalformedRequest, now, out, send_body);
  }
  // Every CertID asked must be answered (RFC 6960 §4.2.1: a response for each, or the client
  // reports "No Status found"): a pre-signed response serves the request only if it holds
  // them all. A CertID list longer than we look at cannot be checked, so it is refused too.
  const OcspResponseEntry* entry = nullptr;
  bool covered = request.request_count == request.count;
  bool any_known = false;
  for (size_t i = 0; i < request.count; ++i) {
    CertIdKeyBuffer buffer;
    const absl::string_view key = EncodeCertIdKey(request.ids[i], buffer);
    const OcspResponseEntry* found = key.empty() ? nullptr : snapshot_->Find(key);
    any_known = any_known || found != nullptr;
    if (i == 0) entry = found;
    if (found == nullptr || found != entry) covered = false;
  }
  if (!covered) {
    Count(counters_, OcspCounter::kUnauthorized);
    if (any_known) Count(counters_, OcspCounter::kCertIdsNotCovered);
    return writer_.AppendOcspStatus(OcspResponseStatus::kUnauthorized, now, out, send_body);
  }
  if (entry->ExpiredAt(now)) {
    Count(counters_, OcspCounter::kUnauthorized);
    Count(counters_, OcspCounter::kExpired);
    return writer_.AppendOcspStatus(OcspResponseStatus::kUnauthorized, now, out, send_body);
  }
  if (conditional != nullptr && NotModified(*conditional, *entry)) {
    Count(counters_, OcspCounter::kNotModified);
    return writer_.AppendNotModified(entry->not_modified_prefix, entry->next_update, now, out);
  }
  Count(counters_, OcspCounter::kSuccessful);
  return writer_.AppendPresigned(entry->head_prefix, entry->der, entry->next_update, now, out,
                                 send_body);
}

bool OcspResponder::AnswerHttpError(int status, absl::string_view detail, absl::Time now,
                                    OutputBuffer& out, HttpBody send_body,
                                    absl::string_view allow) {
  Count(counters_, HttpErrorCounter(status));
  return writer_.AppendHttpError(status, detail, now, out, send_body, allow);
}

}  // namespace onepass::ocsp
