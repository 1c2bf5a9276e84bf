// main() of every onepass_cc_test: GoogleTest's, plus the rule that a skipped test never
// passes as a success. GTEST_SKIP alone leaves the exit status at 0, so ctest would count a
// test whose peer tool (kdig, nsd, openssl...) is missing as passed. Here:
//  - all ran and passed, some skipped: exit kSkipExitCode, which onepass_cc_test declares as
//    the test's SKIP_RETURN_CODE, so ctest reports "***Skipped";
//  - the same under CI=true (set by CI, whose install script brings every tool): exit 1, a
//    failure: in CI a skip can only mean something is missing that must not be.
// A failure wins over a skip.
// With ONEPASS_TEST_CASES_FILE set (scripts/test.sh), each run also appends one line, "<program>
// <passed> <failed> <skipped>", its GoogleTest cases, so that the closing summary counts the
// cases that ran and not only the ctest entries (one per binary).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/skip.h"

namespace {

// One line, one write(2) with O_APPEND: ctest runs binaries in parallel into the same file.
void AppendCaseCounts(const char* program, const testing::UnitTest& unit) {
  const char* path = std::getenv("ONEPASS_TEST_CASES_FILE");
  if (path == nullptr || *path == '\0') return;
  const char* name = std::strrchr(program, '/');
  char line[512];
  const int length = std::snprintf(
      line, sizeof(line), "%s %d %d %d\n", name != nullptr ? name + 1 : program,
      unit.successful_test_count(), unit.failed_test_count(), unit.skipped_test_count());
  const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || length <= 0) return;
  ssize_t ignored = write(fd, line, static_cast<size_t>(std::min<int>(length, sizeof(line) - 1)));
  (void)ignored;
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleMock(&argc, argv);
  const int status = RUN_ALL_TESTS();
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  AppendCaseCounts(argv[0], unit);
  if (status != 0 || unit.skipped_test_count() == 0) return status;
  if (onepass::testing::InCi()) {
    std::fprintf(stderr,
                 "%d test(s) skipped under CI=true: in CI a skip is a failure (see the SKIPPED "
                 "lines above for what was missing)\n",
                 unit.skipped_test_count());
    return 1;
  }
  return onepass::testing::kSkipExitCode;
}
