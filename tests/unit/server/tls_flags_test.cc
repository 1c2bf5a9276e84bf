#include "server/tls_flags.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/time/clock.h"
#include "common/arguments.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onepass {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Which engine serves, from --tls-engine's value (empty: not given) and ONEPASS_TLS_ENGINE
// (null: unset).
struct EngineCase {
  const char* name;
  std::string flag_value;
  const char* from_env;
  std::string want;  // the engine, or empty when it must be an error
};

TEST(ChooseTlsEngineTest, TheFlagWhenGivenElseTheVariableElseTheDefault) {
  const std::string kDefault(kDefaultTlsEngine);
  const EngineCase cases[] = {
      {"nothing given: the default", "", nullptr, kDefault},
      {"an empty variable is unset", "", "", kDefault},
      {"the variable, without the flag", "", "onepass", "onepass"},
      {"the variable names openssl", "", "openssl", "openssl"},
      // The bug this fixes: "openssl", the default's name, given, wins over the variable.
      {"--tls-engine openssl wins over the variable", "openssl", "onepass", "openssl"},
      {"--tls-engine onepass wins over the variable", "onepass", "openssl", "onepass"},
      {"--tls-engine onepass, no variable", "onepass", nullptr, "onepass"},
      // A bad variable is not read when the flag decides.
      {"the flag makes a bad variable irrelevant", "openssl", "bogus", "openssl"},
      {"a bad variable", "", "bogus", ""},
      {"a bad flag", "bogus", nullptr, ""},
  };
  for (const EngineCase& c : cases) {
    SCOPED_TRACE(c.name);
    const absl::StatusOr<std::string> engine = ChooseTlsEngine(c.flag_value, c.from_env);
    if (c.want.empty()) {
      EXPECT_FALSE(engine.ok());
    } else {
      ASSERT_TRUE(engine.ok()) << engine.status();
      EXPECT_EQ(*engine, c.want);
    }
  }
}

TEST(ChooseTlsEngineTest, AnUnknownNameSaysWhereItCameFrom) {
  const absl::StatusOr<std::string> from_env = ChooseTlsEngine("", "onepas");
  ASSERT_FALSE(from_env.ok());
  EXPECT_EQ(from_env.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(from_env.status().message(), HasSubstr("ONEPASS_TLS_ENGINE=\"onepas\""));
  EXPECT_THAT(from_env.status().message(), HasSubstr("use openssl or onepass"));
  EXPECT_THAT(from_env.status().message(), Not(HasSubstr("--tls-engine")));

  const absl::StatusOr<std::string> from_flag = ChooseTlsEngine("onepas", "onepass");
  ASSERT_FALSE(from_flag.ok());
  EXPECT_THAT(from_flag.status().message(), HasSubstr("--tls-engine \"onepas\""));
  EXPECT_THAT(from_flag.status().message(), Not(HasSubstr("ONEPASS_TLS_ENGINE")));
}

// The real flag, parsed as onepassd parses its command line, and the real environment. Each
// test restores the flags (absl::FlagSaver) and the variable.
class TlsEngineFromFlagsTest : public ::testing::Test {
 protected:
  TlsEngineFromFlagsTest() {
    const char* old = std::getenv(kTlsEngineVariable);
    had_env_ = old != nullptr;
    if (had_env_) saved_env_ = old;
    unsetenv(kTlsEngineVariable);
  }
  ~TlsEngineFromFlagsTest() override {
    if (had_env_) {
      setenv(kTlsEngineVariable, saved_env_.c_str(), 1);
    } else {
      unsetenv(kTlsEngineVariable);
    }
  }

  // As onepassd's ServerMain: dashes in names made underscores, then absl's parse.
  static void Parse(std::vector<std::string> args) {
    args.insert(args.begin(), "tls_flags_test");
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    std::vector<std::string> normalized =
        NormalizeArguments(static_cast<int>(argv.size()), argv.data());
    std::vector<char*> cargs;
    for (std::string& arg : normalized) cargs.push_back(arg.data());
    absl::ParseCommandLine(static_cast<int>(cargs.size()), cargs.data());
  }

  absl::FlagSaver saver_;
  std::string saved_env_;
  bool had_env_ = false;
};

TEST_F(TlsEngineFromFlagsTest, DefaultIsOnepass) {
  const absl::StatusOr<std::string> engine = TlsEngineFromFlags();
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ(*engine, kDefaultTlsEngine);
  // Our own engine since every test of issue 39's list passed in CI on it.
  EXPECT_EQ(*engine, "onepass");
}

TEST_F(TlsEngineFromFlagsTest, TheVariableNamesTheEngineWithoutTheFlag) {
  setenv(kTlsEngineVariable, "openssl", 1);
  const absl::StatusOr<std::string> engine = TlsEngineFromFlags();
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ(*engine, "openssl");
}

TEST_F(TlsEngineFromFlagsTest, AnExplicitFlagWinsOverTheVariable) {
  for (const auto& [flag, variable] :
       {std::pair<std::string, const char*>{"onepass", "openssl"}, {"openssl", "onepass"}}) {
    SCOPED_TRACE(flag);
    setenv(kTlsEngineVariable, variable, 1);
    Parse({"--tls-engine", flag});
    const absl::StatusOr<std::string> engine = TlsEngineFromFlags();
    ASSERT_TRUE(engine.ok()) << engine.status();
    EXPECT_EQ(*engine, flag);
  }
}

TEST_F(TlsEngineFromFlagsTest, ABadVariableIsAStartUpErrorNamingIt) {
  setenv(kTlsEngineVariable, "gnutls", 1);
  const absl::StatusOr<std::string> engine = TlsEngineFromFlags();
  ASSERT_FALSE(engine.ok());
  EXPECT_THAT(engine.status().message(), HasSubstr("ONEPASS_TLS_ENGINE=\"gnutls\""));
  // Start-up (and --check) fails on it, with or without a certificate to serve.
  const absl::StatusOr<std::shared_ptr<const tls::TlsServerContext>> context =
      LoadTlsFromFlags(absl::Now(), {"dot"});
  ASSERT_FALSE(context.ok());
  EXPECT_THAT(context.status().message(), HasSubstr("ONEPASS_TLS_ENGINE=\"gnutls\""));
}

}  // namespace
}  // namespace onepass
