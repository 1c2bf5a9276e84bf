#!/usr/bin/env bats
# shellcheck source-path=SCRIPTDIR/../..
# loadtest/dnsperf-bench.sh, run briefly: each run ends when dnsperf has sent its passes over
# the three queries (--queries), 10 s at most per server, so every query sent is either
# answered or lost (none cut off by the time limit). One row per queries-per-connection value
# and server, numbers in every column, the ratios to NSD, and no query lost by onepassd (zone
# and frontend mode, onepassd's default keepalive), one query per connection or all on one. With
# --keepalive-ms 0 onepassd's close after each answer loses about 2% of the persistent shape's
# 6,000 queries (dnsperf sends its next query before it reads the close): what the second test
# would catch.
# Binaries: $ONEPASS_BIN_DIR, else the first of build/ci, build/release, build/asan, build/dev
# that holds onepassd.

setup() {
  export ONEPASS_BENCH_LOCK=$BATS_TEST_TMPDIR/bench.lock
  local root dir
  root=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  for dir in ${ONEPASS_BIN_DIR:-} "$root/build/ci" "$root/build/release" "$root/build/asan" "$root/build/dev"; do
    if [ -x "$dir/server/onepassd" ]; then
      BIN_DIR=$dir
      break
    fi
  done
  [ -n "${BIN_DIR:-}" ] || { echo "no build holds onepassd (build one, or set ONEPASS_BIN_DIR)" >&2; return 1; }
  SCRIPT=$root/loadtest/dnsperf-bench.sh
  OUT=$BATS_TEST_TMPDIR/out
}

# cells QPC SERVER: that row of the printed table, one cell per line.
cells() { grep -E "^\| $1 \| $2 \|" "$OUT" | tr '|' '\n' | sed 's/^ *//; s/ *$//' | sed '/^$/d'; }

# check_rows QPC COMPLETED SERVER...: each server's row is complete, numeric, with COMPLETED
# answers; onepassd's (zone, fwd) lost none; NSD's ratios are 1.
check_rows() {
  local qpc=$1 completed=$2 server row
  shift 2
  grep -qx '| queries/conn | server | queries/s | lost | completed | server cpu us/query | qps / NSD | cpu / NSD | SYNs dropped |' "$OUT"
  for server in "$@"; do
    mapfile -t row < <(cells "$qpc" "$server")
    echo "row $qpc $server: ${row[*]}"
    [ "${#row[@]}" -eq 9 ]
    [[ ${row[2]} =~ ^[0-9]+(\.[0-9]+)?$ ]]  # queries/s
    [[ ${row[3]} =~ ^[0-9]+$ ]]             # lost
    [[ ${row[5]} =~ ^[0-9]+(\.[0-9]+)?$ ]]  # cpu us/query
    [[ ${row[6]} =~ ^[0-9]+\.[0-9]{3}$ ]]   # qps / NSD
    [[ ${row[8]} =~ ^[0-9]+$ ]]             # SYNs dropped
    [ "$((row[3] + row[4]))" -eq "$completed" ]
    case $server in zone|fwd) [ "${row[3]}" -eq 0 ] ;; nsd) [ "${row[6]}" = 1.000 ] ;; esac
  done
}

@test "dnsperf-bench, one query per connection: every server measured, onepassd loses none" {
  timeout 200 "$SCRIPT" --bin "$BIN_DIR" --seconds 10 --queries 40 --qpc 1 --results '' > "$OUT" 2>&1 ||
    { cat "$OUT"; false; }
  check_rows 1 120 zone nsd knot fwd dnsdist || { cat "$OUT"; false; }
  # fwd / dnsdist; CPU n/a (bench_lib.sh ratio) when dnsdist used less than one clock tick
  # (/proc/PID/stat's resolution) in this short run
  grep -qE '^\| 1 \| [0-9.]+ \| ([0-9.]+|n/a) \|$' "$OUT"
}

@test "dnsperf-bench, persistent connections: onepassd with its default flags loses none" {
  timeout 200 "$SCRIPT" --bin "$BIN_DIR" --seconds 10 --queries 2000 --qpc 0 \
    --servers "zone nsd fwd" --results '' > "$OUT" 2>&1 || { cat "$OUT"; false; }
  check_rows all 6000 zone nsd fwd || { cat "$OUT"; false; }
}
