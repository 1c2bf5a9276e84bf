#!/usr/bin/env bash
# dnsperf -m tcp (Debian's dnsperf, the tool DNS operators run first) against onepassd and its
# peers, one run on one machine, the same zone (tests/data/example.com.zone, the embedded
# default) and the same queries (www.example.com A, mail.example.com A, example.com SOA):
#   zone     onepassd --zone (one worker, default keepalive)
#   nsd      NSD (server-count 1, RRL off)
#   knot     Knot DNS (one UDP, one TCP, one background worker)
#   fwd      onepassd --dns-backend (cache off, default keepalive) in front of a backend NSD
#   dnsdist  dnsdist (one TCP worker, no cache) in front of the same backend NSD
# Each server alone on the server CPUs, dnsperf and the backend NSD on the client CPUs; for
# each --qpc value N every server is asked with -O num-queries-per-conn=N (1: one query per
# connection; 0: one connection per dnsperf client for the whole run), a fresh server each
# time, --rounds times in turn.
#
#   loadtest/dnsperf-bench.sh [--seconds 5] [--queries N] [--rounds 1] [--qpc "1 100"]
#                             [--clients 64] [--outstanding 128] [--keepalive-ms N]
#                             [--servers "zone nsd knot fwd dnsdist"] [--server-cpus 0]
#                             [--client-cpus 1] [--bin DIR] [--name NAME] [--results DIR]
#
# --queries N stops dnsperf after N passes over the three queries (dnsperf -n), or at
# --seconds, whichever comes first. One row per N and server: queries/s and the queries dnsperf
# lost (medians over the rounds, lost summed), the server's CPU per completed query (user+sys
# from /proc/PID/stat of the server's processes and threads; loopback receive work done in the
# sender's context is not in it, for every server alike), and qps and CPU per query as ratios
# to NSD's in the same run, and the SYNs the machine dropped at a full accept queue meanwhile
# (TcpExt ListenOverflows, any listener); then fwd against dnsdist. With one query per
# connection dnsperf's 64 clients reconnect at once, accept queues overflow and each dropped SYN
# stalls a client for a second: qps there is erratic (a few hundred to a few thousand), so read
# CPU per query, not qps. Not under chrt: dnsperf at a real-time priority starved itself (38
# queries/s, 128 lost in one try).
# onepassd runs with --max-connections-per-client 2 × clients + 16 (all of dnsperf's
# connections come from one address) and otherwise its defaults: --keepalive-ms 2000 for DNS
# (RFC 7766 §6.2.3), learned per client (--keepalive-learn). --keepalive-ms N overrides it; 0
# measures the close after each answer, which loses queries whenever a client sends its next
# one on the same connection. Binaries as for bench.sh (--bin DIR, default build/release). The table is also
# written as a result file, DIR/DATE-COMMIT-NAME.md (--results DIR, default loadtest/results;
# --results '' writes none; --name NAME, default dnsperf-bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"
# shellcheck source=loadtest/nsd_conf.sh
source "$here/nsd_conf.sh"
# shellcheck source=loadtest/dnsdist_lib.sh
source "$here/dnsdist_lib.sh"
# shellcheck source=loadtest/zone_scale_lib.sh
source "$here/zone_scale_lib.sh"

command_line=$(command_as_run "$0" "$@")
seconds=5
passes=""
rounds=1
qpc_list="1 100"
clients=64
outstanding=128
keepalive_ms=""  # onepassd's default
servers="zone nsd knot fwd dnsdist"
server_cpus=0
client_cpus=1
BIN_DIR=""
result_name=dnsperf-bench
COMMON_OPTIONS="seconds rounds server-cpus client-cpus bin name results"
while [ $# -gt 0 ]; do
  case $1 in
    --queries) passes=$2; shift 2 ;;
    --qpc) qpc_list=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --outstanding) outstanding=$2; shift 2 ;;
    --keepalive-ms) keepalive_ms=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    *) common_option "$@"; shift "$OPTION_WORDS" ;;
  esac
done
find_binaries onepassd
for tool in dnsperf kdig nsd knotd dnsdist; do
  command -v "$tool" > /dev/null ||
    { echo "dnsperf-bench: $tool is not installed (scripts/install-deps.sh)" >&2; exit 1; }
done
for server in $servers; do
  case $server in zone|nsd|knot|fwd|dnsdist) ;; *)
    echo "dnsperf-bench: --servers $server: choose among zone nsd knot fwd dnsdist" >&2; exit 1 ;;
  esac
done
zone="$here/../tests/data/example.com.zone"
hz=$(getconf CLK_TCK)

make_work_dir
take_rps_lock  # one benchmark at a time on this machine (RPS is left as it is)
printf '%s\n' "www.example.com A" "mail.example.com A" "example.com SOA" > "$work/queries.txt"

PEER_PID=""
stop_peer() {
  [ -n "$PEER_PID" ] || return 0
  kill -TERM "$PEER_PID" 2>/dev/null || true
  wait "$PEER_PID" 2>/dev/null || true
  PEER_PID=""
}
BACKEND_PID=""
stop_backend() {
  [ -n "$BACKEND_PID" ] || return 0
  kill -TERM "$BACKEND_PID" 2>/dev/null || true
  wait "$BACKEND_PID" 2>/dev/null || true
}
trap 'stop_peer; stop_dnsdist; stop_backend; cleanup_work_dir' EXIT

# wait_dns PORT: until 127.0.0.1:PORT answers example.com SOA over TCP (10 s at most).
wait_dns() {
  local tries
  for ((tries = 0; tries < 100; tries++)); do
    [ -n "$(kdig -p "$1" @127.0.0.1 +tcp +short +timeout=1 +retry=0 example.com SOA 2>/dev/null)" ] &&
      return 0
    sleep 0.1
  done
  return 1
}

# start_nsd DIR CPUS: NSD serving the zone on a free port, pinned to CPUS; sets NSD_PORT and
# NSD_PID. Its RRL is off: every query comes from one address (dnsperf's, or the frontend's).
start_nsd() {
  local dir=$1 cpu_list=$2
  mkdir -p "$dir"
  cp "$zone" "$dir/zone0"
  NSD_PORT=$(free_local_port)
  write_nsd_conf "$dir/nsd.conf" "$dir" "$NSD_PORT" example.com zone0 \
    "rrl-ratelimit: 0" "rrl-whitelist-ratelimit: 0" "tcp-count: 1000"
  taskset -c "$cpu_list" nsd -d -c "$dir/nsd.conf" > "$dir/nsd.log" 2>&1 &
  NSD_PID=$!
  wait_dns "$NSD_PORT" || { echo "dnsperf-bench: NSD did not answer:" >&2; cat "$dir/nsd.log" >&2; return 1; }
}

# start_knot DIR CPUS: knotd serving the zone on a free port, pinned to CPUS; sets KNOT_PORT.
start_knot() {
  local dir=$1 cpu_list=$2
  mkdir -p "$dir"
  cp "$zone" "$dir/example.com.zone"
  KNOT_PORT=$(free_local_port)
  write_knot_conf "$dir/knot.conf" "$dir" "$KNOT_PORT" example.com "$dir/example.com.zone" \
    "udp-workers: 1" "tcp-workers: 1" "background-workers: 1"
  taskset -c "$cpu_list" knotd -c "$dir/knot.conf" > "$dir/knot.log" 2>&1 &
  PEER_PID=$!
  wait_dns "$KNOT_PORT" || { echo "dnsperf-bench: Knot did not answer:" >&2; cat "$dir/knot.log" >&2; return 1; }
}

# listen_overflows: the machine's count of connections dropped at a full accept queue
# (TcpExt ListenOverflows): each costs dnsperf a SYN retransmission, a second later.
listen_overflows() {
  awk '/^TcpExt:/ { if (!n) { for (i = 1; i <= NF; i++) if ($i == "ListenOverflows") f = i; n = 1 }
                    else { print $f; exit } }' /proc/net/netstat
}

# wait_time_wait: until fewer than half the ephemeral ports are held by TIME-WAIT connections
# (90 s at most). dnsperf binds each connection's port itself, which TIME-WAIT reuse does not
# serve: without this wait the runs after a few one-query-per-connection ones fail with "bind:
# Address already in use".
wait_time_wait() {
  local low high tries held
  read -r low high < /proc/sys/net/ipv4/ip_local_port_range
  for ((tries = 0; tries < 90; tries++)); do
    held=$(ss -Htn state time-wait | wc -l)
    ((held < (high - low) / 2)) && return 0
    ((tries == 0)) && echo "  waiting for $held TIME-WAIT connections to expire"
    sleep 1
  done
}

# measure NAME PORT PID QPC: dnsperf against 127.0.0.1:PORT; one line in $results:
# qpc server qps completed lost cpu_us_per_query listen_overflows
measure() {
  local name=$1 port=$2 pid=$3 qpc=$4 t0 t1 o0 o1 limits=(-l "$seconds") per_conn=()
  [ -n "$passes" ] && limits+=(-n "$passes")
  [ "$qpc" = 0 ] || per_conn=(-O num-queries-per-conn="$qpc")
  wait_time_wait
  t0=$(cpu_ticks_of "$pid")
  o0=$(listen_overflows)
  taskset -c "$client_cpus" dnsperf -m tcp -s 127.0.0.1 -p "$port" -d "$work/queries.txt" \
    "${limits[@]}" -c "$clients" -q "$outstanding" -T 1 -t 2 "${per_conn[@]}" \
    > "$work/$name.out" 2>&1 || true
  t1=$(cpu_ticks_of "$pid")
  o1=$(listen_overflows)
  local completed lost qps
  completed=$(awk '/Queries completed:/ { print $3; exit }' "$work/$name.out")
  lost=$(awk '/Queries lost:/ { print $3; exit }' "$work/$name.out")
  qps=$(awk '/Queries per second:/ { print $4; exit }' "$work/$name.out")
  grep -E 'Queries (sent|completed|lost)|Queries per second|unexpected|failed' "$work/$name.out" |
    sort | uniq -c | sed 's/^/  /' | head -n 8
  if [ -z "$qps" ]; then  # no statistics: dnsperf failed; no row, and say why
    echo "  dnsperf printed no statistics:"
    tail -n 5 "$work/$name.out" | sed 's/^/    /'
    return 1
  fi
  awk -v qpc="$qpc" -v server="${name%%-*}" -v qps="${qps:-0}" -v n="${completed:-0}" \
    -v lost="${lost:-0}" -v ticks=$((t1 - t0)) -v hz="$hz" -v drops=$((o1 - o0)) 'BEGIN {
      printf "%s\t%s\t%.1f\t%d\t%d\t%.2f\t%d\n", qpc, server, qps, n, lost,
        (n > 0 ? ticks * 1e6 / hz / n : 0), drops }' >> "$results"
}

# run_server SERVER QPC ROUND: a fresh SERVER on the server CPUs, measured, stopped.
run_server() {
  local server=$1 qpc=$2 name="$1-$2-$3"
  # Every dnsperf client comes from 127.0.0.1: onepassd's default of 25 waiting connections
  # per client address would refuse the rest of them; NSD and Knot have no such limit.
  # A port below the ephemeral range, which dnsperf's TIME-WAIT connections can exhaust.
  local onepass=("$onepassd" --handler dns --listen "127.0.0.1:$(free_local_port)" --workers 1
    --cpus "$server_cpus" --max-connections-per-client $((2 * clients + 16)))
  [ -z "$keepalive_ms" ] || onepass+=(--keepalive-ms "$keepalive_ms")
  case $server in
    zone|fwd)
      local mode=(--zone "$zone")
      [ "$server" = fwd ] && mode=(--dns-backend "127.0.0.1:$BACKEND_PORT" --dns-cache-entries 0)
      start_server "$work/$name.server" "${onepass[@]}" "${mode[@]}" || return 1
      measure "$name" "${SERVER_ADDR##*:}" "$SERVER_PID" "$qpc"
      echo "  onepassd: $(stop_server | grep -o 'accepted=[0-9]* served=[0-9]*' || echo no stats line)" ;;
    nsd)
      start_nsd "$work/$name" "$server_cpus" || return 1
      PEER_PID=$NSD_PID
      measure "$name" "$NSD_PORT" "$PEER_PID" "$qpc"
      stop_peer ;;
    knot)
      start_knot "$work/$name" "$server_cpus" || return 1
      measure "$name" "$KNOT_PORT" "$PEER_PID" "$qpc"
      stop_peer ;;
    dnsdist)
      start_dnsdist "$work/$name" "$server_cpus" "127.0.0.1:$BACKEND_PORT" 1 0 || return 1
      measure "$name" "${DNSDIST_ADDR##*:}" "$DNSDIST_PID" "$qpc"
      stop_dnsdist ;;
  esac
}

# The frontends' backend: one NSD on the client CPUs for the whole run.
if [[ " $servers " == *" fwd "* || " $servers " == *" dnsdist "* ]]; then
  start_nsd "$work/backend" "$client_cpus"
  BACKEND_PID=$NSD_PID
  BACKEND_PORT=$NSD_PORT
fi

results="$work/results.tsv"
: > "$results"
echo "command: $command_line"
echo "dnsperf-bench: $(uname -r), nproc=$(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg), $(dnsperf -h 2>&1 | sed -n 's/^Version /dnsperf /p'), server CPUs $server_cpus, dnsperf and the frontends' backend NSD on CPUs $client_cpus, $clients clients, $outstanding outstanding, ${seconds}s${passes:+ or $passes passes} per run, onepassd --keepalive-ms ${keepalive_ms:-default} --max-connections-per-client $((2 * clients + 16))"
for ((round = 1; round <= rounds; round++)); do
  for qpc in $qpc_list; do
    for server in $servers; do
      echo; echo "== $server, num-queries-per-conn=$qpc, round $round"
      run_server "$server" "$qpc" "$round" || echo "  $server: no result"
    done
  done
done

# $results, a row per run (results_column QPC SERVER FIELD): 3 qps, 4 completed, 5 lost, 6 cpu,
# 7 listen overflows.
total() { awk '{ s += $1 } END { print s + 0 }'; }
print_table() {
  echo "| queries/conn | server | queries/s | lost | completed | server cpu us/query | qps / NSD | cpu / NSD | SYNs dropped |"
  echo "|---|---|---|---|---|---|---|---|---|"
  local qpc server qps cpu
  for qpc in $qpc_list; do
    for server in $servers; do
      qps=$(results_column "$qpc" "$server" 3 | median_of)
      cpu=$(results_column "$qpc" "$server" 6 | median_of)
      printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$([ "$qpc" = 0 ] && echo all || echo "$qpc")" \
        "$server" "$qps" "$(results_column "$qpc" "$server" 5 | total)" "$(results_column "$qpc" "$server" 4 | total)" \
        "$cpu" "$(ratio_of "$qps" "$(results_column "$qpc" nsd 3 | median_of)")" \
        "$(ratio_of "$cpu" "$(results_column "$qpc" nsd 6 | median_of)")" "$(results_column "$qpc" "$server" 7 | total)"
    done
  done
  if [[ " $servers " == *" fwd "* && " $servers " == *" dnsdist "* ]]; then
    echo
    echo "| queries/conn | fwd / dnsdist qps | fwd / dnsdist cpu us/query |"
    echo "|---|---|---|"
    for qpc in $qpc_list; do
      printf '| %s | %s | %s |\n' "$([ "$qpc" = 0 ] && echo all || echo "$qpc")" \
        "$(ratio_of "$(results_column "$qpc" fwd 3 | median_of)" "$(results_column "$qpc" dnsdist 3 | median_of)")" \
        "$(ratio_of "$(results_column "$qpc" fwd 6 | median_of)" "$(results_column "$qpc" dnsdist 6 | median_of)")"
    done
  fi
}
echo
echo "command: $command_line"
print_table | tee "$work/table.md"
if [ -n "$results_dir" ]; then
  echo "dnsperf-bench: wrote $(write_result_file "$results_dir" "$result_name" \
    "dnsperf-bench.sh: dnsperf -m tcp against onepassd, NSD, Knot and dnsdist" "$command_line" \
    "$work/table.md")"
fi
