// NormalizeArguments: hyphenated flag names and repeated list flags, checked on its output and
// through absl::ParseCommandLine (what onepassd does with it).
#include "common/arguments.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "gtest/gtest.h"

ABSL_FLAG(std::vector<std::string>, test_files, {}, "a list flag, like --zone");
ABSL_FLAG(std::vector<std::string>, test_addresses, {}, "another list flag, like --listen");
ABSL_FLAG(std::string, test_text, "", "a plain string flag");
ABSL_FLAG(int, test_number, 0, "an int flag");

namespace onepass {
namespace {

std::vector<std::string> Normalize(std::vector<std::string> argv) {
  std::vector<char*> pointers;
  for (std::string& arg : argv) pointers.push_back(arg.data());
  return NormalizeArguments(static_cast<int>(pointers.size()), pointers.data());
}

using Args = std::vector<std::string>;

TEST(NormalizeArgumentsTest, Table) {
  struct Case {
    Args in;
    Args out;
  };
  const Case cases[] = {
      {{"p"}, {"p"}},
      {{"p", "--test-number=3", "--test-text", "a-b"},
       {"p", "--test_number=3", "--test_text", "a-b"}},
      // Repeats merge in order at the first one's place, in both spellings.
      {{"p", "--test-files", "a.zone", "--test-text=x", "--test_files=b.zone"},
       {"p", "--test_files=a.zone,b.zone", "--test_text=x"}},
      {{"p", "--test-files=a,b", "--test-files", "c"}, {"p", "--test_files=a,b,c"}},
      {{"p", "-test-files", "a", "-test_files", "b"}, {"p", "--test_files=a,b"}},
      // Two list flags keep their own values.
      {{"p", "--test-addresses", "1", "--test-files", "f", "--test-addresses=2"},
       {"p", "--test_addresses=1,2", "--test_files=f"}},
      // A single occurrence is rewritten but means the same.
      {{"p", "--test-files", "only"}, {"p", "--test_files=only"}},
      // Empty values vanish; all empty is an empty list.
      {{"p", "--test-files=", "--test-files", "a"}, {"p", "--test_files=a"}},
      {{"p", "--test-files="}, {"p", "--test_files="}},
      // A plain flag that repeats is left to Abseil (last wins).
      {{"p", "--test-text=a", "--test-text=b"}, {"p", "--test_text=a", "--test_text=b"}},
      // Missing value at the end: passed on for Abseil to report.
      {{"p", "--test-files"}, {"p", "--test_files"}},
      // Values are not flags; negative numbers are values; "--" ends the flags.
      {{"p", "--test-number", "-5", "positional"}, {"p", "--test_number", "-5", "positional"}},
      {{"p", "--", "--test-files", "x"}, {"p", "--", "--test-files", "x"}},
      // Unknown flags keep their (hyphen-normalized) spelling for Abseil's error message.
      {{"p", "--no-such-flag", "v"}, {"p", "--no_such_flag", "v"}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Normalize(c.in), c.out) << ::testing::PrintToString(c.in);
  }
}

TEST(NormalizeArgumentsTest, AbseilParsesTheMergedList) {
  std::vector<std::string> args =
      Normalize({"p", "--test-files", "a.zone", "--test-number", "7", "--test-files=b.zone,c.zone",
                 "--test-addresses", "127.0.0.1:0", "--test-files", "d.zone"});
  std::vector<char*> pointers;
  for (std::string& arg : args) pointers.push_back(arg.data());
  absl::ParseCommandLine(static_cast<int>(pointers.size()), pointers.data());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_files), Args({"a.zone", "b.zone", "c.zone", "d.zone"}));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_addresses), Args({"127.0.0.1:0"}));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_number), 7);
}

}  // namespace
}  // namespace onepass
