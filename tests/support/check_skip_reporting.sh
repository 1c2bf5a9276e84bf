#!/usr/bin/env bash
# Fakes a missing peer tool (PATH without kdig) on a test that needs it and checks how the skip
# is reported (tests/support/test_main.cc): exit 77 (ctest: Skipped) locally, a failure under
# CI=true, and the skipped cases counted as such in ONEPASS_TEST_CASES_FILE.
# Usage: check_skip_reporting.sh DNS_CLIENTS_TEST_BINARY
# The two runs here skip on purpose. Their case counts go to a file of this script's own, never
# to the caller's ONEPASS_TEST_CASES_FILE: scripts/test.sh sums that file into its closing
# summary, where these deliberate skips would read as 4 real cases that did not run.
set -uo pipefail
bin="$1"
filter='--gtest_filter=DnsClientsTest.Kdig*'
empty_path=$(mktemp -d)
cases="$empty_path.cases"
trap 'rmdir "$empty_path"; rm -f "$cases"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$(timeout 60 env -u CI ONEPASS_TEST_CASES_FILE="$cases" PATH="$empty_path" "$bin" "$filter" 2>&1)
rc=$?
echo "$out" | tail -n 5
[ "$rc" -eq 77 ] || fail "locally, a skipped test must exit 77 (ctest: Skipped), got $rc"
grep -q '\[  SKIPPED \]' <<<"$out" || fail "no SKIPPED line"
grep -q '\[  PASSED  \] 0 tests' <<<"$out" || fail "a skipped test must not count as passed"
# "<program> <passed> <failed> <skipped>", skipped as many as GoogleTest's own summary says.
skipped_lines=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?, listed below:$/\1/p' <<<"$out")
[ -n "$skipped_lines" ] || fail "no '[  SKIPPED ] N tests, listed below:' summary"
[ "$(cat "$cases")" = "$(basename "$bin") 0 0 $skipped_lines" ] ||
  fail "case counts: want '$(basename "$bin") 0 0 $skipped_lines', got '$(cat "$cases")'"

out=$(timeout 60 env -u ONEPASS_TEST_CASES_FILE CI=true PATH="$empty_path" "$bin" "$filter" 2>&1)
rc=$?
echo "$out" | tail -n 2
if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then fail "under CI=true a skip must fail, got exit $rc"; fi
grep -q 'in CI a skip is a failure' <<<"$out" || fail "no explanation under CI=true"
echo "ok: skipped locally (exit 77), failed under CI=true (exit $rc), cases counted as skipped"
