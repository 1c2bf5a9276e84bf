#!/usr/bin/env bash
# Soak: onepassd --handler dns at a fraction of its measured capacity, with hostile connections
# mixed in (loadtest/hostile_clients.py: dribblers, never-readers, garbage, oversize), printing
# every interval what it served, the good clients' errors by kind, the server's RSS, open
# descriptors, and the host's orphaned sockets and TCP memory (/proc/net/sockstat). Not a CI
# test: run it by hand (10 minutes by default).
#
#   loadtest/soak.sh [--minutes 10] [--fraction 0.8] [--hostile-percent 1] [--interval 10]
#                    [--server-cpus 0] [--client-cpus 1] [--bin DIR]
#
# Memory and descriptors should stay flat (the summary compares the last interval with the
# first, ±5%) and the good clients should see no error. Exit status 1 when either fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"

minutes=10
fraction=0.8
hostile_percent=1
interval=10
server_cpus=0
client_cpus=1
BIN_DIR=""
COMMON_OPTIONS="server-cpus client-cpus bin"
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --fraction) fraction=$2; shift 2 ;;
    --hostile-percent) hostile_percent=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    *) common_option "$@"; shift "$OPTION_WORDS" ;;
  esac
done
BIN_DIR_FALLBACK=dev
find_binaries onepassd load

work=$(mktemp -d)
server_pid=""
hostile_pid=""
# shellcheck disable=SC2317  # run by the trap
cleanup() {
  if [ -n "$hostile_pid" ]; then kill "$hostile_pid" 2>/dev/null || true; fi
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$onepassd" --handler dns --listen 127.0.0.1:0 --cpus "$server_cpus" >"$work/out" 2>"$work/err" &
server_pid=$!
for _ in $(seq 100); do grep -q '^ready' "$work/out" 2>/dev/null && break; sleep 0.1; done
target=$(sed -n 's/^listening on //p' "$work/out" | head -1)
[ -n "$target" ] || { echo "soak: onepassd did not start:" >&2; cat "$work/err" >&2; exit 1; }
port=${target##*:}

threads=$(count_cpus "$client_cpus")
# Capacity: closed loop, 5 s.
capacity=$("$load" --target "$target" --qname www.example.com. --duration 5 --concurrency 64 \
  --threads "$threads" --cpus "$client_cpus" --timeout-ms 3000 | sed -n 's/^ *rate *\([0-9.]*\) conn.*/\1/p')
rate=$(awk -v c="$capacity" -v f="$fraction" 'BEGIN { printf "%d", c * f }')
hostile_rate=$(awk -v r="$rate" -v p="$hostile_percent" 'BEGIN { printf "%.1f", r * p / 100 }')
seconds=$((minutes * 60))
echo "soak: capacity $capacity conn/s; good load $rate conn/s, hostile $hostile_rate conn/s, ${minutes} min"

# One interval longer than the good load, so that every sample sees it running.
python3 "$here/hostile_clients.py" 127.0.0.1 "$port" "$hostile_rate" "$((seconds + interval))" \
  >"$work/hostile" 2>&1 &
hostile_pid=$!

sockstat() { awk '/^TCP:/ { print "orphans=" $5 " tcp_mem_pages=" $11 }' /proc/net/sockstat; }
first_rss="" first_fds="" last_rss="" last_fds="" good_errors=0
printf '%6s %9s %12s %s\n' "t[s]" "served" "good_errors" "server and host"
for ((t = interval; t <= seconds; t += interval)); do
  report=$("$load" --target "$target" --qname www.example.com. --rate "$rate" --duration "$interval" \
    --threads "$threads" --cpus "$client_cpus" --timeout-ms 3000 2>&1 || true)
  errors=$(sed -n 's/.* ok, \([0-9]*\) errors.*/\1/p' <<<"$report")
  good_errors=$((good_errors + ${errors:-1}))
  # The tester lists errors by kind under its totals when there are any.
  kinds=""
  if [ "${errors:-1}" != 0 ]; then kinds=$(sed -n '2,12p' <<<"$report" | tr -s ' ' | tr '\n' ';'); fi
  kill -USR1 "$server_pid"
  sleep 0.2
  stats=$(grep -o 'stats .*' "$work/err" | tail -1)
  rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$server_pid/status")
  fds=$(find "/proc/$server_pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
  [ -z "$first_rss" ] && { first_rss=$rss; first_fds=$fds; }
  last_rss=$rss last_fds=$fds
  printf '%6d %9s %12s rss_kb=%s fds=%s %s server_errors=%s timeouts=%s rejected=%s unread_aborts=%s %s\n' \
    "$t" "$(stats_field served "$stats")" "${errors:-?}" "$rss" "$fds" "$(sockstat)" \
    "$(stats_field errors "$stats")" "$(stats_field timeouts "$stats")" "$(stats_field rejected "$stats")" \
    "$(stats_field unread_aborts "$stats")" "$kinds"
done
wait "$hostile_pid" || true
hostile_pid=""
cat "$work/hostile"
flat() { awk -v a="$1" -v b="$2" 'BEGIN { d = (b - a) / a; exit !(d <= 0.05 && d >= -0.05) }'; }
verdict=0
echo "summary: good-client errors $good_errors; RSS ${first_rss} -> ${last_rss} kB; descriptors ${first_fds} -> ${last_fds}"
[ "$good_errors" -eq 0 ] || { echo "soak: FAIL: good clients saw errors"; verdict=1; }
flat "$first_rss" "$last_rss" || { echo "soak: FAIL: RSS not flat (±5%)"; verdict=1; }
# Descriptors: the hostile connections parked at the moment of sampling vary; compare with a
# floor of 50 so that a handful more does not read as a leak.
flat "$((first_fds + 50))" "$((last_fds + 50))" || { echo "soak: FAIL: descriptors not flat"; verdict=1; }
[ "$verdict" -eq 0 ] && echo "soak: PASS"
exit "$verdict"
