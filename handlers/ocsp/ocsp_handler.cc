#include "handlers/ocsp/ocsp_handler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "handlers/ocsp/cert_id.h"
#include "handlers/ocsp/get_request_decoder.h"
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

OcspHandler::OcspHandler(const OcspHandlerConfig& config,
                         std::shared_ptr<const OcspSnapshot> snapshot)
    : config_(config),
      path_prefix_(StripTrailingSlash(config.path)),
      snapshot_(std::move(snapshot)),
      // Base64 decodes 4 characters to 3 bytes, and the path is shorter than the head limit.
      get_scratch_(config.http.max_header_bytes / 4 * 3 + 3) {}

size_t OcspHandler::MaxRequestBytes() const {
  return config_.http.max_header_bytes + config_.http.max_body_bytes;
}

Verdict OcspHandler::Finish(bool appended, size_t consumed) {
  if (!appended) {
    ++stats_.output_full;
    return {Action::kClose, consumed};
  }
  return {Action::kWriteThenClose, consumed};
}

Verdict OcspHandler::Process(absl::Span<const uint8_t> input, const RequestContext& context,
                             OutputBuffer& out) {
  if (input.empty()) return {context.peer_closed ? Action::kClose : Action::kReadMore, 0};
  const absl::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  HttpRequest request;
  const HttpParseResult parsed = ParseHttpRequest(text, config_.http, request);
  // One request per connection: whatever the outcome, every byte received is done with.
  switch (parsed.status) {
    case HttpParseStatus::kIncomplete:
      if (!context.peer_closed) return {Action::kReadMore, 0};
      return Finish(AnswerHttpError(HttpErrorStatus(HttpError::kIncompleteRequest),
                                    HttpErrorText(HttpError::kIncompleteRequest), context.now, out),
                    input.size());
    case HttpParseStatus::kError:
      return Finish(AnswerHttpError(HttpErrorStatus(parsed.error), HttpErrorText(parsed.error),
                                    context.now, out),
                    input.size());
    case HttpParseStatus::kComplete:
      break;
  }
  return Finish(Answer(request, context.now, out), input.size());
}

bool OcspHandler::Answer(const HttpRequest& request, absl::Time now, OutputBuffer& out) {
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

bool OcspHandler::AnswerOcspRequest(absl::Span<const uint8_t> der, absl::Time now,
                                    OutputBuffer& out) {
  OcspRequestCertIds request;
  if (!ReadOcspRequestCertIds(der, request)) {
    ++stats_.malformed_request;
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
    ++stats_.presigned;
    return writer_.AppendPresigned(entry->head_prefix, entry->der, entry->next_update, now, out);
  }
  ++stats_.unauthorized;
  if (saw_expired) ++stats_.expired;
  return writer_.AppendOcspStatus(OcspResponseStatus::kUnauthorized, now, out);
}

bool OcspHandler::AnswerHttpError(int status, absl::string_view detail, absl::Time now,
                                  OutputBuffer& out) {
  ++stats_.http_errors;
  return writer_.AppendHttpError(status, detail, now, out);
}

OcspHandlerFactory::OcspHandlerFactory(OcspHandlerConfig config,
                                       std::shared_ptr<const OcspSnapshot> snapshot)
    : config_(std::move(config)), snapshot_(std::move(snapshot)) {}

std::unique_ptr<Handler> OcspHandlerFactory::CreateHandler() const {
  return std::make_unique<OcspHandler>(config_, snapshot_);
}

size_t OcspHandlerFactory::OutputBufferBytes() const {
  // Room for any response the snapshot holds and for one reloaded within the same limit (its
  // head prefix is a few hundred bytes), plus the per-request Date and Cache-Control.
  constexpr size_t kHeadPrefixAllowance = 512;
  return std::max(snapshot_->max_presigned_bytes(),
                  config_.max_response_bytes + kHeadPrefixAllowance) +
         kMaxDynamicHeadBytes;
}

}  // namespace onepass::ocsp
