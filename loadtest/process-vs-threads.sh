#!/usr/bin/env bash
# Is a multi-worker onepassd limited by what its threads share in the kernel (the process's one
# file-descriptor table: accept4 and close both take its lock)? Measures, with the same client,
# one onepassd with N workers on one port (--private-fd-tables=false, then =true) against N
# onepassd processes with one worker each on ports of their own, for each worker loop (--io). The client is N single-thread onepass-load
# processes, one per client CPU, each with its own source range, so the client side is the same
# in both arrangements; hash steering (the N processes are N reuseport groups).
#
#   loadtest/process-vs-threads.sh [--workers 8] [--client-cpu0 8] [--seconds 8] [--io "epoll uring"]
#                                  [--bin DIR]
#
# Server CPUs 0..N-1, client CPUs C0..C0+N-1. Prints conn/s of each arrangement and the ratios
# to the shared table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"

workers=8
client_cpu0=8
seconds=8
io_modes="epoll uring"
BIN_DIR=""
COMMON_OPTIONS="seconds io bin"
while [ $# -gt 0 ]; do
  case $1 in
    --workers) workers=$2; shift 2 ;;
    --client-cpu0) client_cpu0=$2; shift 2 ;;
    *) common_option "$@"; shift "$OPTION_WORDS" ;;
  esac
done
find_binaries onepassd load
if ((client_cpu0 + workers > $(nproc))); then
  echo "process-vs-threads: needs $((client_cpu0 + workers)) CPUs (client CPUs from $client_cpu0), nproc=$(nproc)" >&2
  exit 1
fi
make_work_dir
protocol_args dns
base_port=$((20000 + RANDOM % 20000))
steer_rps "0-$((workers - 1))"
echo "process-vs-threads: $(uname -r), nproc=$(nproc), $workers workers, client CPUs $client_cpu0-$((client_cpu0 + workers - 1)), ${seconds}s, port $base_port"

# load_all NAME SAME_PORT: N single-thread testers at once; prints the summed conn/s.
load_all() {
  local name=$1 same_port=$2 i port pids=() sum=0 rate
  for ((i = 0; i < workers; i++)); do
    port=$((base_port + i))
    [ "$same_port" = 1 ] && port=$base_port
    "$load" --target "127.0.0.1:$port" "${load_args[@]}" --threads 1 --cpus $((client_cpu0 + i)) \
      --concurrency 64 --duration "$seconds" --timeout-ms 2000 \
      --source "127.0.$((i + 1)).2-127.0.$((i + 1)).254" --min-success 0 \
      --json "$work/$name-$i.json" > "$work/$name-$i.txt" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}" || true
  for ((i = 0; i < workers; i++)); do
    rate=$(json_number "$work/$name-$i.json" ok_per_s 2>/dev/null || echo 0)
    sum=$(awk -v a="$sum" -v b="$rate" 'BEGIN { printf "%.0f", a + b }')
  done
  echo "$sum"
}

rows=()
read -ra ios <<< "$io_modes"
one_process() {  # one_process NAME EXTRA-FLAGS...: conn/s of one N-worker onepassd
  local name=$1 pid rate=0
  shift
  "$onepassd" "${server_args[@]}" --io "$io" --steering hash --listen "127.0.0.1:$base_port" \
    --workers "$workers" --cpus "0-$((workers - 1))" "$@" > "$work/one.out" 2> "$work/one.out.err" &
  pid=$!
  if wait_ready "$work/one.out" "$pid" onepassd; then rate=$(load_all "$name" 1); fi
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "$rate"
}

for io in "${ios[@]}"; do
  threads_rate=$(one_process "threads-$io" --private-fd-tables=false)
  private_rate=$(one_process "private-$io" --private-fd-tables=true)
  pids=()
  for ((cpu = 0; cpu < workers; cpu++)); do
    "$onepassd" "${server_args[@]}" --io "$io" --steering hash --listen "127.0.0.1:$((base_port + cpu))" \
      --workers 1 --cpus "$cpu" > "$work/p$cpu.out" 2> "$work/p$cpu.out.err" &
    pids+=($!)
    wait_ready "$work/p$cpu.out" "${pids[-1]}" "onepassd on CPU $cpu" || true
  done
  procs_rate=$(load_all "processes-$io" 0)
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  rows+=("$(printf '%6s %16s %16s %16s %9s %9s' "$io" "$threads_rate" "$private_rate" "$procs_rate" \
    "$(ratio "$private_rate" "$threads_rate")" "$(ratio "$procs_rate" "$threads_rate")")")
done

echo
printf '%6s %16s %16s %16s %9s %9s\n' io "shared table" "private tables" "N processes" private/ procs/
echo "(conn/s; shared table and private tables: one onepassd with N workers, with --private-fd-tables=false and =true)"
for row in "${rows[@]}"; do echo "$row"; done
