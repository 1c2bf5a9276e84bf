#!/usr/bin/env bash
# Reads the saved output of ctest and bats (TAP) runs and prints "PASSED FAILED SKIPPED".
# ctest's summary "N% tests passed, F tests failed out of T" counts skipped tests among the
# passed ones; they are listed after it as "<n> - <name> (Skipped)" under "The following tests
# did not run:", and are taken back out here. A test ctest could not run at all ("Not Run":
# missing binary) is in its failed count already. bats --tap: "ok N ... # skip ..." is
# skipped, "ok N" passed, "not ok N" failed.
# Usage: tally-tests.sh FILE
set -euo pipefail
awk '
  /tests passed, [0-9]+ tests? failed out of/ { total += $NF; failed += $4 }
  /^[ \t]*[0-9]+ - .* \(Skipped\)$/ { ctest_skipped++ }
  /^ok [0-9]+ .*# [sS][kK][iI][pP]/ { bats_skipped++; next }
  /^ok [0-9]+/ { bats_passed++ }
  /^not ok [0-9]+/ { bats_failed++ }
  END {
    printf "%d %d %d\n", total - failed - ctest_skipped + bats_passed, failed + bats_failed,
      ctest_skipped + bats_skipped
  }
' "$1"
