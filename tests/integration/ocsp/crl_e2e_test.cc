// End-to-end: CRLs served by onepassd --handler ocsp --crl-dir beside the OCSP responses,
// fetched with curl (whole, HEAD, byte ranges, 304 on both validators), read back with
// `openssl crl`, and downloaded by `openssl verify -crl_check -crl_download` through a
// certificate's CRL distribution point; a reload (SIGHUP) with a bad CRL, or with a FIFO in its
// place, keeps the old one serving and counts the failure, one with a new CRL swaps it in, and
// so does one under concurrent load, where every transfer is one whole version. A CRL of
// several megabytes goes by sendfile over HTTP, whole to a client that stalls and to one that
// does not, and encrypted from memory over HTTPS.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/support/loopback_port.h"
#include "tests/support/metrics_client.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/ocsp/test_crl.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass::ocsp {
namespace {

namespace fs = std::filesystem;
using ::onepass::testing::CommandResult;
using ::onepass::testing::RunCommand;
using ::onepass::testing::ServerProcess;

CommandResult RunOk(const std::vector<std::string>& argv) {
  absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(60));
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  EXPECT_FALSE(result->timed_out) << argv[0];
  return *result;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Replaces `path` atomically (rename), as a CA's publisher should.
void Publish(const std::string& path, const std::string& bytes) {
  const std::string temp = path + ".tmp";
  std::ofstream(temp, std::ios::binary) << bytes;
  fs::rename(temp, path);
}

// The value of header field `name` in `head` (the status line and fields), "" when absent.
std::string Field(const std::string& head, absl::string_view name) {
  const std::string key = absl::StrCat("\r\n", name, ": ");
  const size_t at = head.find(key);
  if (at == std::string::npos) return "";
  return head.substr(at + key.size(), head.find("\r\n", at + key.size()) - at - key.size());
}

class CrlEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/crl_e2e_" + std::to_string(getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/crl");
    const CommandResult data =
        RunOk({ONEPASS_SOURCE_DIR "/scripts/make-ocsp-testdata.sh", dir_ + "/data"});
    ASSERT_EQ(data.exit_code, 0) << data.err;
    const absl::Time now = absl::Now();
    first_ = ca_.MakeCrl(now - absl::Hours(1), now + absl::Hours(24 * 30), 40);
    Publish(dir_ + "/crl/ca.crl", first_);
    std::ofstream(dir_ + "/issuers.pem") << ca_.CertificatePem();
    metrics_ = absl::StrCat("127.0.0.1:", ::onepass::testing::FreeLoopbackPort());
    auto server = ServerProcess::Start({"--handler", "ocsp", "--listen", "127.0.0.1:0", "--workers",
                                        "2", "--ocsp-responses", dir_ + "/data/responses",
                                        "--crl-dir", dir_ + "/crl", "--crl-issuers",
                                        dir_ + "/issuers.pem", "--metrics-listen", metrics_});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  void TearDown() override {
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(), 0) << server_->ReadStderr();
    }
    fs::remove_all(dir_);
  }

  struct Fetched {
    std::string code, head, body;
  };
  Fetched Curl(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {"curl",         "-sS", "--max-time",   "10", "-o",
                                     dir_ + "/body", "-D",  dir_ + "/head", "-w", "%{http_code}"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(absl::StrCat("http://127.0.0.1:", server_->port(), "/crl/ca.crl"));
    const CommandResult result = RunOk(argv);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return {result.out, ReadFile(dir_ + "/head"), ReadFile(dir_ + "/body")};
  }

  std::string dir_;
  std::string first_;
  std::string metrics_;  // --metrics-listen ADDRESS:PORT
  testing::TestCrlIssuer ca_{"onepass CRL e2e CA"};
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(CrlEndToEndTest, CurlAndOpensslReadTheCrl) {
  const Fetched whole = Curl({});
  EXPECT_EQ(whole.code, "200");
  EXPECT_EQ(whole.body, first_);
  EXPECT_EQ(Field(whole.head, "Content-Type"), "application/pkix-crl");
  EXPECT_FALSE(Field(whole.head, "Last-Modified").empty());
  EXPECT_FALSE(Field(whole.head, "Expires").empty());
  const CommandResult crl =
      RunOk({"openssl", "crl", "-inform", "DER", "-in", dir_ + "/body", "-noout", "-issuer",
             "-nextupdate", "-CAfile", dir_ + "/issuers.pem"});
  EXPECT_EQ(crl.exit_code, 0) << crl.err;
  EXPECT_TRUE(absl::StrContains(crl.out, "onepass CRL e2e CA")) << crl.out;
  EXPECT_TRUE(absl::StrContains(crl.out + crl.err, "verify OK")) << crl.out << crl.err;

  const Fetched head = Curl({"-I"});
  EXPECT_EQ(head.code, "200");
  EXPECT_EQ(Field(head.head, "Content-Length"), std::to_string(first_.size()));
  const Fetched part = Curl({"-r", "100-199"});
  EXPECT_EQ(part.code, "206");
  EXPECT_EQ(part.body, first_.substr(100, 100));
  const Fetched tail = Curl({"-r", "-50"});
  EXPECT_EQ(tail.body, first_.substr(first_.size() - 50));
  const Fetched beyond = Curl({"-r", absl::StrCat(first_.size(), "-")});
  EXPECT_EQ(beyond.code, "416");
  const std::string etag = Field(whole.head, "ETag");
  EXPECT_EQ(Curl({"-H", "If-None-Match: " + etag}).code, "304");
  EXPECT_EQ(Curl({"-H", "If-Modified-Since: " + Field(whole.head, "Last-Modified")}).code, "304");

  // Any other method on a CRL path: 405 saying what a CRL takes (it used to list POST too);
  // an OCSP request POSTed to the OCSP path beside it is still answered.
  for (const char* method : {"POST", "PUT"}) {
    const Fetched post = Curl({"-X", method, "--data-binary", "x"});
    EXPECT_EQ(post.code, "405") << method;
    EXPECT_EQ(Field(post.head, "Allow"), "GET, HEAD") << post.head;
  }
  const CommandResult ocsp =
      RunOk({"curl", "-sS", "--max-time", "10", "-o", dir_ + "/ocsp.der", "-w", "%{http_code}",
             "--data-binary", "@" + dir_ + "/data/good.req.der", "-H",
             "Content-Type: application/ocsp-request",
             absl::StrCat("http://127.0.0.1:", server_->port(), "/")});
  EXPECT_EQ(ocsp.out, "200") << ocsp.err;
  const CommandResult read =
      RunOk({"openssl", "ocsp", "-respin", dir_ + "/ocsp.der", "-noverify", "-resp_text"});
  EXPECT_TRUE(absl::StrContains(read.out, "Cert Status: good")) << read.out << read.err;
}

// openssl verify fetches the CRL itself from the certificate's CRL distribution point.
TEST_F(CrlEndToEndTest, OpensslVerifyDownloadsTheCrlThroughTheDistributionPoint) {
  const std::string url = absl::StrCat("http://127.0.0.1:", server_->port(), "/crl/ca.crl");
  std::ofstream(dir_ + "/good.pem") << ca_.IssueLeafPem(1000, url);
  std::ofstream(dir_ + "/revoked.pem") << ca_.IssueLeafPem(5, url);  // the CRL lists 1..40
  const CommandResult good = RunOk({"openssl", "verify", "-crl_check", "-crl_download", "-CAfile",
                                    dir_ + "/issuers.pem", dir_ + "/good.pem"});
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  EXPECT_TRUE(absl::StrContains(good.out, "good.pem: OK")) << good.out << good.err;
  const CommandResult revoked = RunOk({"openssl", "verify", "-crl_check", "-crl_download",
                                       "-CAfile", dir_ + "/issuers.pem", dir_ + "/revoked.pem"});
  EXPECT_NE(revoked.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(revoked.out + revoked.err, "certificate revoked"))
      << revoked.out << revoked.err;
}

// A bad CRL, then a FIFO renamed in as ca.crl, each fail their reload (counted in
// onepass_reload_failures_total, the file named in the log) and the old CRL keeps serving; the
// FIFO is never opened, so the next reload, of a good CRL, is not stuck behind it.
TEST_F(CrlEndToEndTest, ReloadKeepsTheOldCrlOnABadFileOrAFifoAndSwapsAGoodOne) {
  const std::string etag = Field(Curl({}).head, "ETag");
  auto reload_failures = [&] {
    return ::onepass::testing::ScrapeValue(metrics_, "onepass_reload_failures_total");
  };
  ASSERT_TRUE(::onepass::testing::WaitFor([&] { return reload_failures() == 0; },
                                          absl::Seconds(10)));  // the metrics listener is up
  Publish(dir_ + "/crl/ca.crl", "not a CRL");
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  std::string log;
  EXPECT_TRUE(::onepass::testing::WaitFor(
      [&] {
        log += server_->ReadStderr();
        return absl::StrContains(log, "reload failed");
      },
      absl::Seconds(20)))
      << log;
  EXPECT_TRUE(absl::StrContains(log, "ca.crl: not one DER")) << log;
  EXPECT_EQ(Curl({}).body, first_);  // the old CRL still serves

  // It used to be passed over: the reload succeeded and /crl/ca.crl answered 404.
  ASSERT_EQ(mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  fs::rename(dir_ + "/fifo", dir_ + "/crl/ca.crl");
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  const std::string named = dir_ + "/crl/ca.crl is a FIFO, not a regular file";
  log.clear();
  EXPECT_TRUE(::onepass::testing::WaitFor(
      [&] {
        log += server_->ReadStderr();
        return absl::StrContains(log, "reload failed") && absl::StrContains(log, named);
      },
      absl::Seconds(20)))
      << log;
  EXPECT_TRUE(
      ::onepass::testing::WaitFor([&] { return reload_failures() == 2; }, absl::Seconds(10)))
      << reload_failures();
  const Fetched still = Curl({});
  EXPECT_EQ(still.code, "200");
  EXPECT_TRUE(still.body == first_) << still.body.size() << " bytes";

  const absl::Time now = absl::Now();
  const std::string second = ca_.MakeCrl(now, now + absl::Hours(24 * 30), 41);
  Publish(dir_ + "/crl/ca.crl", second);
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  std::string latest;
  EXPECT_TRUE(::onepass::testing::WaitFor(
      [&] {
        latest = Curl({}).body;
        return latest == second;
      },
      absl::Seconds(20)));
  EXPECT_NE(Field(Curl({}).head, "ETag"), etag);
}

// One GET of /crl/ca.crl on its own connection, as the CRL load test's clients send it.
struct Transfer {
  bool complete = false;  // a 200 whose body has its Content-Length
  std::string etag, body, error;
};
Transfer FetchOnce(int port) {
  Transfer transfer;
  absl::StatusOr<::onepass::testing::TcpClient> client =
      ::onepass::testing::TcpClient::Connect("127.0.0.1", port);
  if (!client.ok()) {
    transfer.error = std::string(client.status().message());
    return transfer;
  }
  if (absl::Status sent = client->Send("GET /crl/ca.crl HTTP/1.1\r\nHost: x\r\n\r\n"); !sent.ok()) {
    transfer.error = std::string(sent.message());
    return transfer;
  }
  absl::StatusOr<std::string> reply = client->ReadUntilClose(absl::Seconds(10));
  const size_t end = reply.ok() ? reply->find("\r\n\r\n") : std::string::npos;
  if (end == std::string::npos) {
    transfer.error = reply.ok() ? "no end of head" : std::string(reply.status().message());
    return transfer;
  }
  const std::string head = reply->substr(0, end + 2);
  transfer.body = reply->substr(end + 4);
  transfer.etag = Field(head, "ETag");
  transfer.complete = absl::StartsWith(head, "HTTP/1.1 200 ") &&
                      Field(head, "Content-Length") == std::to_string(transfer.body.size());
  if (!transfer.complete) transfer.error = head.substr(0, head.find("\r\n"));
  return transfer;
}

// Several clients fetch the CRL at once, each in a loop bounded in time, while it is replaced
// (rename) and SIGHUP sent, then replaced by a truncated DER and SIGHUP sent again. Every
// transfer is complete and byte for byte the old or the new CRL with that version's ETag (a
// response's head and body come from one snapshot, which a body sent by sendfile keeps alive
// until its last byte); the new one is served after the reload, and the truncated one fails
// the reload and is never served.
TEST_F(CrlEndToEndTest, ReplacedUnderConcurrentLoadEveryTransferIsOneWholeVersion) {
  constexpr int kClients = 4;
  const absl::Time now = absl::Now();
  const std::string second = ca_.MakeCrl(now, now + absl::Hours(24 * 30), 1000);  // ~37 KB
  const std::string third = ca_.MakeCrl(now, now + absl::Hours(24 * 30), 200);
  const std::string first_etag = Field(Curl({}).head, "ETag");
  ASSERT_FALSE(first_etag.empty());

  std::atomic<bool> stop{false};
  std::atomic<bool> bad_rejected{false};  // set once the truncated CRL's reload has failed
  std::atomic<int> old_seen{0}, new_seen{0}, new_in_a_row{0}, after_bad{0}, failed{0};
  std::mutex mutex;  // guards the two below
  std::string second_etag;
  std::vector<std::string> failures;  // the first few, for the message
  const absl::Time deadline = absl::Now() + absl::Seconds(90);
  auto fail = [&](std::string why) {
    failed.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex);
    if (failures.size() < 5) failures.push_back(std::move(why));
  };
  auto client_loop = [&] {
    while (!stop.load() && absl::Now() < deadline) {
      const bool after_bad_reload = bad_rejected.load();
      const Transfer transfer = FetchOnce(server_->port());
      if (!transfer.complete) {
        fail("incomplete: " + transfer.error);
      } else if (transfer.body == first_) {
        old_seen.fetch_add(1);
        new_in_a_row.store(0);
        if (transfer.etag != first_etag) fail("the old CRL with ETag " + transfer.etag);
        if (after_bad_reload) fail("the old CRL after the new one was loaded");
      } else if (transfer.body == second) {
        new_seen.fetch_add(1);
        new_in_a_row.fetch_add(1);
        if (after_bad_reload) after_bad.fetch_add(1);
        std::lock_guard<std::mutex> lock(mutex);
        if (second_etag.empty()) second_etag = transfer.etag;
        if (transfer.etag != second_etag || transfer.etag == first_etag) {
          failures.push_back("the new CRL with ETag " + transfer.etag);
          failed.fetch_add(1);
        }
      } else {
        fail(absl::StrCat("a body of ", transfer.body.size(), " bytes that is neither CRL"));
      }
    }
  };
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) clients.emplace_back(client_loop);
  // Stops and joins the clients on every way out of the test, an ASSERT's included.
  struct Joiner {
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~Joiner() {
      stop.store(true);
      for (std::thread& thread : threads) thread.join();
    }
  } joiner{stop, clients};
  const absl::Duration bound = deadline - absl::Now();

  ASSERT_TRUE(::onepass::testing::WaitFor([&] { return old_seen.load() >= 20 * kClients; }, bound));
  Publish(dir_ + "/crl/ca.crl", second);
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  // Both workers serve the new one: many transfers in a row, spread over the clients. It is
  // many times the size of the old (a CA's CRL grows), above the 16 KiB copied after the head:
  // it goes by sendfile from a file the reload made, which no restart is needed for.
  std::string log;
  ASSERT_TRUE(::onepass::testing::WaitFor(
      [&] {
        log += server_->ReadStderr();
        return new_in_a_row.load() >= 20 * kClients || absl::StrContains(log, "reload failed");
      },
      bound))
      << "the new CRL was not served after the reload";
  ASSERT_FALSE(absl::StrContains(log, "reload failed")) << log;

  Publish(dir_ + "/crl/ca.crl", third.substr(0, third.size() / 2));
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  ASSERT_TRUE(::onepass::testing::WaitFor(
      [&] {
        log += server_->ReadStderr();
        return absl::StrContains(log, "reload failed");
      },
      bound))
      << log;
  EXPECT_TRUE(absl::StrContains(log, "ca.crl: not one DER")) << log;
  bad_rejected.store(true);
  EXPECT_TRUE(::onepass::testing::WaitFor([&] { return after_bad.load() >= 20 * kClients; }, bound))
      << "too few transfers after the failed reload";
  stop.store(true);
  for (std::thread& thread : clients) thread.join();
  clients.clear();

  EXPECT_EQ(failed.load(), 0) << absl::StrJoin(failures, "\n");
  EXPECT_GE(old_seen.load(), 20 * kClients);
  EXPECT_GE(new_seen.load(), 40 * kClients);
  EXPECT_FALSE(second_etag.empty());
  EXPECT_EQ(Curl({}).body, second);
}

// A client with a small receive buffer that sends a GET and reads nothing until asked to: the
// server's sends fill up and the connection waits, parked, in the middle of its body.
class StalledClient {
 public:
  StalledClient(int port, const std::string& request) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    const int small = 16 * 1024;
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ =
        connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
        send(fd_, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size());
  }
  ~StalledClient() { close(fd_); }
  bool connected() const { return connected_; }
  // Everything until the server closes, within `timeout`.
  std::string ReadAll(absl::Duration timeout) {
    std::string text;
    const absl::Time deadline = absl::Now() + timeout;
    char chunk[65536];
    while (absl::Now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n <= 0) break;
      text.append(chunk, static_cast<size_t>(n));
    }
    return text;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// A CA's CRL of several megabytes: sent from the snapshot's sealed file by sendfile over HTTP
// (onepass_sendfile_bytes_total counts every byte of it) while the output buffers stay at
// 16 KiB; encrypted from the same memory over HTTPS (no sendfile without kernel TLS); and
// after a reload, from the new file.
TEST(CrlLargeEndToEndTest, MegabytesGoBySendfileOverHttpAndWholeOverHttps) {
  const std::string dir = ::testing::TempDir() + "/crl_large_" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir + "/crl");
  const CommandResult data =
      RunOk({ONEPASS_SOURCE_DIR "/scripts/make-ocsp-testdata.sh", dir + "/data"});
  ASSERT_EQ(data.exit_code, 0) << data.err;
  testing::TestCrlIssuer ca("onepass large CRL CA");
  const absl::Time now = absl::Now();
  const std::string crl = ca.MakeCrl(now - absl::Hours(1), now + absl::Hours(24 * 7), 250000);
  ASSERT_GT(crl.size(), size_t{5} << 20);
  Publish(dir + "/crl/big.crl", crl);
  std::ofstream(dir + "/issuers.pem") << ca.CertificatePem();
  ::onepass::tls::testing::TestPkiDir pki({.common_name = "crl.example.test"});
  const std::string metrics = absl::StrCat("127.0.0.1:", ::onepass::testing::FreeLoopbackPort());
  auto started = ServerProcess::Start({"--handler",        "ocsp",
                                       "--listen",         "127.0.0.1:0",
                                       "--workers",        "2",
                                       "--ocsp-responses", dir + "/data/responses",
                                       "--crl-dir",        dir + "/crl",
                                       "--crl-issuers",    dir + "/issuers.pem",
                                       "--tls-listen",     "127.0.0.1:0",
                                       "--tls-cert",       pki.chain_file(),
                                       "--tls-key",        pki.key_file(),
                                       "--metrics-listen", metrics});
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<ServerProcess> server = *std::move(started);
  const std::string url = absl::StrCat("http://127.0.0.1:", server->port(), "/crl/big.crl");
  auto curl = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), {"curl", "-sS", "--max-time", "30", "-o", dir + "/body"});
    const CommandResult result = RunOk(argv);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return ReadFile(dir + "/body");
  };

  // A stalled reader holds its connection in the middle of the body...
  StalledClient stalled(server->port(), "GET /crl/big.crl HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(stalled.connected());
  ASSERT_TRUE(::onepass::testing::WaitFor(
      [&] { return ::onepass::testing::ScrapeValue(metrics, "onepass_parked_total") >= 1; },
      absl::Seconds(10)));
  // ...while others get theirs: whole, a range from the middle, and the CRL verifies.
  EXPECT_TRUE(curl({url}) == crl);
  EXPECT_TRUE(curl({"-r", "3000000-3999999", url}) == crl.substr(3000000, 1000000));
  EXPECT_TRUE(curl({url}) == crl);
  const CommandResult whole = RunOk({"openssl", "crl", "-inform", "DER", "-in", dir + "/body",
                                     "-noout", "-CAfile", dir + "/issuers.pem"});
  EXPECT_TRUE(absl::StrContains(whole.out + whole.err, "verify OK")) << whole.out << whole.err;
  const std::string response = stalled.ReadAll(absl::Seconds(30));
  const size_t body_at = response.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos);
  EXPECT_TRUE(response.substr(body_at + 4) == crl) << response.size() << " bytes";

  const double by_sendfile =
      ::onepass::testing::ScrapeValue(metrics, "onepass_sendfile_bytes_total");
  EXPECT_EQ(by_sendfile, static_cast<double>(3 * crl.size() + 1000000));

  // HTTPS: the same bytes, encrypted a record at a time from the sealed memory.
  const std::string https =
      curl({"--cacert", pki.ca_file(), "--resolve",
            absl::StrCat("crl.example.test:", server->tls_port(), ":127.0.0.1"),
            absl::StrCat("https://crl.example.test:", server->tls_port(), "/crl/big.crl")});
  EXPECT_TRUE(https == crl) << https.size() << " bytes";
  EXPECT_EQ(::onepass::testing::ScrapeValue(metrics, "onepass_sendfile_bytes_total"), by_sendfile);

  // A reload brings a larger CRL in a new sealed file, which the workers (each with a
  // descriptor table of its own) did not have at start: it goes by sendfile too, whole.
  const std::string grown = ca.MakeCrl(now, now + absl::Hours(24 * 7), 300000);
  Publish(dir + "/crl/big.crl", grown);
  ASSERT_EQ(kill(server->pid(), SIGHUP), 0);
  std::string latest;
  EXPECT_TRUE(::onepass::testing::WaitFor(
      [&] {
        latest = curl({url});
        return latest.size() == grown.size();
      },
      absl::Seconds(20)));
  EXPECT_TRUE(latest == grown);
  EXPECT_TRUE(curl({url}) == grown);  // on either worker
  EXPECT_TRUE(curl({url}) == grown);
  EXPECT_GE(::onepass::testing::ScrapeValue(metrics, "onepass_sendfile_bytes_total"),
            by_sendfile + 3 * static_cast<double>(grown.size()));
  EXPECT_EQ(server->Stop(), 0) << server->ReadStderr();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace onepass::ocsp
