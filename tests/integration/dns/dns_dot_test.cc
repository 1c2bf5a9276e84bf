// DNS over TLS end to end (RFC 7858): the real onepassd with --tls-listen, asked by real
// clients. getdns (strict, authenticated), kdig +tls (verifying the chain and the name) gives the
// same answers as kdig +tcp on the plain port for the whole differential corpus, padded to
// blocks of 468 bytes over TLS only (RFC 8467); dig +tls answers;
// openssl s_client selects ALPN "dot" and resumes from a saved session ("Reused"); clients that
// give up at every step of the handshake (FIN or RST), a ClientHello of 16 KB, plain DNS on the TLS
// port and a TLS 1.2 renegotiation leave the server serving, each counted.
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/differential_corpus.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/integration/dns/kdig_comparison.h"
#include "tests/integration/dns/nsd_process.h"
#include "tests/support/loopback_port.h"
#include "tests/support/metrics_client.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/dns/dns_test_util.h"
#include "tests/unit/server/tls/tls_test_client.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass::dns {
namespace {

using onepass::testing::RunCommand;
using onepass::testing::ServerProcess;
using onepass::testing::TcpClient;
using ::testing::HasSubstr;

class DnsDotTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new tls::testing::TestPkiDir();
    auto server = StartServer();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }
  static absl::StatusOr<std::unique_ptr<ServerProcess>> StartServer() {
    return ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--tls-listen",
                                 "127.0.0.1:0", "--tls-cert", pki_->chain_file(), "--tls-key",
                                 pki_->key_file(), "--tls12", "--workers", "1"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete pki_;
    pki_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(server_, nullptr); }

  static std::string Tls() { return absl::StrCat(server_->tls_port()); }
  // One framed query, as s_client's input: the server answers it and closes with
  // close_notify, after the session ticket (which s_client then saves).
  static std::string FramedQuery() {
    const std::vector<uint8_t> query = testing::Framed(testing::MakeQuery("www.example.com", "A"));
    return {reinterpret_cast<const char*>(query.data()), query.size()};
  }
  static std::vector<std::string> KdigTls() {
    return {"+tls", absl::StrCat("+tls-ca=", pki_->ca_file()), "+tls-hostname=dot.example.test"};
  }
  static std::string Run(const std::vector<std::string>& argv, const std::string& input = "") {
    auto result = RunCommand(argv, absl::Seconds(20), input);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) return "";
    return result->out + result->err;
  }
  // The server still answers over TLS, verified.
  static void ExpectServing() {
    auto answer = testing::KdigAnswer(server_->tls_port(), KdigTls(), {"www.example.com", "A"});
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_THAT(*answer, HasSubstr("192.0.2.80"));
  }

  static tls::testing::TestPkiDir* pki_;
  static ServerProcess* server_;
};
tls::testing::TestPkiDir* DnsDotTest::pki_ = nullptr;
ServerProcess* DnsDotTest::server_ = nullptr;

TEST_F(DnsDotTest, KdigOverTlsAnswersAsPlainTcpForTheWholeCorpus) {
  const std::vector<testing::CorpusQuery> corpus =
      testing::ReadCorpus(ONEPASS_SOURCE_DIR "/tests/integration/dns/differential_queries.txt");
  int compared = 0;
  int padded = 0;
  for (const testing::CorpusQuery& q : corpus) {
    const std::optional<std::vector<std::string>> query = testing::KdigQueryArgs(q);
    if (!query.has_value()) continue;
    // kdig pads its queries over TLS (RFC 7830, 8467): the plain one is padded alike, so both
    // ask the same. What differs is kdig's line about the TLS session and the padding of the
    // answer, over TLS only.
    auto plain = testing::KdigAnswer(server_->port(), {"+tcp", "+padding"}, *query);
    auto tls = testing::KdigAnswer(server_->tls_port(), KdigTls(), *query);
    ASSERT_TRUE(plain.ok()) << q.line << ": " << plain.status();
    ASSERT_TRUE(tls.ok()) << q.line << ": " << tls.status();
    std::string tls_text = *tls;
    ASSERT_TRUE(absl::StartsWith(tls_text, ";; TLS session (TLS1.3)")) << tls_text;
    tls_text.erase(0, tls_text.find('\n') + 1);
    EXPECT_THAT(*plain, ::testing::Not(HasSubstr(";; PADDING:"))) << q.line;
    if (const size_t at = tls_text.find(";; PADDING: "); at != std::string::npos) {
      tls_text.erase(at, tls_text.find('\n', at) + 1 - at);
      ++padded;
    }
    EXPECT_EQ(tls_text, *plain) << q.line;
    ++compared;
  }
  EXPECT_GT(compared, 50);
  EXPECT_GT(padded, compared / 2);  // all but BADVERS, which answers EDNS(1)
}

// RFC 8467 §4.1 through kdig: +padding over TLS gets answers padded with an EDNS(0) Padding
// option to a multiple of 468 bytes (answer, NXDOMAIN with DNSSEC, NODATA); the same query over
// plain TCP, or without a padding option over TLS, gets none.
TEST_F(DnsDotTest, KdigPaddingGetsAnswersOfBlocksOf468OverTlsOnly) {
  struct Case {
    std::string name;
    std::vector<std::string> args;
    bool padded;
  };
  const std::string tcp = absl::StrCat(server_->port());
  std::vector<Case> cases = {
      {"tls", {"www.example.com", "A"}, true},
      {"tls nxdomain dnssec", {"+dnssec", "nx.example.com", "AAAA"}, true},
      {"tls nodata", {"www.example.com", "MX"}, true},
      {"tls without padding", {"+nopadding", "+edns", "www.example.com", "A"}, false},
      {"plain tcp", {"+tcp", "+padding=468", "www.example.com", "A"}, false},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> argv = {"kdig", "@127.0.0.1", "+timeout=5", "+retry=0"};
    if (c.name == "plain tcp") {
      argv.insert(argv.end(), {"-p", tcp});
    } else {
      argv.insert(argv.end(), {"-p", Tls()});
      for (const std::string& arg : KdigTls()) argv.push_back(arg);
      if (c.args[0] != "+nopadding") argv.push_back("+padding=468");
    }
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const std::string out = Run(argv);
    EXPECT_THAT(out, HasSubstr(";; EDNS PSEUDOSECTION:")) << out;
    const size_t at = out.find(";; Received ");
    ASSERT_NE(at, std::string::npos) << out;
    const int received = std::atoi(out.c_str() + at + 12);
    if (c.padded) {
      EXPECT_THAT(out, ::testing::ContainsRegex(";; PADDING: [0-9]+ B")) << out;
      EXPECT_EQ(received % 468, 0) << out;
    } else {
      EXPECT_THAT(out, ::testing::Not(HasSubstr("PADDING"))) << out;
      EXPECT_NE(received % 468, 0) << out;
    }
  }
}

TEST_F(DnsDotTest, DigOverTlsAnswers) {
  const std::string out = Run(
      {"dig", "+tls", "+tries=1", "+time=5", "@127.0.0.1", "-p", Tls(), "www.example.com", "A"});
  EXPECT_THAT(out, HasSubstr("status: NOERROR"));
  EXPECT_THAT(out, ::testing::ContainsRegex(
                       "www\\.example\\.com\\.\\s+3600\\s+IN\\s+A\\s+192\\.0\\.2\\.80"));
  EXPECT_THAT(out, HasSubstr("(TLS)"));
}

// Frontend mode over TLS: kdig +tls through onepassd's frontend gets what kdig +notcp gets from
// the NSD behind it, for the corpus (the upstream answers reach the TLS layer like any other).
TEST_F(DnsDotTest, FrontendOverTlsAnswersAsTheBackend) {
  auto nsd = testing::NsdProcess::Start(
      {{"example.com", ONEPASS_SOURCE_DIR "/tests/data/example.com.zone"}});
  ASSERT_TRUE(nsd.ok()) << nsd.status();
  auto frontend =
      testing::StartFrontend({absl::StrCat("127.0.0.1:", (*nsd)->port())},
                             {"--tls-listen", "127.0.0.1:0", "--tls-cert", pki_->chain_file(),
                              "--tls-key", pki_->key_file(), "--dns-cache-entries", "0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const std::vector<testing::CorpusQuery> corpus =
      testing::ReadCorpus(ONEPASS_SOURCE_DIR "/tests/integration/dns/differential_queries.txt");
  int compared = 0;
  for (const testing::CorpusQuery& q : corpus) {
    const std::optional<std::vector<std::string>> query = testing::KdigQueryArgs(q);
    if (!query.has_value()) continue;
    auto direct = testing::KdigAnswer((*nsd)->port(), {"+notcp", "+ignore", "+padding"}, *query);
    auto tls = testing::KdigAnswer((*frontend)->tls_port(), KdigTls(), *query);
    ASSERT_TRUE(direct.ok()) << q.line << ": " << direct.status();
    ASSERT_TRUE(tls.ok()) << q.line << ": " << tls.status();
    std::string tls_text = *tls;
    tls_text.erase(0, tls_text.find('\n') + 1);  // kdig's line about the TLS session
    EXPECT_EQ(tls_text, *direct) << q.line;
    ++compared;
  }
  EXPECT_GT(compared, 50);
}

TEST_F(DnsDotTest, GetdnsStubAuthenticatesTheServerAndGetsTheAnswer) {
  // getdns in strict mode (-m): the TLS transport only, the name authenticated against the CA.
  const std::string config = pki_->WriteFile(
      "getdns.json", absl::StrCat("{ \"tls_ca_file\": \"", pki_->ca_file(), "\" }\n"));
  const std::string out = Run({"getdns_query", "-C", config, "-s",
                               absl::StrCat("@127.0.0.1#", Tls(), "~dot.example.test"), "-l", "L",
                               "-m", "www.example.com", "A", "+return_call_reporting"});
  EXPECT_THAT(out, HasSubstr("\"tls_auth_status\": <bindata of \"Success\">"));
  EXPECT_THAT(out, HasSubstr("GETDNS_TRANSPORT_TLS"));
  EXPECT_THAT(out, HasSubstr("<bindata for 192.0.2.80>"));
  EXPECT_THAT(out, HasSubstr("GETDNS_RESPSTATUS_GOOD"));
}

TEST_F(DnsDotTest, OpensslSelectsDotAndResumesFromASavedSession) {
  const std::string session = pki_->WriteFile("session.pem", "");
  const std::string address = absl::StrCat("127.0.0.1:", Tls());
  const std::string first =
      Run({"openssl", "s_client", "-connect", address, "-alpn", "dot", "-CAfile", pki_->ca_file(),
           "-verify_return_error", "-sess_out", session, "-ign_eof"},
          FramedQuery());
  EXPECT_THAT(first, HasSubstr("ALPN protocol: dot"));
  EXPECT_THAT(first, HasSubstr("Verify return code: 0 (ok)"));
  // s_client lists AES-256-GCM first; the server's order (AES-128-GCM first) wins.
  EXPECT_THAT(first, HasSubstr("New, TLSv1.3, Cipher is TLS_AES_128_GCM_SHA256"));
  const std::string second = Run({"openssl", "s_client", "-connect", address, "-alpn", "dot",
                                  "-CAfile", pki_->ca_file(), "-sess_in", session, "-ign_eof"},
                                 FramedQuery());
  EXPECT_THAT(second, HasSubstr("Reused, TLSv1.3"));
}

// The ClientHello of a real client, cut at every byte boundary that matters: the client sends
// that much and closes (FIN), or resets (RST). The NSD defect was a crash loop on this.
// The server process's open descriptors (its sockets among them).
int OpenDescriptors(pid_t pid) {
  int count = 0;
  if (DIR* dir = opendir(absl::StrCat("/proc/", pid, "/fd").c_str())) {
    while (readdir(dir) != nullptr) ++count;
    closedir(dir);
  }
  return count;
}

TEST_F(DnsDotTest, ClientsGivingUpAtEveryStepOfTheHandshakeLeaveItServing) {
  const int descriptors_before = OpenDescriptors(server_->pid());
  tls::testing::ClientOptions options;
  tls::testing::TestTlsClient client(options);
  client.Step();
  const std::string hello = client.TakeOutput();
  ASSERT_GT(hello.size(), 100u);
  for (size_t cut : {size_t{0}, size_t{1}, size_t{3}, size_t{5}, size_t{6}, hello.size() / 2,
                     hello.size() - 1, hello.size()}) {
    for (bool reset : {false, true}) {
      auto tcp = TcpClient::Connect("127.0.0.1", server_->tls_port());
      ASSERT_TRUE(tcp.ok());
      if (cut > 0) {
        ASSERT_TRUE(tcp->Send(hello.substr(0, cut)).ok());
      }
      if (reset) {
        const linger abort_close = {.l_onoff = 1, .l_linger = 0};
        setsockopt(tcp->fd(), SOL_SOCKET, SO_LINGER, &abort_close, sizeof(abort_close));
      } else {
        tcp->ShutdownWrite();
        (void)tcp->ReadUntilClose();  // the server's flight, or nothing
      }
    }
  }
  ExpectServing();
  // Nothing left behind: every one of those sockets is closed (a reset one may take until the
  // server next reads it; 5 s at most).
  int descriptors_after = OpenDescriptors(server_->pid());
  for (int i = 0; i < 100 && descriptors_after > descriptors_before; ++i) {
    usleep(50 * 1000);
    descriptors_after = OpenDescriptors(server_->pid());
  }
  EXPECT_LE(descriptors_after, descriptors_before);
}

TEST_F(DnsDotTest, CheckValidatesTheTlsFilesAndSighupReloadsThem) {
  // --check: the files as serving would load them, a key that belongs to another certificate
  // named, and the summary of good ones.
  auto bad = RunCommand({ONEPASSD_PATH, "--handler", "dns", "--check", "--tls-cert",
                         pki_->chain_file(), "--tls-key", pki_->other_key_file()},
                        absl::Seconds(20));
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->exit_code, 1);
  EXPECT_THAT(bad->err, HasSubstr(pki_->other_key_file()));
  auto good = RunCommand({ONEPASSD_PATH, "--handler", "dns", "--check", "--tls-cert",
                          pki_->chain_file(), "--tls-key", pki_->key_file()},
                         absl::Seconds(20));
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->exit_code, 0) << good->err;
  // Each on a line of its own (the TLS summary's last line, whichever the engine, once ran into
  // the next).
  EXPECT_THAT(good->out, HasSubstr("\ncheck: TLS certificate, key and ticket keys OK\n"));
  EXPECT_THAT(good->out, HasSubstr("EC prime256v1"));
  // A certificate that expires within 30 days: a warning on a line of its own.
  tls::testing::TestPkiDir expiring(
      {.not_after = absl::Now() + absl::Hours(24 * 10), .common_name = "dot.example.test"});
  auto soon = RunCommand({ONEPASSD_PATH, "--handler", "dns", "--check", "--tls-cert",
                          expiring.chain_file(), "--tls-key", expiring.key_file()},
                         absl::Seconds(20));
  ASSERT_TRUE(soon.ok());
  EXPECT_EQ(soon->exit_code, 0) << soon->err;
  EXPECT_THAT(soon->out, HasSubstr(absl::StrCat("\nwarning: --tls-cert ", expiring.chain_file(),
                                                ": the certificate expires on ")));

  // SIGHUP: a server whose certificate files are replaced serves the new certificate to new
  // connections (verified against the new CA), without a restart.
  tls::testing::TestPkiDir renewed({.common_name = "dot.example.test"});
  const std::string cert = pki_->WriteFile("live-cert.pem", pki_->chain_pem());
  const std::string key = pki_->WriteFile("live-key.pem", pki_->key_pem());
  const std::string metrics = absl::StrCat("127.0.0.1:", ::onepass::testing::FreeLoopbackPort());
  auto own = ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--tls-listen",
                                   "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--workers",
                                   "1", "--metrics-listen", metrics});
  ASSERT_TRUE(own.ok()) << own.status();
  const int port = (*own)->tls_port();
  const std::vector<std::string> query = {"www.example.com", "A"};
  const std::vector<std::string> new_ca = {"+tls", absl::StrCat("+tls-ca=", renewed.ca_file()),
                                           "+tls-hostname=dot.example.test"};
  ASSERT_TRUE(testing::KdigAnswer(port, KdigTls(), query).ok());
  EXPECT_FALSE(testing::KdigAnswer(port, new_ca, query).ok());
  // The client refused the certificate (its alert): counted as the client's doing, not as a
  // fault of the server.
  EXPECT_TRUE(::onepass::testing::WaitFor(
      [&] {
        return ::onepass::testing::ScrapeValue(
                   metrics, "onepass_tls_failures_total{reason=\"peer_alert\"}") +
                   ::onepass::testing::ScrapeValue(
                       metrics, "onepass_tls_failures_total{reason=\"peer_closed\"}") >=
               1;
      },
      absl::Seconds(5)));
  EXPECT_EQ(
      ::onepass::testing::ScrapeValue(metrics, "onepass_tls_failures_total{reason=\"internal\"}"),
      0);
  pki_->WriteFile("live-cert.pem", renewed.chain_pem());
  pki_->WriteFile("live-key.pem", renewed.key_pem());
  ASSERT_EQ(kill((*own)->pid(), SIGHUP), 0);
  bool renewed_served = false;
  for (int i = 0; i < 50 && !renewed_served; ++i) {
    renewed_served = testing::KdigAnswer(port, new_ca, query).ok();
    if (!renewed_served) usleep(100 * 1000);
  }
  EXPECT_TRUE(renewed_served) << (*own)->ReadStderr();
  EXPECT_THAT((*own)->ReadStderr(), HasSubstr("TLS certificate, key and ticket keys reloaded"));
  // The data reload of the same SIGHUP ends a little later than the certificate's.
  EXPECT_TRUE(::onepass::testing::WaitFor(
      [&] {
        return ::onepass::testing::ScrapeValue(metrics, "onepass_reloads_total") == 1 &&
               ::onepass::testing::ScrapeValue(metrics, "onepass_last_reload_success") == 1;
      },
      absl::Seconds(10)));

  // A key that does not match the certificate: the SIGHUP fails, visibly in the metrics, and
  // the previous certificate still serves.
  pki_->WriteFile("live-key.pem", pki_->key_pem());
  ASSERT_EQ(kill((*own)->pid(), SIGHUP), 0);
  EXPECT_TRUE(::onepass::testing::WaitFor(
      [&] {
        return ::onepass::testing::ScrapeValue(metrics, "onepass_reload_failures_total") == 1 &&
               ::onepass::testing::ScrapeValue(metrics, "onepass_last_reload_success") == 0;
      },
      absl::Seconds(10)))
      << (*own)->ReadStderr();
  EXPECT_TRUE(testing::KdigAnswer(port, new_ca, query).ok());
}

// RFC 7858 §3.4: a stub keeps its DoT connection for several queries; the default keeps it
// (a server of its own: the suite's one-shot kdig runs have taught the shared one that
// loopback clients never reuse a connection, server/core/reuse_learner.h).
TEST_F(DnsDotTest, KdigKeepopenGetsThreeAnswersOnOneConnection) {
  auto own = StartServer();
  ASSERT_TRUE(own.ok()) << own.status();
  auto result = RunCommand(
      {"kdig", "@127.0.0.1", "-p", absl::StrCat((*own)->tls_port()), "+tls",
       absl::StrCat("+tls-ca=", pki_->ca_file()), "+tls-hostname=dot.example.test", "+keepopen",
       "+noall", "+answer", "www.example.com", "A", "mail.example.com", "A", "example.com", "MX"},
      absl::Seconds(20));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0) << result->err << result->out;
  EXPECT_THAT(result->out, HasSubstr("www.example.com."));
  EXPECT_THAT(result->out, HasSubstr("mail.example.com."));
  EXPECT_THAT(result->out, HasSubstr("\tMX\t"));
  EXPECT_THAT(result->err, ::testing::Not(HasSubstr("peer has closed")));
  EXPECT_EQ((*own)->Stop(), 0);
  // One connection carried the three.
  EXPECT_EQ(::onepass::testing::StatValue((*own)->ReadStdout(), "tls_handshakes_full"), 1);
}

TEST_F(DnsDotTest, PlainDnsOnTheTlsPortAndRenegotiationAreRefused) {
  // A server of its own: its exit line counts these two alone.
  auto own = StartServer();
  ASSERT_TRUE(own.ok()) << own.status();
  ServerProcess* const server = own->get();
  const std::string port = absl::StrCat(server->tls_port());
  // Plain DNS on the TLS port: closed, no answer.
  auto tcp = TcpClient::Connect("127.0.0.1", server->tls_port());
  ASSERT_TRUE(tcp.ok());
  const std::vector<uint8_t> query = testing::Framed(testing::MakeQuery("www.example.com", "A"));
  ASSERT_TRUE(tcp->Send({reinterpret_cast<const char*>(query.data()), query.size()}).ok());
  auto reply = tcp->ReadUntilClose();
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(*reply, "");
  // TLS 1.2 (--tls12) renegotiation: s_client's "R" command asks for it; the server answers
  // with the no_renegotiation alert, the client gives up, and the server serves on.
  const std::string renegotiate =
      Run({"openssl", "s_client", "-connect", absl::StrCat("127.0.0.1:", port), "-tls1_2", "-alpn",
           "dot", "-CAfile", pki_->ca_file()},
          "R\n");
  EXPECT_THAT(renegotiate, HasSubstr("TLSv1.2"));
  EXPECT_THAT(renegotiate, HasSubstr("no renegotiation"));
  // And the other way round: kdig +tls to the plain port is closed at once, not left to time
  // out (its ClientHello read as a 5,635-byte DNS length).
  auto wrong_port = testing::KdigAnswer(server->port(), KdigTls(), {"www.example.com", "A"});
  EXPECT_FALSE(wrong_port.ok());
  auto answer = testing::KdigAnswer(server->tls_port(), KdigTls(), {"www.example.com", "A"});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_THAT(*answer, HasSubstr("192.0.2.80"));
  server->Stop();
  const std::string stats = server->ReadStdout();
  EXPECT_THAT(stats, HasSubstr("tls_failed{reason=\"not_tls\"}=1"));
  EXPECT_THAT(stats, HasSubstr("tls_failed{reason=\"peer_alert\"}=1"));
  EXPECT_THAT(stats, HasSubstr("tls12=1"));
  EXPECT_THAT(stats, HasSubstr("rejected_tls_on_plain=1"));
}

}  // namespace
}  // namespace onepass::dns
