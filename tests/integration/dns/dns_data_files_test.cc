// End to end: the data files onepassd --handler dns opens, checked the same way wherever they
// are named (common/data_file.h). A zone's $INCLUDE of /dev/zero, of a FIFO, of a folder or of
// a file over --max-data-file-mb fails --check with a message at once (no abort, no hang) and
// fails a SIGHUP reload while the old zone keeps answering kdig; a --dnssec_keys pair whose
// .key is not the public half of its .private fails --check and a start (keys from ldns-keygen
// and from dnssec-keygen); and --check without --listen checks the data alone.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/kdig_comparison.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_for.h"

namespace onepass::dns {
namespace {

using onepass::testing::CommandResult;
using onepass::testing::OnepassdPath;
using onepass::testing::ProgramExists;
using onepass::testing::RunCommand;
using onepass::testing::ServerProcess;
using ::testing::HasSubstr;

class DataFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/onepass-data-files-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = absl::StrCat(dir_, "/", name);
    std::ofstream(path, std::ios::trunc) << text;
    return path;
  }
  // A zone of its own that includes `include` at line 4.
  std::string ZoneIncluding(const std::string& include) {
    return Write("top.zone", absl::StrCat("$ORIGIN files.test.\n$TTL 300\n"
                                          "@ IN SOA ns hm 1 3600 600 86400 300\n"
                                          "$INCLUDE ",
                                          include, "\n@ IN NS ns\nns IN A 192.0.2.53\n"));
  }
  // onepassd --check with `args`; 20 s at most, so that a hang fails instead of stalling.
  static CommandResult Check(std::vector<std::string> args) {
    args.insert(args.begin(), {OnepassdPath(), "--check", "--handler", "dns"});
    absl::StatusOr<CommandResult> result = RunCommand(args, absl::Seconds(20));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : CommandResult{};
  }

  std::string dir_;
};

// The A records kdig gets for `name` over TCP, "" if it gets no answer.
std::string KdigA(int port, const std::string& name) {
  absl::StatusOr<std::string> answer = testing::KdigAnswer(port, /*tcp=*/true, {name, "A"});
  return answer.ok() && absl::StrContains(*answer, "status: NOERROR") ? *answer : "";
}

TEST_F(DataFilesTest, CheckRefusesEveryIncludeThatIsNotASmallRegularFile) {
  const std::string fifo = absl::StrCat(dir_, "/fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = Write("big", std::string(3 << 20, ';') + "\n");
  struct Case {
    std::string include;
    std::string what;
  };
  const std::vector<Case> cases = {
      {"/dev/zero", "$INCLUDE file /dev/zero is not a regular file"},
      {fifo, absl::StrCat("$INCLUDE file ", fifo, " is not a regular file")},
      {dir_, absl::StrCat("$INCLUDE file ", dir_, " is not a regular file")},
      {big, absl::StrCat("$INCLUDE file ", big, " is larger than --max-data-file-mb (2 MiB)")},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.include);
    const std::string top = ZoneIncluding(c.include);
    const CommandResult result =
        Check({"--listen", "127.0.0.1:0", "--zone", top, "--max-data-file-mb", "2"});
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_code, 1) << result.err;  // not killed by std::bad_alloc
    EXPECT_THAT(result.err, HasSubstr(absl::StrCat(top, ":4: ", c.what)));
    EXPECT_THAT(result.out, ::testing::Not(HasSubstr("data OK")));
  }
  // The same zone with a good include is fine: the check can pass.
  Write("hosts", "www IN A 192.0.2.80\n");
  const CommandResult good =
      Check({"--listen", "127.0.0.1:0", "--zone", ZoneIncluding(absl::StrCat(dir_, "/hosts"))});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_THAT(good.out, HasSubstr("check: dns data OK"));
}

// SIGHUP onto a zone that now includes /dev/zero: the reload fails with the message, the
// process lives, and the old zone keeps answering.
TEST_F(DataFilesTest, SighupOntoADevZeroIncludeKeepsServingTheOldZone) {
  if (!ProgramExists("kdig")) GTEST_SKIP() << "kdig (knot-dnsutils) is not installed";
  Write("hosts", "www IN A 192.0.2.80\n");
  const std::string top = ZoneIncluding(absl::StrCat(dir_, "/hosts"));
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
      {"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1", "--zone", top});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  EXPECT_THAT(KdigA(port, "www.files.test."), HasSubstr("192.0.2.80"));

  ZoneIncluding("/dev/zero");
  ASSERT_EQ(kill((*server)->pid(), SIGHUP), 0);
  std::string log;
  EXPECT_TRUE(onepass::testing::WaitFor(
      [&] {
        log += (*server)->ReadStderr();
        return absl::StrContains(log, "still serving the previous data");
      },
      absl::Seconds(10)))
      << log;
  EXPECT_THAT(log, HasSubstr(absl::StrCat(top, ":4: $INCLUDE file /dev/zero is not a regular")));
  EXPECT_THAT(KdigA(port, "www.files.test."), HasSubstr("192.0.2.80"));
  EXPECT_EQ(kill((*server)->pid(), 0), 0);  // alive
  EXPECT_EQ((*server)->Stop(), 0);
  EXPECT_EQ(onepass::testing::StatValue((*server)->ReadStdout(), "reload_failures"), 1);
}

// --check opens no socket, so it needs no --listen: the data is checked alone, good or bad.
TEST_F(DataFilesTest, CheckWithoutListenChecksTheDataAlone) {
  const std::string zone = std::string(ONEPASS_SOURCE_DIR) + "/tests/data/example.com.zone";
  CommandResult result = Check({"--zone", zone});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("check: dns data OK"));
  const std::string bad = Write("bad.zone",
                                "$ORIGIN bad.test.\n@ 60 IN SOA ns hm 1 2 3 4 5\n"
                                "www 1x IN A 192.0.2.1\n");
  result = Check({"--zone", bad});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr(bad + ":3: bad TTL '1x'"));
  EXPECT_THAT(result.err, ::testing::Not(HasSubstr("listen")));
  // Other server flags are still checked.
  result = Check({"--zone", zone, "--backlog", "0"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("--backlog must be positive"));
  // A start still needs somewhere to listen.
  absl::StatusOr<CommandResult> start =
      RunCommand({OnepassdPath(), "--handler", "dns", "--zone", zone}, absl::Seconds(20));
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(start->exit_code, 1);
  EXPECT_THAT(start->err, HasSubstr("nothing to listen on"));
}

// A key generator as an operator runs it: its program, its flag for a KSK, and what else it
// needs to print only the key's name.
struct KeyTool {
  const char* program;
  const char* package;
  const char* ksk;
  const char* quiet;
};

class DnssecKeysTest : public DataFilesTest, public ::testing::WithParamInterface<KeyTool> {};

// Pairs made by ldns-keygen or dnssec-keygen: one ECDSA, one RSA. Each .key put beside the
// other's .private (another algorithm) and a second ECDSA key's .key beside the first's
// .private (another key) is refused by --check and by a start, naming both files.
TEST_P(DnssecKeysTest, PairsThatDoNotMatchAreRefused) {
  const KeyTool& tool = GetParam();
  if (!ProgramExists(tool.program)) {
    GTEST_SKIP() << tool.program << " (" << tool.package << ") is not installed";
  }
  auto keygen = [&](const std::string& args) {
    absl::StatusOr<CommandResult> made =
        RunCommand({"sh", "-c",
                    absl::StrCat("cd '", dir_, "' && ", tool.program, " ", tool.quiet, " ", args,
                                 " example.org")},
                   absl::Seconds(60));
    EXPECT_TRUE(made.ok() && made->exit_code == 0) << (made.ok() ? made->err : "");
    return absl::StrCat(dir_, "/", made.ok() ? absl::StripTrailingAsciiWhitespace(made->out) : "");
  };
  const std::string ecdsa = keygen(absl::StrCat("-a ECDSAP256SHA256 ", tool.ksk));
  const std::string rsa = keygen("-a RSASHA256 -b 1024");
  const std::string zone = std::string(ONEPASS_SOURCE_DIR) + "/tests/data/dnssec/example.org.zone";
  const std::vector<std::string> args = {"--zone", zone, "--dnssec_keys", dir_};
  CommandResult result = Check(args);
  ASSERT_EQ(result.exit_code, 0) << result.err;  // the pairs as made are fine

  std::filesystem::rename(rsa + ".key", rsa + ".key.real");
  std::filesystem::copy_file(ecdsa + ".key", rsa + ".key");
  result = Check(args);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr(absl::StrCat(
                              rsa, ".key and ", rsa,
                              ".private are not one key pair: the DNSKEY is algorithm 13 "
                              "(ECDSAP256SHA256), the private key algorithm 8 (RSASHA256)")));
  EXPECT_THAT(result.out, ::testing::Not(HasSubstr("data OK")));
  std::filesystem::remove(rsa + ".key");
  std::filesystem::rename(rsa + ".key.real", rsa + ".key");

  const std::string other = keygen("-a ECDSAP256SHA256");
  std::filesystem::copy_file(other + ".key", ecdsa + ".key",
                             std::filesystem::copy_options::overwrite_existing);
  result = Check(args);
  EXPECT_EQ(result.exit_code, 1);
  const std::string mismatch =
      absl::StrCat(ecdsa, ".key and ", ecdsa,
                   ".private are not one key pair: the DNSKEY's public key is not the one of "
                   "the private key");
  EXPECT_THAT(result.err, HasSubstr(mismatch));
  // A start refuses it the same way.
  std::vector<std::string> start_args = {"--handler", "dns", "--listen", "127.0.0.1:0"};
  start_args.insert(start_args.end(), args.begin(), args.end());
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(start_args);
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr(mismatch));
}

INSTANTIATE_TEST_SUITE_P(KeyTools, DnssecKeysTest,
                         ::testing::Values(KeyTool{"ldns-keygen", "ldnsutils", "-k", ""},
                                           KeyTool{"dnssec-keygen", "bind9-utils", "-f KSK", "-q"}),
                         [](const ::testing::TestParamInfo<KeyTool>& info) {
                           return std::string(info.param.program[0] == 'l' ? "Ldns" : "Bind");
                         });

}  // namespace
}  // namespace onepass::dns
