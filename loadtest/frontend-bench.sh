#!/usr/bin/env bash
# Measures the DNS-over-TCP frontend (onepassd --dns-backend) against onepassd's own zone mode
# in the same run, with the same client and the same zone: NSD serves tests/data/example.com.zone
# over UDP on loopback, pinned to the backend CPUs (off the server CPU); onepassd runs one
# worker on the server CPU in three modes, alternated --rounds times:
#   zone       onepassd --zone example.com.zone (the single pass, precompiled answers)
#   fwd-nocache onepassd --dns-backend NSD --dns-cache-entries 0 (every query to NSD over UDP)
#   fwd-cache  onepassd --dns-backend NSD (hits answered in the single pass from the cache)
# and prints conn/s and latency for each, and the ratios fwd-cache/zone and fwd-nocache/zone.
# dnsdist is measured too when it is installed (same NSD, same client, one core; cache off and
# on); when it is not, the table says so.
#
#   loadtest/frontend-bench.sh [--seconds 10] [--server-cpus 0] [--backend-cpus 1]
#                              [--client-cpus 1] [--concurrency 64] [--rounds 1] [--bin DIR]
#
# Binaries as for bench.sh (--bin DIR, default build/release). Loopback RPS is left as it is.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"
# shellcheck source=loadtest/nsd_conf.sh
source "$here/nsd_conf.sh"

seconds=10
server_cpus=0
backend_cpus=""
client_cpus=""
concurrency=""
BIN_DIR=""
rounds=1
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --server-cpus) server_cpus=$2; shift 2 ;;
    --backend-cpus) backend_cpus=$2; shift 2 ;;
    --client-cpus) client_cpus=$2; shift 2 ;;
    --concurrency) concurrency=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bin) BIN_DIR=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "frontend-bench: unknown option $1" >&2; usage >&2; exit 1 ;;
  esac
done
if [ -z "$BIN_DIR" ]; then
  for BIN_DIR in "$here/../build/release" "$here/../build/ci"; do
    [ -x "$BIN_DIR/server/onepassd" ] && break
  done
fi
onepassd=$(find_binary onepassd "${ONEPASSD:-}")
load=$(find_binary onepass-load "${ONEPASS_LOAD:-}")
command -v nsd > /dev/null || { echo "frontend-bench: nsd is not installed (apt-get install nsd)" >&2; exit 1; }
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

# NSD on a free port, pinned to the backend CPUs; stopped at exit.
nsd_port=$(( (RANDOM % 20000) + 30000 ))
cp "$zone" "$work/zone0"
# All queries come from 127.0.0.1 (the frontend): NSD's response rate limiting (on by default,
# 200 answers/s per source) would answer TC=1 or drop. Off, as behind a frontend.
write_nsd_conf "$work/nsd.conf" "$work" "$nsd_port" example.com zone0 \
  "rrl-ratelimit: 0" "rrl-whitelist-ratelimit: 0"
nsd-checkconf "$work/nsd.conf"
taskset -c "$backend_cpus" nsd -d -c "$work/nsd.conf" > "$work/nsd.log" 2>&1 &
nsd_pid=$!
stop_nsd() { kill -TERM "$nsd_pid" 2>/dev/null || true; wait "$nsd_pid" 2>/dev/null || true; }
trap 'stop_nsd; cleanup_work_dir' EXIT
for ((tries = 0; tries < 100; tries++)); do
  kdig -p "$nsd_port" @127.0.0.1 +short +timeout=1 +retry=0 example.com SOA > /dev/null 2>&1 && break
  sleep 0.1
done
kdig -p "$nsd_port" @127.0.0.1 +short +timeout=1 +retry=0 example.com SOA > /dev/null ||
  { echo "frontend-bench: NSD did not answer; its log:" >&2; cat "$work/nsd.log" >&2; exit 1; }

echo "frontend-bench: $(uname -r), nproc=$cores, onepassd 1 worker on CPU $server_cpus, NSD on CPUs $backend_cpus (UDP 127.0.0.1:$nsd_port), client CPUs $client_cpus ($n_client threads), closed loop $concurrency in flight, ${seconds}s per mode, www.example.com A"

run_one() {
  local name=$1
  shift
  start_server "$work/$name.out" "$@" || return 1
  "$load" --target "$SERVER_ADDR" --proto dns --qname www.example.com. --qtype A \
    --threads "$n_client" --cpus "$client_cpus" --concurrency "$concurrency" \
    --duration "$seconds" --timeout-ms 2000 --source 127.0.0.2-127.0.0.254 --min-success 0 \
    --json "$work/$name.json" > "$work/$name.txt" || true
  local stats
  stats=$(stop_server)
  sed 's/^/  /' "$work/$name.txt"
  echo "  server: ${stats:-no stats line}"
}

common=(--handler dns --listen 127.0.0.1:0 --workers 1 --cpus "$server_cpus")
names=()
for ((round = 1; round <= rounds; round++)); do
  echo; echo "== zone mode, round $round"
  run_one "zone-$round" "$onepassd" "${common[@]}" --zone "$zone"
  echo; echo "== frontend, cache off, round $round"
  run_one "fwd-nocache-$round" "$onepassd" "${common[@]}" --dns-backend "127.0.0.1:$nsd_port" \
    --dns-cache-entries 0
  echo; echo "== frontend, cache on, round $round"
  run_one "fwd-cache-$round" "$onepassd" "${common[@]}" --dns-backend "127.0.0.1:$nsd_port"
  names+=("zone-$round" "fwd-nocache-$round" "fwd-cache-$round")
done
if ! command -v dnsdist > /dev/null; then
  echo; echo "dnsdist: not installed on this machine; the dnsdist columns could not be measured"
fi

echo
printf '%-16s %12s %10s %8s %10s %10s %10s %s\n' mode "ok conn/s" ok errors "p50 us" "p99 us" "max us" client
declare -A sum=()
for name in "${names[@]}"; do
  f="$work/$name.json"
  [ -s "$f" ] || { echo "$name: no result"; continue; }
  rate=$(json_number "$f" ok_per_s)
  bound=$(json_bool "$f" client_bound)
  printf '%-16s %12s %10s %8s %10s %10s %10s %s\n' "$name" "$rate" "$(json_number "$f" ok)" \
    "$(json_number "$f" total errors)" "$(json_number "$f" p50 latency_us)" \
    "$(json_number "$f" p99 latency_us)" "$(json_number "$f" max latency_us)" \
    "$([ "$bound" = true ] && echo CLIENT-BOUND || echo ok)"
  mode=${name%-*}
  sum[$mode]=$(awk -v a="${sum[$mode]:-0}" -v b="$rate" 'BEGIN { print a + b }')
done
echo "ratio fwd-cache/zone:   $(ratio "${sum[fwd-cache]:-0}" "${sum[zone]:-0}")"
echo "ratio fwd-nocache/zone: $(ratio "${sum[fwd-nocache]:-0}" "${sum[zone]:-0}")"
