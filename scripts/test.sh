#!/usr/bin/env bash
# The README's second command: installs what is needed, builds, and passes every test:
#   1. RelWithDebInfo with -Werror: unit, end-to-end (real clients), differential, fuzz replay;
#   2. ASan+UBSan build of the same tests;
#   3. TSan build of the threaded server tests;
#   4. libFuzzer (clang) runs of every fuzz target for a bounded time;
#   5. the deploy scripts' tests (bats, shellcheck).
# Every step is bounded in time; the whole run stays well under 30 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

jobs=$(nproc)
step() { printf '\n=== %s\n' "$*"; }

step "build + test (ci preset: RelWithDebInfo, -Werror)"
cmake --preset ci >/dev/null
cmake --build build/ci -j"$jobs"
ctest --test-dir build/ci --output-on-failure -j"$jobs" --timeout 300

step "build + test under ASan/UBSan"
cmake --preset asan >/dev/null
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs" --timeout 600 -LE 'bench|no_asan'

step "build + test threaded code under TSan"
cmake --preset tsan >/dev/null
# Only what the tsan-labelled tests run: their binaries (test name = target name) and the
# programs they start. The single-threaded unit tests gain nothing from TSan.
tsan_tests=$(ctest --test-dir build/tsan -N -L tsan | sed -n 's/^ *Test *#[0-9]*: //p')
# shellcheck disable=SC2086
cmake --build build/tsan -j"$jobs" --target onepassd onepass-load onepass-reference $tsan_tests
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build/tsan --output-on-failure -j"$jobs" --timeout 600 -L tsan

step "fuzz every parser with libFuzzer"
scripts/fuzz.sh "${FUZZ_SECONDS:-20}"

if [ -d tests/deploy ]; then
  step "deploy scripts: shellcheck + bats"
  shellcheck -x deploy/onepass-rss deploy/onepass-sysctl deploy/*.sh deploy/lib/*.sh \
    tests/deploy/fake-ethtool tests/deploy/*.bash tests/deploy/*.bats
  timeout 600 bats tests/deploy
fi

step "all tests passed"
