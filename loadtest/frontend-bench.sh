#!/usr/bin/env bash
# Measures the DNS-over-TCP frontend (onepassd --dns-backend) against dnsdist and against
# onepassd's own zone mode, in one run, with the same client (onepass-load) and the same zone:
# NSD serves tests/data/example.com.zone over UDP (and TCP, for dnsdist) on loopback, pinned to
# the backend CPUs (off the server CPU). Five servers, each alone on the server CPU, alternated
# --rounds times:
#   zone            onepassd --zone example.com.zone (the single pass, precompiled answers)
#   fwd-nocache     onepassd --dns-backend NSD --dns-cache-entries 0 (every query to NSD, UDP)
#   fwd-cache       onepassd --dns-backend NSD (hits answered in the single pass from the cache)
#   dnsdist-nocache dnsdist forwarding to the same NSD, no packet cache
#   dnsdist-cache   the same with newPacketCache on the default pool
# and prints one table (conn/s median and range over the rounds, latency, errors) with the
# ratios fwd-nocache/dnsdist-nocache, fwd-cache/dnsdist-cache (goal >= 2) and fwd-cache/zone
# (goal >= 0.85), each as the ratio of the means and its range over the rounds.
# --io epoll,uring: the two fwd rows again for each worker loop other than epoll
# (fwd-nocache/uring, fwd-cache/uring: onepassd --io uring), alternated with the others, and
# their ratios to the epoll rows.
# --port-queries 1,64,65536: the fwd-nocache row again for each value other than 1 (the
# default) of onepassd --dns-backend-port-queries (fwd-nocache/pqN: N queries share one UDP
# source port before it is retired; a large N is close to the old single fixed socket), so
# the cost of a fresh random port per query (RFC 5452 §9.2) reads as their CPU per connection.
#
#   loadtest/frontend-bench.sh [--seconds 10] [--rounds 1] [--server-cpus 0] [--backend-cpus 1]
#                              [--client-cpus 1] [--concurrency 64] [--dnsdist-tcp-threads 1]
#                              [--io epoll,uring] [--port-queries 1,64,65536] [--no-rps]
#                              [--net lo|veth] [--no-dnsdist]
#                              [--bin DIR] [--name NAME] [--results DIR]
#
# One core each: onepassd runs one worker pinned to the server CPU; dnsdist runs with all its
# threads pinned to the same CPU (taskset) and one TCP worker thread (--dnsdist-tcp-threads,
# setMaxTCPClientThreads): several workers on one core would only add context switches; its
# acceptor, UDP and health-check threads are part of dnsdist and share that core. dnsdist
# forwards a query that came over TCP over TCP (to NSD, reusing its backend connections),
# onepassd over UDP: each as it is built. dnsdist is required unless --no-dnsdist.
# cpu us = the server's CPU per OK connection (all its threads plus the server CPU's ksoftirqd,
# as bench.sh counts it); "busy" = that CPU time over the run's wall time. When busy is well
# below 100%, the server was not the bottleneck (the client's CPU, shared with NSD, was): then
# cpu us, not conn/s, says which server does less work per connection. Loopback receive processing is steered to the
# server CPU as bench.sh does (the server pays for the handshake as behind a NIC; the backend
# traffic's receive side lands there too, for both frontends alike; restored at exit);
# --no-rps leaves rps_cpus as it is (then the client's CPU does the receive work of every
# packet it sends, and saturates first). Either way the run holds bench_lib.sh's lock, so no
# other benchmark runs at the same time. --net veth (loadtest/net_lib.sh): the client and NSD
# live in a network namespace behind a veth pair, as hosts of their own: the server CPU then
# does the receive work of the packets sent to the server only (from the clients and from
# NSD), the client's and NSD's receive work runs on their CPUs.
# On a shared machine run it under `chrt -f 10` (the server CPU then saturates, busy ~96%, and
# rounds agree within a few %; without it the other users' work sets the rate, not the
# servers, and softirq run inside their processes goes uncounted).
# Binaries as for bench.sh (--bin DIR, default build/release). The tables are also written as
# a result file, DIR/DATE-COMMIT-NAME.md (--results DIR, default loadtest/results; --results ''
# writes none; --name NAME, default frontend-bench-NET).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"
# shellcheck source=loadtest/nsd_conf.sh
source "$here/nsd_conf.sh"
# shellcheck source=loadtest/dnsdist_lib.sh
source "$here/dnsdist_lib.sh"

command_line=$(command_as_run "$0" "$@")
seconds=10
server_cpus=0
backend_cpus=""
client_cpus=""
concurrency=""
BIN_DIR=""
rounds=1
dnsdist_threads=1
with_dnsdist=1
rps=1
io_modes=epoll
port_queries=1
COMMON_OPTIONS="seconds rounds server-cpus client-cpus concurrency net io bin name results"
while [ $# -gt 0 ]; do
  case $1 in
    --backend-cpus) backend_cpus=$2; shift 2 ;;
    --dnsdist-tcp-threads) dnsdist_threads=$2; shift 2 ;;
    --port-queries) port_queries=$2; shift 2 ;;
    --no-dnsdist) with_dnsdist=0; shift ;;
    --no-rps) rps=0; shift ;;
    *) common_option "$@"; shift "$OPTION_WORDS" ;;
  esac
done
find_binaries onepassd load
command -v nsd > /dev/null || { echo "frontend-bench: nsd is not installed (apt-get install nsd)" >&2; exit 1; }
if [ "$with_dnsdist" = 1 ] && ! command -v dnsdist > /dev/null; then
  echo "frontend-bench: dnsdist is not installed (apt-get install dnsdist; or --no-dnsdist)" >&2
  exit 1
fi
zone="$here/../tests/data/example.com.zone"

cores=$(nproc)
others=""
for ((cpu = 0; cpu < cores; cpu++)); do
  [[ " $(expand_cpus "$server_cpus") " == *" $cpu "* ]] || others+="${others:+,}$cpu"
done
[ -n "$others" ] || { echo "frontend-bench: no CPU left off the server CPU" >&2; exit 1; }
backend_cpus=${backend_cpus:-$others}
client_cpus=${client_cpus:-$others}
n_client=$(count_cpus "$client_cpus")
concurrency=${concurrency:-$((64 * n_client))}
make_work_dir
take_rps_lock  # one benchmark at a time on this machine
if [ "$net" != lo ]; then
  net_setup "$net" "$server_cpus" "$client_cpus,$backend_cpus" || exit 1
elif [ "$rps" = 1 ]; then
  steer_rps "$server_cpus"
fi
NSD_LISTEN_IP=$NET_PEER_IP
DNSDIST_LISTEN_IP=$NET_SERVER_IP

# NSD on a free port, pinned to the backend CPUs; stopped at exit.
nsd_port=$(free_local_port)
cp "$zone" "$work/zone0"
# All queries come from the frontend's one address: NSD's response rate limiting (on by default,
# 200 answers/s per source) would answer TC=1 or drop. Off, as behind a frontend. dnsdist
# keeps TCP connections to it open: room for them.
write_nsd_conf "$work/nsd.conf" "$work" "$nsd_port" example.com zone0 \
  "rrl-ratelimit: 0" "rrl-whitelist-ratelimit: 0" "tcp-count: 1000"
nsd-checkconf "$work/nsd.conf"
"${NET_EXEC[@]}" taskset -c "$backend_cpus" nsd -d -c "$work/nsd.conf" > "$work/nsd.log" 2>&1 &
nsd_pid=$!
stop_nsd() { kill -TERM "$nsd_pid" 2>/dev/null || true; wait "$nsd_pid" 2>/dev/null || true; }
trap 'stop_dnsdist; stop_nsd; cleanup_work_dir' EXIT
for ((tries = 0; tries < 100; tries++)); do
  kdig -p "$nsd_port" "@$NSD_LISTEN_IP" +short +timeout=1 +retry=0 example.com SOA > /dev/null 2>&1 && break
  sleep 0.1
done
kdig -p "$nsd_port" "@$NSD_LISTEN_IP" +short +timeout=1 +retry=0 example.com SOA > /dev/null ||
  { echo "frontend-bench: NSD did not answer; its log:" >&2; cat "$work/nsd.log" >&2; exit 1; }

echo "command: $command_line"
echo "frontend-bench: $(uname -r), nproc=$cores, load average $(cut -d' ' -f1-3 /proc/loadavg), server CPU $server_cpus (onepassd 1 worker; dnsdist $( [ "$with_dnsdist" = 1 ] && dnsdist --version | head -n 1 | cut -d' ' -f2) all threads, $dnsdist_threads TCP worker), NSD on CPUs $backend_cpus ($NSD_LISTEN_IP:$nsd_port), --net $net, client CPUs $client_cpus ($n_client threads), closed loop $concurrency in flight, ${seconds}s per server, www.example.com A"

# run_load NAME ADDR PID: the load run against ADDR, its JSON in $work/NAME.json, and the CPU
# the server (process PID, all threads, plus the ksoftirqd threads of the server CPU) used
# during it, in ns, in $work/NAME.cpu.
run_load() {
  local cpu0 cpu1
  cpu0=$(( $(process_cpu_ns "$3") + $(ksoftirqd_ns "$server_cpus") ))
  client_exec "$load" --target "$2" --proto dns --qname www.example.com. --qtype A \
    --threads "$n_client" --cpus "$client_cpus" --concurrency "$concurrency" \
    --duration "$seconds" --timeout-ms 2000 --source "$NET_CLIENT_SOURCES" --min-success 0 \
    --json "$work/$1.json" > "$work/$1.txt" || true
  cpu1=$(( $(process_cpu_ns "$3") + $(ksoftirqd_ns "$server_cpus") ))
  echo $((cpu1 - cpu0)) > "$work/$1.cpu"
  sed 's/^/  /' "$work/$1.txt"
}

run_onepassd() {
  local name=$1
  shift
  start_server "$work/$name.out" "$@" || return 1
  run_load "$name" "$SERVER_ADDR" "$SERVER_PID"
  local stats
  stats=$(stop_server)
  echo "  server: ${stats:-no stats line}"
}

run_dnsdist() {
  local name=$1 cache=$2
  start_dnsdist "$work/$name" "$server_cpus" "$NSD_LISTEN_IP:$nsd_port" "$dnsdist_threads" "$cache" ||
    return 1
  run_load "$name" "$DNSDIST_ADDR" "$DNSDIST_PID"
  stop_dnsdist
}

common=(--handler dns --listen "$NET_SERVER_IP:0" --workers 1 --cpus "$server_cpus")
modes=(zone fwd-nocache fwd-cache)
# A row MODE/LOOP is MODE with onepassd --io LOOP; its files are named MODE_LOOP.
extra_loops=()
for io in ${io_modes//,/ }; do
  case $io in
    epoll) ;;
    uring) extra_loops+=("$io"); modes+=("fwd-nocache/$io" "fwd-cache/$io") ;;
    *) echo "frontend-bench: --io $io: choose among epoll uring" >&2; exit 1 ;;
  esac
done
# A row fwd-nocache/pqN is fwd-nocache with --dns-backend-port-queries N.
extra_port_queries=()
for pq in ${port_queries//,/ }; do
  [[ $pq =~ ^[1-9][0-9]*$ ]] || { echo "frontend-bench: --port-queries $pq: a count from 1" >&2; exit 1; }
  [ "$pq" = 1 ] && continue
  extra_port_queries+=("$pq")
  modes+=("fwd-nocache/pq$pq")
done
[ "$with_dnsdist" = 1 ] && modes+=(dnsdist-nocache dnsdist-cache)
for ((round = 1; round <= rounds; round++)); do
  for mode in "${modes[@]}"; do
    echo; echo "== $mode, round $round"
    run="${mode//\//_}-$round"
    io_flags=()
    case $mode in
      */pq*) io_flags=(--dns-backend-port-queries "${mode#*/pq}") ;;
      */*) io_flags=(--io "${mode#*/}") ;;
    esac
    case ${mode%%/*} in
      zone) run_onepassd "$run" "$onepassd" "${common[@]}" --zone "$zone" || true ;;
      fwd-nocache)
        run_onepassd "$run" "$onepassd" "${common[@]}" "${io_flags[@]}" \
          --dns-backend "$NSD_LISTEN_IP:$nsd_port" --dns-cache-entries 0 || true ;;
      fwd-cache)
        run_onepassd "$run" "$onepassd" "${common[@]}" "${io_flags[@]}" \
          --dns-backend "$NSD_LISTEN_IP:$nsd_port" || true ;;
      dnsdist-nocache) run_dnsdist "$run" 0 || echo "  $mode: dnsdist did not start" ;;
      dnsdist-cache) run_dnsdist "$run" 1 || echo "  $mode: dnsdist did not start" ;;
    esac
  done
done

# rate MODE ROUND: ok conn/s of that run (empty when it has no result).
rate() {
  local f="$work/${1//\//_}-$2.json"
  [ -s "$f" ] && json_number "$f" ok_per_s
}
# per_round MODE FIELD [SECTION]: that field of every round, one per line.
per_round() {
  local r f
  for ((r = 1; r <= rounds; r++)); do
    f="$work/${1//\//_}-$r.json"
    if [ -s "$f" ]; then json_number "$f" "$2" "${3:-}"; fi
  done
  return 0
}
# cpu_per_round MODE: the server's CPU per OK connection [us] of every round, one per line.
cpu_per_round() {
  local r f="$work/${1//\//_}"
  for ((r = 1; r <= rounds; r++)); do
    if [ ! -s "$f-$r.cpu" ] || [ ! -s "$f-$r.json" ]; then continue; fi
    awk -v t="$(cat "$f-$r.cpu")" -v ok="$(json_number "$f-$r.json" ok)" \
      'BEGIN { if (ok > 0) printf "%.2f\n", t / 1e3 / ok }'
  done
  return 0
}
# busy_per_round MODE: the share of one CPU [%] the server used during each round's load run
# (near 100: the server was the bottleneck; well below: something else was, e.g. the client).
busy_per_round() {
  local r f="$work/${1//\//_}"
  for ((r = 1; r <= rounds; r++)); do
    if [ ! -s "$f-$r.cpu" ] || [ ! -s "$f-$r.json" ]; then continue; fi
    awk -v t="$(cat "$f-$r.cpu")" -v wall="$(json_number "$f-$r.json" wall_s)" \
      'BEGIN { if (wall > 0) printf "%.0f\n", t / 1e7 / wall }'
  done
  return 0
}
range() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%s-%s", lo, hi; else print "n/a" }'; }
total() { awk '{ s += $1 } END { print s + 0 }'; }

# The tables, printed and kept for the result file.
print_tables() {
  echo "| server | ok conn/s median [min-max] | cpu us/conn | server CPU busy % | p50 us | p99 us | errors | client |"
  echo "|---|---|---|---|---|---|---|---|"
  for mode in "${modes[@]}"; do
    bound=""
    for ((r = 1; r <= rounds; r++)); do
      f="$work/${mode//\//_}-$r.json"
      [ -s "$f" ] && [ "$(json_bool "$f" client_bound)" = true ] && bound+="${bound:+,}$r"
    done
    printf '| %s | %s [%s] | %s | %s | %s | %s | %s | %s |\n' "$mode" \
      "$(per_round "$mode" ok_per_s | median_of)" "$(per_round "$mode" ok_per_s | range)" \
      "$(cpu_per_round "$mode" | median_of)" "$(busy_per_round "$mode" | median_of)" \
      "$(per_round "$mode" p50 latency_us | median_of)" "$(per_round "$mode" p99 latency_us | median_of)" \
      "$(per_round "$mode" errors total | total)" "$(if [ -n "$bound" ]; then echo "CLIENT-BOUND in round $bound"; else echo ok; fi)"
  done

  # ratio_line A B GOAL: A/B of the means over the rounds, and its range over the rounds.
  ratio_line() {
    local a=$1 b=$2 goal=$3 r ra rb sum_a=0 sum_b=0 each=""
    for ((r = 1; r <= rounds; r++)); do
      ra=$(rate "$a" "$r" || true)
      rb=$(rate "$b" "$r" || true)
      if [ -z "$ra" ] || [ -z "$rb" ]; then continue; fi
      sum_a=$(awk -v x="$sum_a" -v y="$ra" 'BEGIN { print x + y }')
      sum_b=$(awk -v x="$sum_b" -v y="$rb" 'BEGIN { print x + y }')
      each+="$(ratio "$ra" "$rb")"$'\n'
    done
    printf '| %s / %s | %s | %s | %s | %s |\n' "$a" "$b" "$(ratio "$sum_a" "$sum_b")" \
      "$(printf '%s' "$each" | range)" "$goal" \
      "$(ratio "$(cpu_per_round "$b" | median_of)" "$(cpu_per_round "$a" | median_of)")"
  }
  echo
  echo "| conn/s ratio | of the means | per round [min-max] | goal | cpu us/conn, inverse ratio |"
  echo "|---|---|---|---|---|"
  if [ "$with_dnsdist" = 1 ]; then
    ratio_line fwd-nocache dnsdist-nocache ">= 2"
    ratio_line fwd-cache dnsdist-cache ">= 2"
  fi
  ratio_line fwd-cache zone ">= 0.85"
  ratio_line fwd-nocache zone "-"
  for io in "${extra_loops[@]}"; do
    ratio_line "fwd-nocache/$io" fwd-nocache "-"
    ratio_line "fwd-cache/$io" fwd-cache "-"
  done
  for pq in "${extra_port_queries[@]}"; do
    ratio_line "fwd-nocache/pq$pq" fwd-nocache "-"
  done
}
echo
echo "command: $command_line"
print_tables | tee "$work/table.md"
if [ -n "$results_dir" ]; then
  echo "frontend-bench: wrote $(write_result_file "$results_dir" "${result_name:-frontend-bench-$net}" \
    "frontend-bench.sh: server CPUs $server_cpus, --net $net, --io $io_modes, --port-queries $port_queries" "$command_line" "$work/table.md")"
fi
