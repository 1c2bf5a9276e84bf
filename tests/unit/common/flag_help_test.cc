// The --help printer shared by onepassd and onepass-load: which arguments ask for it, and the
// exact layout of a flag's entry.
#include "common/flag_help.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, help_test_timeout_ms, 250, "How long to wait [ms].");
ABSL_FLAG(std::string, help_test_name, "", "A name; empty means none.");

namespace onepass {
namespace {

TEST(FlagHelpTest, WantsHelp) {
  using Args = std::vector<std::string>;
  for (const char* arg : {"--help", "-help", "-h", "--helpshort"}) {
    EXPECT_TRUE(WantsHelp(Args{"prog", "--x=1", arg})) << arg;
  }
  EXPECT_FALSE(WantsHelp(Args{"prog"}));
  EXPECT_FALSE(WantsHelp(Args{"prog", "--helpful=1", "help"}));
  // Abseil's full listing of every flag stays reachable.
  EXPECT_FALSE(WantsHelp(Args{"prog", "--helpfull"}));
  // After "--" everything is positional.
  EXPECT_FALSE(WantsHelp(Args{"prog", "--", "--help"}));
  // argv[0] is the program, whatever its name.
  EXPECT_FALSE(WantsHelp(Args{"-h"}));
}

TEST(FlagHelpTest, DashedFlagName) {
  EXPECT_EQ(DashedFlagName("read_timeout_ms"), "read-timeout-ms");
  EXPECT_EQ(DashedFlagName("zone"), "zone");
}

TEST(FlagHelpTest, FormatsUsageThenEachFlagInTheOrderGiven) {
  const absl::CommandLineFlag* timeout = absl::FindCommandLineFlag("help_test_timeout_ms");
  const absl::CommandLineFlag* name = absl::FindCommandLineFlag("help_test_name");
  ASSERT_NE(timeout, nullptr);
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(FormatFlagHelp("prog: does things.", {name, timeout}),
            "prog: does things.\n"
            "\n"
            "Flags (--name value or --name=value):\n"
            "  --help-test-name  (default: none)\n"
            "      A name; empty means none.\n"
            "  --help-test-timeout-ms  (default: 250)\n"
            "      How long to wait [ms].\n");
  EXPECT_EQ(FormatFlagHelp("u", {}), "u\n\nFlags (--name value or --name=value):\n");
}

}  // namespace
}  // namespace onepass
