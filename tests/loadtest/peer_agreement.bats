#!/usr/bin/env bats
# shellcheck source-path=SCRIPTDIR/../..
# onepass-load agrees with the peers' tools on the same server and the same query: dnsperf -m
# tcp (one query per connection, and persistent connections), and kxdpgun -T (TCP from XDP, over
# veth from a network namespace). Each tool's count of answers must equal what the server
# itself counted ("served" in its exit stats line), and onepass-load's too.
# Binaries: $ONEPASS_BIN_DIR, else the first of build/ci, build/release, build/asan, build/dev
# that holds onepassd, onepass-load and onepass-reference.

setup() {
  export ONEPASS_BENCH_LOCK=$BATS_TEST_TMPDIR/bench.lock
  # shellcheck source=loadtest/bench_lib.sh
  source "$BATS_TEST_DIRNAME/../../loadtest/bench_lib.sh"
  local root dir
  root=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  for dir in ${ONEPASS_BIN_DIR:-} "$root/build/ci" "$root/build/release" "$root/build/asan" "$root/build/dev"; do
    if [ -x "$dir/server/onepassd" ] && [ -x "$dir/loadtest/onepass-load" ] &&
      [ -x "$dir/loadtest/onepass-reference" ]; then
      BIN_DIR=$dir
      break
    fi
  done
  [ -n "${BIN_DIR:-}" ] || { echo "no build holds onepassd, onepass-load and onepass-reference (build one, or set ONEPASS_BIN_DIR)" >&2; return 1; }
  printf 'www.example.com A\n' > "$BATS_TEST_TMPDIR/queries.txt"
}

teardown() {
  stop_server > /dev/null 2>&1 || true
  net_teardown
}

# stat_count STATS NAME: counter NAME from the server's exit stats line (stop_server prints it).
stat_count() { sed -n "s/.* $2=\\([0-9]*\\).*/\\1/p" <<< "$1" | head -n 1; }
served_count() { stat_count "$1" served; }
# answer_count: the server's DNS answers (NOERROR) from its exit stats line.
answer_count() { stat_count "$1" 'dns_responses{rcode="NOERROR"}'; }
accepted_count() { stat_count "$1" accepted; }

# dnsperf_field OUT LABEL: the number after "LABEL:" in dnsperf's statistics.
dnsperf_field() { awk -v label="$2:" '$0 ~ label { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) { print $i; exit } }' "$1"; }

@test "dnsperf -m tcp, one query per connection, and onepass-load: both counts are onepassd's" {
  # --keepalive-ms: with the single pass, dnsperf now and then loses a query to a closed
  # socket (issue 23's default question); the count checked is then the server's DNS answers.
  start_server "$BATS_TEST_TMPDIR/server.out" "$BIN_DIR/server/onepassd" --handler dns \
    --listen 127.0.0.1:0 --workers 1 --keepalive-ms 2000
  dnsperf -m tcp -s 127.0.0.1 -p "${SERVER_ADDR##*:}" -d "$BATS_TEST_TMPDIR/queries.txt" -n 300 \
    -c 8 -q 8 -t 5 -O num-queries-per-conn=1 > "$BATS_TEST_TMPDIR/dnsperf.out" 2>&1 ||
    { echo "dnsperf exited with status $?:"; cat "$BATS_TEST_TMPDIR/dnsperf.out"; false; }
  # dnsperf 2.10's num-queries-per-conn now and then opens a client's next connection and writes
  # nothing on it until its wait for that connection's answers (-t) runs out; it then writes the
  # held query, already counted as timed out, with the next one on a fresh connection. tcpdump
  # showed it (about 1 run in 15 on this 2-core VM, 8 queries at once, ids near 100): 8
  # connections silent for 5.0 s, then each query answered by onepassd within 2 ms of arriving,
  # and reported as "unexpected (maybe timed out) id". Its ledger does not always add up
  # either: about 1 run in 10 it counts a query as sent and "timed out" in a run far shorter
  # than -t, with no late answer or a late one under another id, while no byte of that query
  # reached the server (a connection it opened and closed unused). So dnsperf's ledger is
  # checked for its own consistency: it sent 300, and each one it did not count as completed it
  # counted as lost and reported as timed out. What the server did is checked on the server's
  # counters: every connection that carried a byte was answered (none closed, or cut by the
  # read timeout, holding a part of a request: closed_incomplete + read_timeouts are all
  # closed_unused), it answered every query dnsperf counted as completed and at most the 300,
  # and onepass-load's 400 exactly. A server that lost or never answered a query it was sent
  # fails that; one that stalled is caught by onepass-load's 5 s timeout.
  local report=$BATS_TEST_TMPDIR/dnsperf.out sent completed lost timed_out
  sent=$(dnsperf_field "$report" "Queries sent")
  completed=$(dnsperf_field "$report" "Queries completed")
  lost=$(dnsperf_field "$report" "Queries lost")
  timed_out=$(grep -c '^\[Timeout\] Query timed out: msg id [0-9]*$' "$report" || true)
  [ "$sent" = 300 ] || { cat "$report"; false; }
  [ "$((completed + lost))" = 300 ] || { cat "$report"; false; }
  [ "$lost" = "$timed_out" ] || { cat "$report"; false; }
  "$BIN_DIR/loadtest/onepass-load" --target "$SERVER_ADDR" --qname www.example.com. --count 400 \
    --concurrency 8 --timeout-ms 5000 --json "$BATS_TEST_TMPDIR/load.json"
  [ "$(json_number "$BATS_TEST_TMPDIR/load.json" ok)" = 400 ]
  local stats answers
  stats=$(stop_server)
  answers=$(answer_count "$stats")
  [ "$answers" -ge "$((completed + 400))" ] && [ "$answers" -le 700 ] ||
    { cat "$report"; echo "$stats"; false; }
  [ "$(($(stat_count "$stats" closed_incomplete) + $(stat_count "$stats" read_timeouts)))" = \
    "$(stat_count "$stats" closed_unused)" ] || { cat "$report"; echo "$stats"; false; }
  # dnsperf opens a client's next connection before it knows whether a query is left for it:
  # the last few are accepted and closed unused.
  [ "$(accepted_count "$stats")" -ge 700 ] || { echo "$stats"; false; }
}

# A client that sends its next query on the same connection after reading an answer (dnsperf -m
# tcp, persistent) loses none with onepassd's defaults (--keepalive-ms 2000 for DNS, as NSD and
# Knot keep connections), while clients that close after one answer are learned and get the
# single pass (--keepalive-learn, server/core/reuse_learner.h): onepass-load from another
# address, after its first connections, is answered and closed without a wait for its FIN.
@test "dnsperf -m tcp persistent against onepassd with default flags: no query lost; one-query clients get the single pass" {
  start_server "$BATS_TEST_TMPDIR/server.out" "$BIN_DIR/server/onepassd" --handler dns \
    --listen 127.0.0.1:0 --workers 1 --metrics-listen 127.0.0.1:0
  dnsperf -m tcp -s 127.0.0.1 -p "${SERVER_ADDR##*:}" -d "$BATS_TEST_TMPDIR/queries.txt" -n 2000 \
    -c 4 -q 8 -t 5 > "$BATS_TEST_TMPDIR/dnsperf.out" 2>&1
  [ "$(dnsperf_field "$BATS_TEST_TMPDIR/dnsperf.out" "Queries completed")" = 2000 ] ||
    { cat "$BATS_TEST_TMPDIR/dnsperf.out"; false; }
  [ "$(dnsperf_field "$BATS_TEST_TMPDIR/dnsperf.out" "Queries lost")" = 0 ]
  "$BIN_DIR/loadtest/onepass-load" --target "$SERVER_ADDR" --qname www.example.com. --count 400 \
    --concurrency 4 --timeout-ms 5000 --source 127.0.0.2 --json "$BATS_TEST_TMPDIR/load.json"
  [ "$(json_number "$BATS_TEST_TMPDIR/load.json" ok)" = 400 ]
  local metrics skipped
  metrics=$(sed -n 's/^metrics on //p' "$BATS_TEST_TMPDIR/server.out" | head -n 1)
  skipped=$(curl -sS --max-time 5 "http://$metrics/metrics" |
    sed -n 's/^onepass_keepalive_skipped_total \([0-9]*\)$/\1/p')
  # 400 connections less the 16 it takes to learn and one probe in 16 of the rest.
  [ "${skipped:-0}" -ge 300 ] || { echo "keepalive_skipped=${skipped:-none}"; false; }
  local stats
  stats=$(stop_server)
  # DNS answers (responses= counts sends: pipelined answers leave together).
  [ "$(answer_count "$stats")" = 2400 ] ||
    { echo "$stats"; false; }
}

@test "dnsperf -m tcp and onepass-load, ten queries per connection: both counts are the server's" {
  start_server "$BATS_TEST_TMPDIR/server.out" "$BIN_DIR/loadtest/onepass-reference" --keepalive \
    --listen 127.0.0.1:0
  dnsperf -m tcp -s 127.0.0.1 -p "${SERVER_ADDR##*:}" -d "$BATS_TEST_TMPDIR/queries.txt" -n 300 \
    -c 4 -q 4 -t 5 -O num-queries-per-conn=10 > "$BATS_TEST_TMPDIR/dnsperf.out" 2>&1
  [ "$(dnsperf_field "$BATS_TEST_TMPDIR/dnsperf.out" "Queries completed")" = 300 ] ||
    { cat "$BATS_TEST_TMPDIR/dnsperf.out"; false; }
  "$BIN_DIR/loadtest/onepass-load" --target "$SERVER_ADDR" --qname www.example.com. --count 40 \
    --concurrency 4 --queries-per-conn 10 --pipeline 2 --timeout-ms 5000 \
    --json "$BATS_TEST_TMPDIR/load.json"
  grep -q '"queries": {"sent": 400, "ok": 400' "$BATS_TEST_TMPDIR/load.json"
  local stats
  stats=$(stop_server)
  [ "$(served_count "$stats")" = 700 ] || { echo "$stats"; false; }
}

@test "kxdpgun -T from a namespace over veth and onepass-load: both counts are onepassd's" {
  [ "$(id -u)" -eq 0 ] || skip "needs root to create a network namespace and attach XDP"
  net_setup veth 0 1
  start_server "$BATS_TEST_TMPDIR/server.out" "$BIN_DIR/server/onepassd" --handler dns \
    --listen "$NET_SERVER_IP:0" --workers 1
  client_exec kxdpgun -T -t 2 -Q 200 -i "$BATS_TEST_TMPDIR/queries.txt" -I "${NET_LINK}c" \
    -p "${SERVER_ADDR##*:}" "$NET_SERVER_IP" > "$BATS_TEST_TMPDIR/kxdpgun.out" 2>&1 ||
    { cat "$BATS_TEST_TMPDIR/kxdpgun.out"; false; }
  local replies
  replies=$(awk '/^total replies:/ { print $3 }' "$BATS_TEST_TMPDIR/kxdpgun.out")
  [ "${replies:-0}" -gt 0 ] || { cat "$BATS_TEST_TMPDIR/kxdpgun.out"; false; }
  client_exec "$BIN_DIR/loadtest/onepass-load" --target "$SERVER_ADDR" --qname www.example.com. \
    --count 300 --concurrency 8 --source "$NET_CLIENT_SOURCES" --timeout-ms 5000 \
    --json "$BATS_TEST_TMPDIR/load.json"
  [ "$(json_number "$BATS_TEST_TMPDIR/load.json" ok)" = 300 ]
  local stats
  stats=$(stop_server)
  [ "$(served_count "$stats")" = $((replies + 300)) ] || { cat "$BATS_TEST_TMPDIR/kxdpgun.out"; echo "$stats"; false; }
}
