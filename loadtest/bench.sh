#!/usr/bin/env bash
# Measures onepassd against the minimal reference server (onepass-reference) in the same run,
# on the same CPUs, with the same client: the RATIO is the figure that travels between
# machines; the absolute conn/s depend on the machine.
#
#   loadtest/bench.sh [--seconds 10] [--server-cpus 0] [--client-cpus 1-N] [--proto dns|dnssec|dnslarge|ocsp|whois]
#                     [--concurrency 64] [--rounds 1] [--bin DIR] [--out DIR]
#
# Binaries: --bin DIR (a build directory, or a folder holding the three binaries; default
# build/release, then build/ci), or their paths in ONEPASSD, ONEPASS_LOAD, ONEPASS_REFERENCE.
# Each server gets one worker per server CPU, pinned; the tester gets one thread per client
# CPU, pinned, closed loop. Loopback receive processing is steered to the server CPUs (RPS;
# needs root, restored at exit). Prints conn/s, latency and the ratio onepassd / reference.
# --rounds R alternates the two servers R times (a busy machine drifts) and compares the sums.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"

seconds=10
server_cpus=0
client_cpus=""
proto=dns
concurrency=""
BIN_DIR=""
out_dir=""
rounds=1
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --server-cpus) server_cpus=$2; shift 2 ;;
    --client-cpus) client_cpus=$2; shift 2 ;;
    --proto) proto=$2; shift 2 ;;
    --concurrency) concurrency=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bin) BIN_DIR=$2; shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench: unknown option $1" >&2; usage >&2; exit 1 ;;
  esac
done
if [ -z "$BIN_DIR" ]; then
  for BIN_DIR in "$here/../build/release" "$here/../build/ci" "$here/../build/static"; do
    [ -x "$BIN_DIR/server/onepassd" ] && break
  done
fi
onepassd=$(find_binary onepassd "${ONEPASSD:-}")
load=$(find_binary onepass-load "${ONEPASS_LOAD:-}")
reference=$(find_binary onepass-reference "${ONEPASS_REFERENCE:-}")

cores=$(nproc)
if [ -z "$client_cpus" ]; then
  client_cpus=""
  for ((cpu = 0; cpu < cores; cpu++)); do
    [[ " $(expand_cpus "$server_cpus") " == *" $cpu "* ]] || client_cpus+="${client_cpus:+,}$cpu"
  done
  [ -n "$client_cpus" ] || { echo "bench: no CPU left for the client; pass --client-cpus" >&2; exit 1; }
fi
n_server=$(count_cpus "$server_cpus")
n_client=$(count_cpus "$client_cpus")
concurrency=${concurrency:-$((64 * n_client))}
make_work_dir

protocol_args "$proto" || exit 1

echo "bench: $(uname -r), nproc=$cores, $proto, server CPUs $server_cpus ($n_server workers), client CPUs $client_cpus ($n_client threads), closed loop $concurrency in flight, ${seconds}s per server"
steer_rps "$server_cpus"

# run_one NAME SERVER-CMD...: one measurement; leaves $work/NAME.json
run_one() {
  local name=$1
  shift
  start_server "$work/$name.out" "$@" || return 1
  "$load" --target "$SERVER_ADDR" "${load_args[@]}" --threads "$n_client" --cpus "$client_cpus" \
    --concurrency "$concurrency" --duration "$seconds" --timeout-ms 2000 \
    --source 127.0.0.2-127.0.0.254 --min-success 0 --json "$work/$name.json" > "$work/$name.txt" || true
  local stats
  stats=$(stop_server)
  sed 's/^/  /' "$work/$name.txt"
  echo "  server: ${stats:-no stats line}"
}

names=()
for ((round = 1; round <= rounds; round++)); do
  echo
  echo "== onepassd ($onepassd), round $round of $rounds"
  run_one "onepassd-$round" "$onepassd" "${server_args[@]}" --listen 127.0.0.1:0 --workers "$n_server" --cpus "$server_cpus"
  if [ "$proto" = dnssec ] && [ "$round" = 1 ]; then
    # The reference answers as many bytes as onepassd did (its answer size, prefix excluded).
    answer_bytes=$(awk -v b="$(json_number "$work/onepassd-1.json" bytes_received)" \
      -v n="$(json_number "$work/onepassd-1.json" ok)" 'BEGIN { if (n > 0) printf "%d", b / n - 2; else print 0 }')
    echo "  (reference answers $answer_bytes bytes, as onepassd did)"
    reference_args+=(--dns-answer-bytes "$answer_bytes")
  fi
  echo
  echo "== reference ($reference), round $round of $rounds"
  run_one "reference-$round" "$reference" "${reference_args[@]}" --listen 127.0.0.1:0 --threads "$n_server" --cpus "$server_cpus"
  names+=("onepassd-$round" "reference-$round")
done

echo
printf '%-12s %12s %10s %8s %10s %10s %10s %10s %s\n' server "ok conn/s" ok errors "p50 us" "p99 us" "p99.9 us" "max us" client
sum_onepassd=0
sum_reference=0
for name in "${names[@]}"; do
  f="$work/$name.json"
  [ -s "$f" ] || { echo "$name: no result"; continue; }
  bound=$(json_bool "$f" client_bound)
  rate=$(json_number "$f" ok_per_s)
  printf '%-12s %12s %10s %8s %10s %10s %10s %10s %s\n' "$name" \
    "$rate" "$(json_number "$f" ok)" "$(json_number "$f" total errors)" \
    "$(json_number "$f" p50 latency_us)" "$(json_number "$f" p99 latency_us)" \
    "$(json_number "$f" p99_9 latency_us)" "$(json_number "$f" max latency_us)" \
    "$([ "$bound" = true ] && echo CLIENT-BOUND || echo ok)"
  if [[ $name == onepassd-* ]]; then
    sum_onepassd=$(awk -v a="$sum_onepassd" -v b="$rate" 'BEGIN { print a + b }')
  else
    sum_reference=$(awk -v a="$sum_reference" -v b="$rate" 'BEGIN { print a + b }')
  fi
done
echo "ratio onepassd/reference: $(ratio "$sum_onepassd" "$sum_reference")  (conn/s summed over $rounds round(s); nproc=$cores, server CPUs $server_cpus, client CPUs $client_cpus, $proto)"
if grep -q '"client_bound": true' "$work"/*.json 2>/dev/null; then
  echo "note: the client was the bottleneck in at least one run: the figures are lower bounds; give the client more CPUs (--client-cpus)"
fi
