// CRLs beside the OCSP responses (crl_snapshot.h, crl_responder.h): the load-time checks, and
// the HTTP answers (validators, 304, HEAD, byte ranges) through CrlResponder.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "handlers/http/http_date.h"
#include "handlers/ocsp/crl_responder.h"
#include "handlers/ocsp/crl_snapshot.h"
#include "handlers/ocsp/ocsp_counters.h"
#include "handlers/ocsp/ocsp_handler.h"
#include "handlers/ocsp/ocsp_snapshot.h"
#include "tests/unit/handlers/ocsp/test_crl.h"

namespace onepass::ocsp {
namespace {

namespace fs = std::filesystem;
using testing::TestCrlIssuer;

const absl::Time kNow = absl::FromUnixSeconds(1800000000);

class CrlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/crl_test_" + std::to_string(getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << bytes;
  }

  absl::StatusOr<std::shared_ptr<const CrlSnapshot>> Load(const std::string& issuers = "",
                                                          size_t max_bytes = 1 << 20) {
    CrlLoadConfig config;
    config.dir = dir_;
    config.issuers_file = issuers;
    config.max_bytes = max_bytes;
    warnings_.clear();
    return LoadCrlDir(config, kNow, &warnings_);
  }

  std::string dir_;
  std::vector<std::string> warnings_;
  TestCrlIssuer ca_{"onepass CRL test CA"};
};

TEST_F(CrlTest, LoadsEveryCrlFileWithItsValidators) {
  const std::string der = ca_.MakeCrl(kNow - absl::Hours(1), kNow + absl::Hours(24 * 30));
  Write("ca1.crl", der);
  Write("ca2.crl", ca_.MakeCrl(kNow - absl::Hours(2), kNow + absl::Hours(24 * 30), 0));
  Write("readme.txt", "not a CRL, not loaded");
  auto crls = Load();
  ASSERT_TRUE(crls.ok()) << crls.status();
  EXPECT_EQ((*crls)->size(), 2u);
  const CrlEntry* entry = (*crls)->Find("ca1.crl");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->der, der);
  EXPECT_EQ(entry->etag.size(), 64u);
  EXPECT_EQ(entry->last_modified, http::HttpDate(kNow - absl::Hours(1)));
  EXPECT_EQ(entry->expires, http::HttpDate(kNow + absl::Hours(24 * 30)));
  EXPECT_EQ((*crls)->Find("readme.txt"), nullptr);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(CrlTest, BadFilesFailTheLoadNamingThem) {
  Write("bad.crl", "garbage");
  auto garbage = Load();
  ASSERT_FALSE(garbage.ok());
  EXPECT_TRUE(absl::StrContains(garbage.status().message(), "bad.crl: not one DER"))
      << garbage.status();
  Write("bad.crl", ca_.MakeCrl(kNow - absl::Hours(48), kNow - absl::Hours(1)));
  auto expired = Load();
  ASSERT_FALSE(expired.ok());
  EXPECT_TRUE(absl::StrContains(expired.status().message(), "expired")) << expired.status();
  Write("bad.crl", ca_.MakeCrl(kNow, kNow + absl::Hours(24)) + "x");
  EXPECT_FALSE(Load().ok());  // trailing bytes
}

// A NAME.crl that is not a regular file fails the load naming it and what it is (it used to be
// passed over: the load succeeded and the CRL answered 404), and is never opened: a FIFO without
// a writer would block the load. A symlink to a regular file is a CRL like any other.
TEST_F(CrlTest, EntriesThatAreNotRegularFilesFailTheLoadNamingThem) {
  struct Case {
    std::string name;
    std::function<void(const std::string& path)> make;
    std::string error;  // after "DIR/ca.crl "
  };
  const std::vector<Case> cases = {
      {"fifo", [](const std::string& path) { ASSERT_EQ(mkfifo(path.c_str(), 0600), 0); },
       "is a FIFO, not a regular file"},
      {"symlink to /dev/zero",
       [](const std::string& path) { ASSERT_EQ(symlink("/dev/zero", path.c_str()), 0); },
       "is a symlink to /dev/zero, a character device, not a regular file"},
      {"directory", [](const std::string& path) { ASSERT_TRUE(fs::create_directory(path)); },
       "is a directory, not a regular file"},
      {"dangling symlink",
       [](const std::string& path) { ASSERT_EQ(symlink("gone.der", path.c_str()), 0); },
       "is a symlink to gone.der, which does not exist"},
      {"symlink to a FIFO",
       [this](const std::string& path) {
         ASSERT_EQ(mkfifo((dir_ + "/pipe").c_str(), 0600), 0);
         ASSERT_EQ(symlink("pipe", path.c_str()), 0);
       },
       "is a symlink to pipe, a FIFO, not a regular file"},
      {"socket",
       [](const std::string& path) {
         const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
         sockaddr_un address{};
         address.sun_family = AF_UNIX;
         ASSERT_LT(path.size(), sizeof(address.sun_path));
         path.copy(address.sun_path, path.size());
         ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
         close(fd);
       },
       "is a socket, not a regular file"},
  };
  const std::string good = ca_.MakeCrl(kNow - absl::Hours(1), kNow + absl::Hours(24 * 30));
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    Write("good.crl", good);
    c.make(dir_ + "/ca.crl");
    auto crls = Load();
    ASSERT_FALSE(crls.ok());
    EXPECT_EQ(crls.status().message(), absl::StrCat(dir_, "/ca.crl ", c.error));
  }

  // Not named *.crl, or a dot-file: not a CRL, passed over as before.
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  Write("good.crl", good);
  ASSERT_EQ(mkfifo((dir_ + "/pipe").c_str(), 0600), 0);
  ASSERT_EQ(mkfifo((dir_ + "/.ca.crl").c_str(), 0600), 0);
  ASSERT_EQ(symlink("/dev/zero", (dir_ + "/zero").c_str()), 0);
  auto others = Load();
  ASSERT_TRUE(others.ok()) << others.status();
  EXPECT_EQ((*others)->size(), 1u);

  // A symlink to a regular file, relative or absolute, is read through.
  fs::create_directories(dir_ + "/store");
  Write("store/v2.der", good);
  ASSERT_EQ(symlink("store/v2.der", (dir_ + "/ca.crl").c_str()), 0);
  ASSERT_EQ(symlink((dir_ + "/ca.crl").c_str(), (dir_ + "/alias.crl").c_str()), 0);
  auto linked = Load();
  ASSERT_TRUE(linked.ok()) << linked.status();
  EXPECT_EQ((*linked)->size(), 3u);
  ASSERT_NE((*linked)->Find("ca.crl"), nullptr);
  EXPECT_EQ((*linked)->Find("ca.crl")->der, good);
  ASSERT_NE((*linked)->Find("alias.crl"), nullptr);
}

// --crl-max-bytes bounds what a load takes; a CRL of exactly that size loads.
TEST_F(CrlTest, TheSizeLimitFailsALargerCrl) {
  const std::string der = ca_.MakeCrl(kNow - absl::Hours(1), kNow + absl::Hours(24 * 30), 100);
  Write("ca.crl", der);
  auto fits = Load("", der.size());
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ((*fits)->Find("ca.crl")->der, der);
  auto larger = Load("", der.size() - 1);
  ASSERT_FALSE(larger.ok());
  EXPECT_TRUE(absl::StrContains(larger.status().message(), "ca.crl: ")) << larger.status();
  EXPECT_TRUE(absl::StrContains(larger.status().message(), "larger than --crl-max-bytes"))
      << larger.status();
}

TEST_F(CrlTest, NextUpdateSoonWarns) {
  Write("soon.crl", ca_.MakeCrl(kNow - absl::Hours(1), kNow + absl::Hours(24)));
  ASSERT_TRUE(Load().ok());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_TRUE(absl::StrContains(warnings_[0], "publish a new CRL")) << warnings_[0];
}

TEST_F(CrlTest, IssuerAndSignatureChecked) {
  Write("ca.crl", ca_.MakeCrl(kNow - absl::Hours(1), kNow + absl::Hours(24 * 30)));
  const std::string ours = dir_ + "/ours.pem";
  std::ofstream(ours) << ca_.CertificatePem();
  EXPECT_TRUE(Load(ours).ok());
  TestCrlIssuer other("another CA");
  const std::string theirs = dir_ + "/theirs.pem";
  std::ofstream(theirs) << other.CertificatePem();
  auto wrong = Load(theirs);
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(absl::StrContains(wrong.status().message(), "not in --crl-issuers"));
  // Same name, other key: the signature does not verify.
  TestCrlIssuer impostor("onepass CRL test CA");
  const std::string forged = dir_ + "/forged.pem";
  std::ofstream(forged) << impostor.CertificatePem();
  auto bad = Load(forged);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "signature")) << bad.status();
}

// The methods of a CRL path, through the OCSP handler that routes it: GET and HEAD read it;
// anything else (a POST as some clients send, PUT, OPTIONS) is 405 with `Allow: GET, HEAD`,
// which is what a CRL takes; the OCSP path keeps POST (RFC 6960 §A.1.1) and its own Allow.
TEST_F(CrlTest, OtherMethodsOnACrlPathGet405AllowingGetAndHeadOcspPostStaysAllowed) {
  Write("ca.crl", ca_.MakeCrl(kNow - absl::Hours(1), kNow + absl::Hours(24 * 30)));
  auto crls = Load();
  ASSERT_TRUE(crls.ok()) << crls.status();
  OcspHandlerConfig config;
  config.crls = *crls;
  OcspHandlerFactory factory(config, OcspSnapshot::FromResponses({}, kNow));
  HandlerCounters counters(std::size(kOcspCounters));
  std::unique_ptr<Handler> handler = factory.CreateHandler(counters);
  struct Case {
    std::string request;
    std::string status_line;
    std::string allow;  // "" when the answer has none
  };
  const std::string host = " HTTP/1.1\r\nHost: x\r\n";
  const std::vector<Case> cases = {
      {"GET /crl/ca.crl" + host + "\r\n", "HTTP/1.1 200 OK", ""},
      {"HEAD /crl/ca.crl" + host + "\r\n", "HTTP/1.1 200 OK", ""},
      {"POST /crl/ca.crl" + host +
           "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=b",
       "HTTP/1.1 405 Method Not Allowed", "GET, HEAD"},
      {"POST /crl/ca.crl" + host +
           "Content-Type: application/ocsp-request\r\nContent-Length: 2\r\n\r\n" +
           std::string("\x30\x00", 2),
       "HTTP/1.1 405 Method Not Allowed", "GET, HEAD"},
      {"PUT /crl/ca.crl" + host + "\r\n", "HTTP/1.1 405 Method Not Allowed", "GET, HEAD"},
      {"OPTIONS /crl/ca.crl" + host + "\r\n", "HTTP/1.1 405 Method Not Allowed", "GET, HEAD"},
      {"DELETE /crl/missing.crl" + host + "\r\n", "HTTP/1.1 405 Method Not Allowed", "GET, HEAD"},
      // The OCSP path: POST is an OCSP request (here malformed: an unsigned status, 200).
      {"POST /" + host + "Content-Type: application/ocsp-request\r\nContent-Length: 2\r\n\r\n" +
           std::string("\x30\x00", 2),
       "HTTP/1.1 200 OK", ""},
      {"PUT /" + host + "\r\n", "HTTP/1.1 405 Method Not Allowed", "GET, HEAD, POST"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.request);
    OutputBuffer out(factory.OutputBufferBytes());
    RequestContext context;
    context.now = kNow;
    const Verdict verdict = handler->Process(
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(c.request.data()), c.request.size()),
        context, out);
    EXPECT_EQ(verdict.action, Action::kWriteThenClose);
    EXPECT_EQ(verdict.consumed, c.request.size());
    const std::string response(reinterpret_cast<const char*>(out.data()), out.size());
    EXPECT_TRUE(absl::StartsWith(response, c.status_line + "\r\n")) << response.substr(0, 200);
    const size_t allow = response.find("\r\nAllow: ");
    if (c.allow.empty()) {
      EXPECT_EQ(allow, std::string::npos) << response.substr(0, 300);
    } else {
      ASSERT_NE(allow, std::string::npos) << response.substr(0, 300);
      EXPECT_EQ(response.substr(allow + 9, response.find("\r\n", allow + 9) - allow - 9), c.allow);
    }
  }
}

TEST(ByteRangeTest, Forms) {
  using K = ByteRange::Kind;
  struct Case {
    const char* field;
    K kind;
    uint64_t first, last;
  };
  for (const Case& c : std::vector<Case>{{"bytes=0-9", K::kRange, 0, 9},
                                         {"bytes=90-", K::kRange, 90, 99},
                                         {"bytes=-10", K::kRange, 90, 99},
                                         {"bytes=-500", K::kRange, 0, 99},
                                         {"bytes=50-5000", K::kRange, 50, 99},
                                         {"bytes=100-", K::kUnsatisfiable, 0, 0},
                                         {"bytes=-0", K::kUnsatisfiable, 0, 0},
                                         {"bytes=9-1", K::kIgnore, 0, 0},
                                         {"bytes=0-1,5-6", K::kIgnore, 0, 0},
                                         {"items=0-1", K::kIgnore, 0, 0},
                                         {"bytes=x-1", K::kIgnore, 0, 0},
                                         {"bytes=99999999999999999999-", K::kIgnore, 0, 0}}) {
    const ByteRange r = ParseByteRange(c.field, 100);
    EXPECT_EQ(r.kind, c.kind) << c.field;
    if (c.kind == K::kRange) {
      EXPECT_EQ(r.first, c.first) << c.field;
      EXPECT_EQ(r.last, c.last) << c.field;
    }
  }
}

class CrlResponderTest : public CrlTest {
 protected:
  void SetUp() override {
    CrlTest::SetUp();
    der_ = ca_.MakeCrl(kNow - absl::Hours(1), kNow + absl::Hours(24 * 30), 50);
    Write("ca.crl", der_);
    auto crls = Load();
    ASSERT_TRUE(crls.ok()) << crls.status();
    counters_ = std::make_unique<HandlerCounters>(std::size(kOcspCounters));
    responder_ = std::make_unique<CrlResponder>(*crls, *counters_);
    etag_ = (*crls)->Find("ca.crl")->etag;
  }

  std::string Get(const std::string& name, const std::string& fields = "",
                  const std::string& method = "GET") {
    request_text_ =
        absl::StrCat(method, " /crl/", name, " HTTP/1.1\r\nHost: x\r\n", fields, "\r\n");
    http::HttpRequest request;
    http::HttpLimits limits;
    EXPECT_EQ(http::ParseHttpRequest(request_text_, limits, request).status,
              http::HttpParseStatus::kComplete);
    OutputBuffer out(kCrlCopiedBodyMax + 1024);  // as OcspHandlerFactory sizes them
    const int answered = responder_->Respond(request, name, kNow, out);
    if (answered != 0) return absl::StrCat("error ", answered);
    attached_ = out.has_body();
    std::string response(reinterpret_cast<const char*>(out.data()), out.size());
    if (out.has_body()) {
      // What the server would send: the same bytes from memory and from the file.
      const SharedBody& body = out.body();
      std::string from_file(body.bytes.size(), '\0');
      EXPECT_EQ(pread(body.file, from_file.data(), from_file.size(),
                      static_cast<off_t>(body.file_offset)),
                static_cast<ssize_t>(from_file.size()));
      EXPECT_EQ(from_file,
                std::string(reinterpret_cast<const char*>(body.bytes.data()), body.bytes.size()));
      response += from_file;
    }
    return response;
  }
  static std::string Body(const std::string& response) {
    return response.substr(response.find("\r\n\r\n") + 4);
  }

  std::string der_, etag_, request_text_;
  bool attached_ = false;  // the last Get's body was attached, not copied
  std::unique_ptr<HandlerCounters> counters_;
  std::unique_ptr<CrlResponder> responder_;
};

TEST_F(CrlResponderTest, WholeCrlWithValidators) {
  const std::string r = Get("ca.crl");
  EXPECT_TRUE(absl::StartsWith(r, "HTTP/1.1 200 OK\r\n")) << r.substr(0, 100);
  EXPECT_TRUE(absl::StrContains(r, "\r\nContent-Type: application/pkix-crl\r\n"));
  EXPECT_TRUE(absl::StrContains(r, absl::StrCat("\r\nContent-Length: ", der_.size(), "\r\n")));
  EXPECT_TRUE(absl::StrContains(
      r, absl::StrCat("\r\nLast-Modified: ", http::HttpDate(kNow - absl::Hours(1)))));
  EXPECT_TRUE(absl::StrContains(
      r, absl::StrCat("\r\nExpires: ", http::HttpDate(kNow + absl::Hours(24 * 30)))));
  EXPECT_TRUE(absl::StrContains(r, absl::StrCat("\r\nETag: \"", etag_, "\"\r\n")));
  EXPECT_TRUE(absl::StrContains(r, "\r\nCache-Control: public, max-age=2592000\r\n"));
  EXPECT_TRUE(absl::StrContains(r, "\r\nAccept-Ranges: bytes\r\n"));
  EXPECT_EQ(Body(r), der_);
  const std::string head = Get("ca.crl", "", "HEAD");
  EXPECT_TRUE(Body(head).empty());
  EXPECT_EQ(head.substr(0, head.find("Date:")), r.substr(0, r.find("Date:")));
  EXPECT_EQ(Get("nosuch.crl"), "error 404");
}

TEST_F(CrlResponderTest, ConditionalRequestsGet304) {
  EXPECT_TRUE(absl::StartsWith(Get("ca.crl", absl::StrCat("If-None-Match: \"", etag_, "\"\r\n")),
                               "HTTP/1.1 304 "));
  EXPECT_TRUE(absl::StartsWith(Get("ca.crl", "If-None-Match: \"other\"\r\n"), "HTTP/1.1 200 "));
  EXPECT_TRUE(absl::StartsWith(
      Get("ca.crl", absl::StrCat("If-Modified-Since: ", http::HttpDate(kNow), "\r\n")),
      "HTTP/1.1 304 "));
  EXPECT_TRUE(absl::StartsWith(
      Get("ca.crl",
          absl::StrCat("If-Modified-Since: ", http::HttpDate(kNow - absl::Hours(2)), "\r\n")),
      "HTTP/1.1 200 "));
  const std::string not_modified = Get("ca.crl", "If-None-Match: *\r\n");
  EXPECT_TRUE(Body(not_modified).empty());
  EXPECT_TRUE(absl::StrContains(not_modified, absl::StrCat("ETag: \"", etag_, "\"")));
}

TEST_F(CrlResponderTest, ByteRanges) {
  const std::string part = Get("ca.crl", "Range: bytes=10-19\r\n");
  EXPECT_TRUE(absl::StartsWith(part, "HTTP/1.1 206 Partial Content\r\n")) << part.substr(0, 80);
  EXPECT_TRUE(absl::StrContains(part, absl::StrCat("Content-Range: bytes 10-19/", der_.size())));
  EXPECT_EQ(Body(part), der_.substr(10, 10));
  EXPECT_EQ(Body(Get("ca.crl", "Range: bytes=-5\r\n")), der_.substr(der_.size() - 5));
  const std::string beyond = Get("ca.crl", absl::StrCat("Range: bytes=", der_.size(), "-\r\n"));
  EXPECT_TRUE(absl::StartsWith(beyond, "HTTP/1.1 416 ")) << beyond.substr(0, 80);
  EXPECT_TRUE(absl::StrContains(beyond, absl::StrCat("Content-Range: bytes */", der_.size())));
  // If-Range with another validator: the whole CRL (RFC 9110 §13.1.5).
  EXPECT_TRUE(absl::StartsWith(Get("ca.crl", "Range: bytes=0-1\r\nIf-Range: \"old\"\r\n"),
                               "HTTP/1.1 200 "));
  EXPECT_TRUE(absl::StartsWith(
      Get("ca.crl", absl::StrCat("Range: bytes=0-1\r\nIf-Range: \"", etag_, "\"\r\n")),
      "HTTP/1.1 206 "));
  EXPECT_EQ(counters_->Read(static_cast<size_t>(OcspCounter::kCrlUnsatisfiable)), 1u);
}

// A CRL above kCrlCopiedBodyMax is not copied: the output holds the head and a body that
// points into the snapshot's sealed file, at the range's offset, and keeps the snapshot alive.
TEST_F(CrlResponderTest, LargeCrlIsAttachedNotCopied) {
  EXPECT_FALSE(attached_);
  const std::string large = ca_.MakeCrl(kNow - absl::Hours(1), kNow + absl::Hours(24 * 30), 2000);
  ASSERT_GT(large.size(), kCrlCopiedBodyMax);
  Write("large.crl", large);
  std::weak_ptr<const CrlSnapshot> watched;
  {
    auto crls = Load();
    ASSERT_TRUE(crls.ok()) << crls.status();
    watched = *crls;
    responder_ = std::make_unique<CrlResponder>(*crls, *counters_);
  }
  const std::string whole = Get("large.crl");
  EXPECT_TRUE(attached_);
  EXPECT_TRUE(absl::StartsWith(whole, "HTTP/1.1 200 OK\r\n"));
  EXPECT_EQ(Body(whole), large);
  const std::string part = Get("large.crl", "Range: bytes=1000-30999\r\n");
  EXPECT_TRUE(attached_);
  EXPECT_EQ(Body(part), large.substr(1000, 30000));
  const std::string tail = Get("large.crl", "Range: bytes=-100\r\n");
  EXPECT_FALSE(attached_);  // 100 bytes: copied
  EXPECT_EQ(Body(tail), large.substr(large.size() - 100));
  EXPECT_TRUE(Body(Get("large.crl", "", "HEAD")).empty());
  EXPECT_FALSE(attached_);

  // The body's owner is the snapshot: it outlives the responder (a reload) until sent.
  http::HttpRequest request;
  http::HttpLimits limits;
  const std::string text = "GET /crl/large.crl HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(http::ParseHttpRequest(text, limits, request).status, http::HttpParseStatus::kComplete);
  OutputBuffer out(kCrlCopiedBodyMax + 1024);
  ASSERT_EQ(responder_->Respond(request, "large.crl", kNow, out), 0);
  responder_.reset();
  EXPECT_FALSE(watched.expired());
  out.Clear();
  EXPECT_TRUE(watched.expired());
}

// A buffer too small for the head is refused whole (-1), never half written.
TEST_F(CrlResponderTest, NoRoomForTheHeadWritesNothing) {
  const std::string large = ca_.MakeCrl(kNow - absl::Hours(1), kNow + absl::Hours(24 * 30), 2000);
  Write("large.crl", large);
  auto crls = Load();
  ASSERT_TRUE(crls.ok()) << crls.status();
  CrlResponder responder(*crls, *counters_);
  http::HttpRequest request;
  http::HttpLimits limits;
  const std::string text = "GET /crl/large.crl HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(http::ParseHttpRequest(text, limits, request).status, http::HttpParseStatus::kComplete);
  OutputBuffer tiny(64);
  EXPECT_EQ(responder.Respond(request, "large.crl", kNow, tiny), -1);
  EXPECT_TRUE(tiny.empty());
}

}  // namespace
}  // namespace onepass::ocsp
