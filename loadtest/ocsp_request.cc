#include "loadtest/ocsp_request.h"

#include <openssl/ocsp.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace onepass::load {
namespace {

struct OcspRequestDeleter {
  void operator()(OCSP_REQUEST* request) const { OCSP_REQUEST_free(request); }
};
struct OcspResponseDeleter {
  void operator()(OCSP_RESPONSE* response) const { OCSP_RESPONSE_free(response); }
};
struct OcspBasicDeleter {
  void operator()(OCSP_BASICRESP* basic) const { OCSP_BASICRESP_free(basic); }
};
struct OcspCertIdDeleter {
  void operator()(OCSP_CERTID* id) const { OCSP_CERTID_free(id); }
};

constexpr const char* kStatusNames[] = {"successful",  "malformedRequest", "internalError",
                                        "tryLater",    "(unused)",         "sigRequired",
                                        "unauthorized"};

std::string StatusName(int status) {
  if (status >= 0 && status < 7 && status != 4) return kStatusNames[status];
  return absl::StrCat("status ", status);
}

// Numbers clients so a cached verdict never outlives the client (and settings) behind it.
uint64_t NextInstance() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

struct OcspClient::CertIds {
  std::vector<std::unique_ptr<OCSP_CERTID, OcspCertIdDeleter>> ids;
};

absl::StatusOr<int> ParseOcspStatus(absl::string_view text) {
  if (absl::EqualsIgnoreCase(text, "any")) return -1;
  for (int i = 0; i < 7; ++i) {
    if (i != 4 && absl::EqualsIgnoreCase(text, kStatusNames[i])) return i;
  }
  int number = 0;
  if (absl::SimpleAtoi(text, &number) && number >= 0 && number < 7) return number;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown OCSP response status \"", text,
                   "\" (successful, malformedRequest, internalError, tryLater, sigRequired, "
                   "unauthorized or any)"));
}

std::string OcspGetPathSegment(absl::string_view der_request) {
  std::string base64;
  absl::Base64Escape(der_request, &base64);
  std::string segment;
  for (char c : base64) {
    if (c == '+') {
      segment += "%2B";
    } else if (c == '/') {
      segment += "%2F";
    } else if (c == '=') {
      segment += "%3D";
    } else {
      segment.push_back(c);
    }
  }
  return segment;
}

OcspClient::OcspClient(const OcspClientConfig& config, std::string http_request,
                       std::unique_ptr<CertIds> cert_ids)
    : config_(config),
      http_request_(std::move(http_request)),
      cert_ids_(std::move(cert_ids)),
      instance_(NextInstance()) {}

OcspClient::~OcspClient() = default;

absl::StatusOr<std::unique_ptr<OcspClient>> OcspClient::Create(const OcspClientConfig& config) {
  const auto* der = reinterpret_cast<const unsigned char*>(config.der_request.data());
  const unsigned char* cursor = der;
  std::unique_ptr<OCSP_REQUEST, OcspRequestDeleter> request(
      d2i_OCSP_REQUEST(nullptr, &cursor, static_cast<long>(config.der_request.size())));
  if (request == nullptr || cursor != der + config.der_request.size()) {
    return absl::InvalidArgumentError("the OCSP request is not one DER OCSPRequest");
  }
  auto cert_ids = std::make_unique<CertIds>();
  int count = OCSP_request_onereq_count(request.get());
  for (int i = 0; i < count; ++i) {
    OCSP_CERTID* id = OCSP_onereq_get0_id(OCSP_request_onereq_get0(request.get(), i));
    cert_ids->ids.emplace_back(OCSP_CERTID_dup(id));
  }
  if (count == 0) return absl::InvalidArgumentError("the OCSP request asks for no certificate");
  if (config.path.empty() || config.path[0] != '/') {
    return absl::InvalidArgumentError("the OCSP path must start with '/'");
  }
  std::string http;
  if (config.use_get) {
    std::string target = config.path;
    if (target.back() != '/') target.push_back('/');
    absl::StrAppend(&http, "GET ", target, OcspGetPathSegment(config.der_request),
                    " HTTP/1.1\r\nHost: ", config.host, "\r\nConnection: close\r\n\r\n");
  } else {
    absl::StrAppend(&http, "POST ", config.path, " HTTP/1.1\r\nHost: ", config.host,
                    "\r\nContent-Type: application/ocsp-request\r\nContent-Length: ",
                    config.der_request.size(), "\r\nConnection: close\r\n\r\n", config.der_request);
  }
  return std::unique_ptr<OcspClient>(new OcspClient(config, std::move(http), std::move(cert_ids)));
}

void OcspClient::BuildRequest(uint64_t sequence, uint32_t random, std::string* out) const {
  *out = http_request_;
}

CheckResult OcspClient::Check(absl::string_view request, absl::string_view response,
                              bool closed) const {
  size_t header_end = response.find("\r\n\r\n");
  // Judged the same whether the header came whole or byte by byte.
  if ((header_end == absl::string_view::npos && response.size() > config_.max_header_bytes) ||
      (header_end != absl::string_view::npos && header_end + 4 > config_.max_header_bytes)) {
    return CheckResult::Wrong("HTTP header too long");
  }
  if (header_end == absl::string_view::npos) {
    if (!closed) return CheckResult::Incomplete();
    return response.empty() ? CheckResult::Short("closed without a reply")
                            : CheckResult::Short("closed inside the HTTP header");
  }
  absl::string_view head = response.substr(0, header_end);
  absl::string_view body = response.substr(header_end + 4);
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  // Status line: HTTP-version SP status-code SP [reason-phrase] (RFC 9112 §4).
  absl::string_view status_line = lines[0];
  if (!absl::StartsWith(status_line, "HTTP/1.") || status_line.size() < 12 ||
      status_line[8] != ' ') {
    return CheckResult::Wrong("bad HTTP status line", std::string(status_line.substr(0, 64)));
  }
  absl::string_view code = status_line.substr(9, 3);
  if (code != "200") {
    return CheckResult::Wrong("HTTP status not 200",
                              absl::StrCat("HTTP status ", status_line.substr(9, 64)));
  }
  bool has_length = false;
  size_t content_length = 0;
  bool content_type_ok = false;
  std::string content_type = "(none)";
  for (size_t i = 1; i < lines.size(); ++i) {
    size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return CheckResult::Wrong("bad HTTP header line", std::string(lines[i].substr(0, 64)));
    }
    absl::string_view field = lines[i].substr(0, colon);
    absl::string_view value = absl::StripAsciiWhitespace(lines[i].substr(colon + 1));
    if (absl::EqualsIgnoreCase(field, "Content-Length")) {
      size_t parsed = 0;
      if (!absl::SimpleAtoi(value, &parsed) || (has_length && parsed != content_length)) {
        return CheckResult::Wrong("bad Content-Length", std::string(value.substr(0, 32)));
      }
      has_length = true;
      content_length = parsed;
    } else if (absl::EqualsIgnoreCase(field, "Transfer-Encoding")) {
      return CheckResult::Wrong("unexpected Transfer-Encoding", std::string(value.substr(0, 32)));
    } else if (absl::EqualsIgnoreCase(field, "Content-Type")) {
      content_type = std::string(value.substr(0, 64));
      absl::string_view media = value.substr(0, value.find(';'));
      content_type_ok =
          absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(media), "application/ocsp-response");
    }
  }
  if (!content_type_ok) return CheckResult::Wrong("wrong Content-Type", content_type);
  if (has_length) {
    if (body.size() < content_length) {
      if (!closed) return CheckResult::Incomplete();
      return CheckResult::Short("closed inside the body",
                                absl::StrCat("got ", body.size(), " of ", content_length));
    }
    body = body.substr(0, content_length);
  } else if (!closed) {
    return CheckResult::Incomplete();  // the body ends at the close (RFC 9112 §6.3)
  }
  // A responder serves pre-signed responses (RFC 5019 §2.2.1): most bodies are byte for byte
  // the one this thread last judged good. The verdict depends only on the body (and the fixed
  // request), so the same bytes skip the DER parse, which would otherwise make the client
  // the bottleneck. Thread-local: Check() is shared by every client thread.
  thread_local std::string last_good_body;
  thread_local uint64_t last_good_client = 0;  // instance_ of the client that judged it
  if (last_good_client == instance_ && body == last_good_body) return CheckResult::Ok();
  const auto* der = reinterpret_cast<const unsigned char*>(body.data());
  const unsigned char* cursor = der;
  std::unique_ptr<OCSP_RESPONSE, OcspResponseDeleter> parsed(
      d2i_OCSP_RESPONSE(nullptr, &cursor, static_cast<long>(body.size())));
  if (parsed == nullptr || cursor != der + body.size()) {
    return CheckResult::Wrong("body not a DER OCSPResponse",
                              absl::StrCat(body.size(), " body bytes"));
  }
  int status = OCSP_response_status(parsed.get());
  if (config_.expect_status >= 0 && status != config_.expect_status) {
    return CheckResult::Wrong(
        "unexpected OCSP status",
        absl::StrCat(StatusName(status), ", expected ", StatusName(config_.expect_status)));
  }
  if (status == OCSP_RESPONSE_STATUS_SUCCESSFUL) {
    std::unique_ptr<OCSP_BASICRESP, OcspBasicDeleter> basic(OCSP_response_get1_basic(parsed.get()));
    if (basic == nullptr) return CheckResult::Wrong("successful without a basic response");
    for (const auto& id : cert_ids_->ids) {
      if (OCSP_resp_find(basic.get(), id.get(), -1) < 0) {
        return CheckResult::Wrong("requested certificate not in the response");
      }
    }
  }
  last_good_body.assign(body.data(), body.size());
  last_good_client = instance_;
  return CheckResult::Ok();
}

}  // namespace onepass::load
