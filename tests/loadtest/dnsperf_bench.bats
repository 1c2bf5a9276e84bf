#!/usr/bin/env bats
# shellcheck source-path=SCRIPTDIR/../..
# loadtest/dnsperf-bench.sh, run briefly (2 s per server and shape): one row per
# queries-per-connection value and server, numbers in every column, the ratios to NSD, and no
# query lost by onepassd (zone and frontend mode, --keepalive-ms on), one query per connection
# or all on one. (With --keepalive-ms 0, onepassd's close after each answer loses about 1% of
# the queries of the persistent shape: dnsperf sends its next query before it reads the close.)
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
}

# row QPC SERVER: that row of the printed table, its cells one per line (no bars).
row() { grep -E "^\| $1 \| $2 \|" "$BATS_TEST_TMPDIR/out" | tr '|' '\n' | sed 's/^ *//; s/ *$//' | sed '/^$/d'; }

@test "dnsperf-bench: every server and shape measured, ratios to NSD, onepassd loses nothing" {
  timeout 240 "$SCRIPT" --bin "$BIN_DIR" --seconds 2 --qpc "1 0" --results '' \
    > "$BATS_TEST_TMPDIR/out" 2>&1 || { cat "$BATS_TEST_TMPDIR/out"; false; }
  grep -qx '| queries/conn | server | queries/s | lost | completed | server cpu us/query | qps / NSD | cpu / NSD |' \
    "$BATS_TEST_TMPDIR/out"
  local qpc server cells
  for qpc in 1 all; do
    for server in zone nsd knot fwd dnsdist; do
      mapfile -t cells < <(row "$qpc" "$server")
      [ "${#cells[@]}" -eq 8 ] || { echo "row $qpc $server: ${cells[*]}"; cat "$BATS_TEST_TMPDIR/out"; false; }
      [[ ${cells[2]} =~ ^[0-9]+(\.[0-9]+)?$ ]]       # queries/s
      [[ ${cells[3]} =~ ^[0-9]+$ ]]                  # lost
      [[ ${cells[4]} =~ ^[0-9]+$ ]]                  # completed
      [[ ${cells[5]} =~ ^[0-9]+(\.[0-9]+)?$ ]]       # cpu us/query
      [[ ${cells[6]} =~ ^[0-9]+\.[0-9]{3}$ ]]        # qps / NSD
      [ "${cells[4]}" -gt 0 ] || { echo "row $qpc $server: ${cells[*]}"; cat "$BATS_TEST_TMPDIR/out"; false; }
    done
    [ "$(row "$qpc" nsd | sed -n 7p)" = 1.000 ]
    [ "$(row "$qpc" zone | sed -n 4p)" = 0 ] || { cat "$BATS_TEST_TMPDIR/out"; false; }
    [ "$(row "$qpc" fwd | sed -n 4p)" = 0 ] || { cat "$BATS_TEST_TMPDIR/out"; false; }
  done
  grep -qE '^\| all \| [0-9.]+ \| [0-9.n/a]+ \|$' "$BATS_TEST_TMPDIR/out"
}
