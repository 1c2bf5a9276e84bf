#!/usr/bin/env bash
# Fakes a missing peer tool (PATH without kdig) on a test that needs it and checks how the skip
# is reported (tests/support/test_main.cc): exit 77 (ctest: Skipped) locally, a failure under
# CI=true. Usage: check_skip_reporting.sh DNS_CLIENTS_TEST_BINARY
set -uo pipefail
bin="$1"
filter='--gtest_filter=DnsClientsTest.Kdig*'
empty_path=$(mktemp -d)
trap 'rmdir "$empty_path"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$(timeout 60 env -u CI PATH="$empty_path" "$bin" "$filter" 2>&1)
rc=$?
echo "$out" | tail -n 5
[ "$rc" -eq 77 ] || fail "locally, a skipped test must exit 77 (ctest: Skipped), got $rc"
grep -q '\[  SKIPPED \]' <<<"$out" || fail "no SKIPPED line"
grep -q '\[  PASSED  \] 0 tests' <<<"$out" || fail "a skipped test must not count as passed"

out=$(timeout 60 env CI=true PATH="$empty_path" "$bin" "$filter" 2>&1)
rc=$?
echo "$out" | tail -n 2
if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then fail "under CI=true a skip must fail, got exit $rc"; fi
grep -q 'in CI a skip is a failure' <<<"$out" || fail "no explanation under CI=true"
echo "ok: skipped locally (exit 77), failed under CI=true (exit $rc)"
