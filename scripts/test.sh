#!/usr/bin/env bash
# The README's second command: installs what is needed, builds, and passes every test:
#   1. every test (unit, end-to-end with real clients, differential against NSD, fuzz corpus
#      replay) in one ASan+UBSan build with -Werror;
#   2. the threaded tests (label tsan: the server and every end-to-end test) under TSan;
#   3. libFuzzer (clang) runs of every fuzz target for a bounded time;
#   4. the deploy scripts' tests (bats, shellcheck);
#   5. the documents: every file path, flag and section they name exists (scripts/check-docs.py).
# One sanitized build runs every test rather than a plain build and a sanitized one: on CI's
# 2 cores that keeps the whole run under 30 minutes. Every step is bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

jobs=$(nproc)
# Each step says how far into the run it starts, so a CI log shows where the 30 minutes go.
step() { printf '\n=== %s (at %d s)\n' "$*" "$SECONDS"; }
# Every ctest and bats run is tallied for the closing "N passed, N failed, N skipped" line. A
# failing run does not stop the script (the later steps still run and count); the script
# fails at the end. A skipped test is never counted as passed (a GoogleTest binary with a
# GTEST_SKIP exits 77, ctest's SKIP_RETURN_CODE: tests/support/test_main.cc), and under
# CI=true (the CI sets it; the install script brings every tool) a skip is a failure.
tally=$(mktemp)
# Each GoogleTest binary appends its case counts here (tests/support/test_main.cc).
ONEPASS_TEST_CASES_FILE=$(mktemp)
export ONEPASS_TEST_CASES_FILE
trap 'rm -f "$tally" "$ONEPASS_TEST_CASES_FILE"' EXIT
failed_runs=0
run_ctest() { ctest "$@" 2>&1 | tee -a "$tally" || failed_runs=$((failed_runs + 1)); }
run_bats() { timeout 600 bats --tap "$@" 2>&1 | tee -a "$tally" || failed_runs=$((failed_runs + 1)); }

step "build + test everything under ASan/UBSan (-Werror)"
cmake --preset asan >/dev/null
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  run_ctest --test-dir build/asan --output-on-failure -j"$jobs" --timeout 600 -LE 'bench|no_asan'

step "the TLS end-to-end tests again on the OpenSSL TLS engine (ONEPASS_TLS_ENGINE=openssl)"
# Above, every real client of those tests (kdig, dig, getdns, stubby, Unbound, kresd, OpenSSL,
# curl, rdapper, the hostile ones) met the default engine, our own TLS 1.3 handshake
# (server/tls/onepass/); here they meet OpenSSL's (--tls-engine openssl), and so does every
# TlsSession behaviour (server_tls_session_test); the interop test runs both engines itself.
ONEPASS_TLS_ENGINE=openssl ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1 run_ctest --test-dir build/asan --output-on-failure \
  -j"$jobs" --timeout 600 \
  -R '^(server_tls_session_test|dns_dot_test|dns_dot_resolvers_test|server_tls_test|rdap_e2e_test|ocsp_crl_e2e_test|server_allow_list_test)$'

step "tests that cannot run under a sanitizer (label no_asan: allocation counting), plain build"
# Preset plain: unoptimized and without debug information, the quickest to build; what these
# tests count does not depend on either.
cmake --preset plain >/dev/null
plain_tests=$(ctest --test-dir build/plain -N -L no_asan | sed -n 's/^ *Test *#[0-9]*: //p')
if [ -n "$plain_tests" ]; then
  # shellcheck disable=SC2086
  cmake --build build/plain -j"$jobs" --target $plain_tests
  run_ctest --test-dir build/plain --output-on-failure -j"$jobs" --timeout 300 -L no_asan
fi

step "build + test threaded code under TSan"
cmake --preset tsan >/dev/null
# Only what the tsan-labelled tests run: their binaries (test name = target name) and the
# programs they start. The single-threaded unit tests gain nothing from TSan.
tsan_tests=$(ctest --test-dir build/tsan -N -L tsan | sed -n 's/^ *Test *#[0-9]*: //p')
# shellcheck disable=SC2086
cmake --build build/tsan -j"$jobs" --target onepassd onepass-load onepass-reference $tsan_tests
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  run_ctest --test-dir build/tsan --output-on-failure -j"$jobs" --timeout 600 -L tsan

step "fuzz every parser with libFuzzer"
# 5 s per target, two at once: 21 targets take under a minute of CI's 30 (at 12 s the CI of
# 2026-12-03 took 29.3 minutes on a quiet machine, at 8 s 30.6). The corpora are replayed in full by the ASan
# ctest above; long runs belong outside CI: scripts/fuzz.sh SECONDS.
scripts/fuzz.sh "${FUZZ_SECONDS:-5}"

if [ -d tests/deploy ]; then
  step "deploy and benchmark scripts: shellcheck + bats"
  shellcheck -x deploy/onepass-rss deploy/onepass-sysctl deploy/onepass-bird-config deploy/onepass-health-agent \
    deploy/*.sh deploy/lib/*.sh loadtest/*.sh scripts/*.sh \
    tests/deploy/fake-ethtool tests/deploy/*.bash tests/deploy/*.bats tests/loadtest/*.bats \
    tests/scripts/*.bats
  run_bats tests/deploy
  # testssl.sh against the OpenSSL TLS engine too (onepassd reads ONEPASS_TLS_ENGINE).
  ONEPASS_TLS_ENGINE=openssl run_bats tests/deploy/dot_testssl.bats
  run_bats tests/loadtest
fi

step "documents: every path, flag and section they name exists (scripts/check-docs.py)"
run_bats tests/scripts
scripts/check-docs.py --bin build/asan || failed_runs=$((failed_runs + 1))

step "clang-format-14: every C++ file formatted"
scripts/check-format.sh || failed_runs=$((failed_runs + 1))

read -r passed failed skipped < <(scripts/tally-tests.sh "$tally")
step "summary"
echo "all: $passed passed, $failed failed, $skipped skipped"
read -r runs cases_passed cases_failed cases_skipped < <(awk \
  '{ runs++; p += $2; f += $3; s += $4 } END { printf "%d %d %d %d\n", runs, p, f, s }' \
  "$ONEPASS_TEST_CASES_FILE")
echo "GoogleTest cases in those runs: $cases_passed passed, $cases_failed failed," \
  "$cases_skipped skipped ($runs binary runs)"
# Which binaries skipped cases ("<program> <passed> <failed> <skipped>"): a skip ctest did not
# count (a binary run outside ctest, or one whose exit status hid it) is found here.
awk '$4 > 0 { print "  skipped cases: " $0 }' "$ONEPASS_TEST_CASES_FILE"
if [ "${CI:-}" = true ] && { [ "$skipped" -gt 0 ] || [ "$cases_skipped" -gt 0 ]; }; then
  echo "CI=true: $skipped skipped test(s), $cases_skipped skipped GoogleTest case(s) count as" \
    "failures (a tool or capability is missing)"
  exit 1
fi
if [ "$failed" -gt 0 ] || [ "$failed_runs" -gt 0 ]; then exit 1; fi
