// How a skipped test is reported (tests/support/test_main.cc, scripts/test.sh): as skipped
// locally, as a failure in CI.
#ifndef ONEPASS_TESTS_SUPPORT_SKIP_H_
#define ONEPASS_TESTS_SUPPORT_SKIP_H_

#include <cstdlib>
#include <cstring>

namespace onepass::testing {

// The exit status of a test binary whose tests passed except some that skipped; ctest's
// SKIP_RETURN_CODE for every onepass_cc_test (77: the Automake convention for "skipped").
inline constexpr int kSkipExitCode = 77;

// True when the CI environment variable is "true", as GitHub Actions, GitLab CI and most
// others set it.
inline bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_SUPPORT_SKIP_H_
