#!/usr/bin/env bash
# The load testers side by side against the same onepassd (one worker, pinned), one query per
# connection: onepass-load's two cores (--engine uring, --engine epoll), dnsperf -m tcp
# (num-queries-per-conn=1) and, with --net veth, kxdpgun -T (TCP from XDP on the client's veth
# end). Each tool runs pinned to the client CPU, alternated --rounds times, a fresh server each.
#
#   loadtest/client-bench.sh [--seconds 5] [--rounds 3] [--net lo|veth] [--server-cpus 0]
#                            [--client-cpus 1] [--concurrency 64] [--tools "uring epoll dnsperf kxdpgun"]
#                            [--kxdpgun-qps 20000] [--queries-per-conn N] [--bin DIR] [--json FILE]
#
# --queries-per-conn N (N > 1): N queries per connection, one after the other, from onepass-load's
# uring core and dnsperf (num-queries-per-conn=N), against onepass-reference --keepalive on the
# server CPU (onepassd closes after one answer); the table's conn/s, CPU per connection and
# counts are then per query (answers), as "served" is.
#
# Per run: conn/s (the tool's own count of answers per second), the server's own count
# ("served" in its exit stats line) against the tool's, and CPU per answered connection, both
# as bench.sh counts the server's: the /proc schedstat runtime of every task of the process
# plus the ksoftirqd of its CPUs (client: of --client-cpus; onepass-load reads its own threads,
# the other tools are sampled every 50 ms, which misses at most their last 50 ms). Prints one
# table: median over rounds [min-max] of conn/s, client us/conn, server us/conn, their ratio,
# and conn/s per client CPU (1e6 / client us per conn). kxdpgun is open loop at --kxdpgun-qps
# (it has no closed loop); it needs --net veth (XDP on an interface other than lo).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"

seconds=5
rounds=3
server_cpus=0
client_cpus=1
concurrency=64
tools=""
kxdpgun_qps=20000
queries_per_conn=1
BIN_DIR=""
COMMON_OPTIONS="seconds rounds net server-cpus client-cpus concurrency bin json"
while [ $# -gt 0 ]; do
  case $1 in
    --tools) tools=$2; shift 2 ;;
    --kxdpgun-qps) kxdpgun_qps=$2; shift 2 ;;
    --queries-per-conn) queries_per_conn=$2; shift 2 ;;
    *) common_option "$@"; shift "$OPTION_WORDS" ;;
  esac
done
if [ -z "$tools" ]; then
  tools="uring epoll dnsperf"
  [ "$net" = veth ] && tools+=" kxdpgun"
  [ "$queries_per_conn" -gt 1 ] && tools="uring dnsperf"
fi
BIN_DIR_FALLBACK=dev
find_binaries onepassd load
server_cmd=("$onepassd" --handler dns --workers 1)
if [ "$queries_per_conn" -gt 1 ]; then
  find_binaries reference
  server_cmd=("$reference" --keepalive --threads 1)
fi
make_work_dir
# shellcheck disable=SC2154  # work: set by make_work_dir (bench_lib.sh)
echo "client-bench: $(uname -r), nproc=$(nproc), --net $net, server CPUs $server_cpus, client CPUs $client_cpus, $concurrency in flight, ${seconds}s per run, $rounds round(s), tools: $tools; load:$(cut -d' ' -f1-3 /proc/loadavg)"
net_setup "$net" "$server_cpus" "$client_cpus" || exit 1
printf 'www.example.com A\n' > "$work/queries.txt"
results="$work/results.tsv"
: > "$results"

# measured_run OUT CMD...: runs CMD on the client's side in the background, samples the
# schedstat runtime of its tasks every 50 ms until it exits; prints the CPU [ns] seen.
measured_run() {
  local out_file=$1 pid
  shift
  "${NET_EXEC[@]}" "$@" > "$out_file" 2>&1 &
  pid=$!
  declare -A seen=()
  local task runtime
  while kill -0 "$pid" 2> /dev/null; do
    for task in /proc/"$pid"/task/*; do
      runtime=$(cut -d' ' -f1 "$task/schedstat" 2> /dev/null) || continue
      [ -n "$runtime" ] && seen[${task##*/}]=$runtime
    done
    sleep 0.05
  done
  wait "$pid" || true
  local sum=0
  for runtime in "${seen[@]}"; do sum=$((sum + runtime)); done
  echo "$sum"
}

# run_tool TOOL ROUND: one run against a fresh server; a line in $results:
# tool round conn/s client_us server_us tool_count served errors
run_tool() {
  local tool=$1 round=$2 name="$1-$2"
  start_server "$work/$name.server" "${server_cmd[@]}" --listen "$NET_SERVER_IP:0" \
    --cpus "$server_cpus" || return 1
  local host=${SERVER_ADDR%:*} port=${SERVER_ADDR##*:}
  local s0 i0 c0 s1 i1 c1 client_ns="" count=0 rate=0 errors=0
  s0=$(server_cpu_ns); i0=$(ksoftirqd_ns "$server_cpus"); c0=$(ksoftirqd_ns "$client_cpus")
  case $tool in
    uring|epoll)
      client_exec "$load" --engine "$tool" --target "$SERVER_ADDR" --proto dns \
        --qname www.example.com. --qtype A --concurrency "$concurrency" --threads 1 \
        --cpus "$client_cpus" --duration "$seconds" --timeout-ms 2000 \
        --source "$NET_CLIENT_SOURCES" --min-success 0 --server-pid "$SERVER_PID" \
        --server-cpus "$server_cpus" --queries-per-conn "$queries_per_conn" \
        --json "$work/$name.json" > "$work/$name.out" 2>&1 || true
      count=$(json_number "$work/$name.json" ok queries)
      errors=$(json_number "$work/$name.json" total errors)
      rate=$(json_number "$work/$name.json" ok_per_s queries)
      client_ns=$(awk -v s="$(json_number "$work/$name.json" sched_cpu_s)" 'BEGIN { printf "%.0f", s * 1e9 }') ;;
    dnsperf)
      client_ns=$(measured_run "$work/$name.out" taskset -c "$client_cpus" dnsperf -m tcp \
        -s "$host" -p "$port" -d "$work/queries.txt" -l "$seconds" -c "$concurrency" \
        -q "$concurrency" -T 1 -O num-queries-per-conn="$queries_per_conn")
      count=$(awk '/Queries completed:/ { print $3 }' "$work/$name.out")
      errors=$(awk '/Queries lost:/ { print $3 }' "$work/$name.out")
      rate=$(awk '/Queries per second:/ { print $4 }' "$work/$name.out") ;;
    kxdpgun)
      client_ns=$(measured_run "$work/$name.out" kxdpgun -T -t "$seconds" -Q "$kxdpgun_qps" \
        -i "$work/queries.txt" -I "${NET_LINK}c" -F "${client_cpus%%[,-]*}" -p "$port" "$host")
      count=$(awk '/^total replies:/ { print $3 }' "$work/$name.out")
      rate=$(awk -v n="${count:-0}" -v s="$seconds" 'BEGIN { printf "%.1f", n / s }') ;;
  esac
  s1=$(server_cpu_ns); i1=$(ksoftirqd_ns "$server_cpus"); c1=$(ksoftirqd_ns "$client_cpus")
  local stats served
  stats=$(stop_server)
  served=$(sed -n 's/.*served=\([0-9]*\).*/\1/p' <<< "$stats" | head -n 1)
  grep -E 'connections|rate|CPU|Queries|Reconnections|^total|error|mode' "$work/$name.out" | sed 's/^/  /' | head -n 20
  echo "  server: $(grep -o 'accepted=[0-9]* served=[0-9]*' <<< "$stats" || echo no stats line)"
  awk -v tool="$tool" -v round="$round" -v rate="${rate:-0}" -v count="${count:-0}" \
    -v served="${served:-0}" -v errors="${errors:-0}" -v client=$((${client_ns:-0} + c1 - c0)) \
    -v server=$((s1 - s0 + i1 - i0)) 'BEGIN {
      n = count > 0 ? count : 1
      printf "%s\t%s\t%.1f\t%.2f\t%.2f\t%d\t%d\t%d\n", tool, round, rate, client / 1e3 / n,
        server / 1e3 / n, count, served, errors }' >> "$results"
}

for ((round = 1; round <= rounds; round++)); do
  for tool in $tools; do
    echo
    echo "== $tool, round $round of $rounds"
    run_tool "$tool" "$round" || echo "  $tool: no result"
  done
done

echo
awk -F'\t' -v json="$work/summary.jsonl" '
  function sorted(list, a,   n, i, j, t) { n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n }
  function median(list,   a, n) { n = sorted(list, a); if (n == 0) return 0
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  function lo(list,   a) { sorted(list, a); return a[1] }
  function hi(list,   a, n) { n = sorted(list, a); return a[n] }
  {
    if (!($1 in runs)) order[++k] = $1
    runs[$1]++; rate[$1] = rate[$1] " " $3; client[$1] = client[$1] " " $4; server[$1] = server[$1] " " $5
    ratio[$1] = ratio[$1] " " ($5 > 0 ? $4 / $5 : 0); count[$1] += $6; served[$1] += $7; errors[$1] += $8
  }
  END {
    printf "%-8s %9s %19s %10s %10s %8s %12s %11s %11s %7s\n", "tool", "conn/s", "[min-max]", "client us", "server us",
      "client/", "conn/s per", "tool count", "served", "errors"
    printf "%-8s %9s %19s %10s %10s %8s %12s %11s %11s %7s\n", "", "", "", "per conn", "per conn", "server", "client CPU", "", "", ""
    for (i = 1; i <= k; i++) {
      t = order[i]; c = median(client[t])
      printf "%-8s %9.0f %19s %10.2f %10.2f %8.2f %12.0f %11d %11d %7d\n", t, median(rate[t]),
        sprintf("[%.0f-%.0f]", lo(rate[t]), hi(rate[t])), c, median(server[t]), median(ratio[t]),
        (c > 0 ? 1e6 / c : 0), count[t], served[t], errors[t]
      printf "{\"tool\": \"%s\", \"runs\": %d, \"conn_per_s\": %.1f, \"client_us_per_conn\": %.3f, " \
        "\"server_us_per_conn\": %.3f, \"client_server_ratio\": %.3f, \"tool_count\": %d, " \
        "\"served\": %d, \"errors\": %d}\n", t, runs[t], median(rate[t]), c, median(server[t]),
        median(ratio[t]), count[t], served[t], errors[t] > json
    }
  }' "$results"
[ "$queries_per_conn" -gt 1 ] && echo "($queries_per_conn queries per connection: conn/s, us per conn and the counts are per query)"
echo "(medians over rounds; CPU per answered connection, /proc schedstat + ksoftirqd of each side's CPUs; load now:$(cut -d' ' -f1-3 /proc/loadavg))"
if [ -n "$json_out" ]; then
  cp "$work/summary.jsonl" "$json_out"
  echo "client-bench: wrote $json_out"
fi
