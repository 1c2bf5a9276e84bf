#!/usr/bin/env bash
# Kernel events per connection of onepassd's worker loops: one worker on --server-cpu, DNS,
# closed loop from one client thread on --client-cpu, each --io loop in turn --rounds times,
# `perf stat -p` on the server during the load. Prints per connection: the server CPU's busy
# time (/proc/stat, softirq in the idle task included), the server's task-clock, syscalls,
# context switches and the io_uring tracepoints (how many accepts found the listener's queue
# empty and armed a poll: io_uring_poll_arm). A diagnosis tool, not a benchmark: no reference
# server, no ratios.
#
#   loadtest/loop-profile.sh [--net lo|veth] [--io "epoll uring"] [--seconds 4] [--rounds 2]
#                            [--server-cpu 0] [--client-cpu 1] [--concurrency 64] [--bin DIR]
#
# Needs root (RPS steering, --net veth) and perf (linux-perf). Binaries as for bench.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"

io_modes="epoll uring"
seconds=4
rounds=2
server_cpu=0
client_cpu=1
concurrency=64
BIN_DIR=""
COMMON_OPTIONS="net io seconds rounds server-cpu client-cpu concurrency bin"
while [ $# -gt 0 ]; do
  common_option "$@"
  shift "$OPTION_WORDS"
done
command -v perf > /dev/null || { echo "loop-profile: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
find_binaries onepassd load
events=raw_syscalls:sys_enter,context-switches,task-clock
events+=,io_uring:io_uring_poll_arm,io_uring:io_uring_task_add,io_uring:io_uring_submit_req

make_work_dir
take_rps_lock
net_setup "$net" "$server_cpu" "$client_cpu" || exit 1
trap 'cleanup_work_dir' EXIT
echo "loop-profile: $(uname -r), nproc=$(nproc), --net $net, server CPU $server_cpu, client CPU $client_cpu, $concurrency in flight, ${seconds}s per run"
for ((round = 1; round <= rounds; round++)); do
  for io in $io_modes; do
    name=$io-$round
    start_server "$work/$name.out" "$onepassd" --handler dns --listen "$NET_SERVER_IP:0" \
      --workers 1 --cpus "$server_cpu" --io "$io" || exit 1
    ticks0=$(cpu_ticks "$server_cpu")
    perf stat -e "$events" -p "$SERVER_PID" -o "$work/$name.perf" -- sleep "$seconds" &
    perf_pid=$!
    client_exec "$load" --target "$SERVER_ADDR" --proto dns --qname www.example.com. --qtype A \
      --threads 1 --cpus "$client_cpu" --concurrency "$concurrency" --duration "$seconds" \
      --source "$NET_CLIENT_SOURCES" --min-success 0 --json "$work/$name.json" > /dev/null || true
    wait "$perf_pid" || true
    busy=$(busy_cores "$ticks0" "$(cpu_ticks "$server_cpu")" 1)
    stop_server > /dev/null
    ok=$(json_number "$work/$name.json" ok)
    echo
    echo "== --io $io, round $round: $ok connections, server CPU busy $busy"
    awk -v busy="$busy" -v s="$seconds" -v ok="$ok" 'BEGIN { if (ok > 0) printf "   %-36s %10.2f\n", "cpu busy us", busy * s * 1e6 / ok }'
    # perf's lines: "COUNT EVENT ..." (task-clock: "MSEC msec task-clock").
    awk -v ok="$ok" '$1 ~ /^[0-9.,]+$/ && $2 != "seconds" && ok > 0 { v = $1; gsub(",", "", v)
        ev = ($2 == "msec") ? "task-clock us" : $2; if ($2 == "msec") v *= 1000
        printf "   %-36s %10.3f\n", ev, v / ok }' "$work/$name.perf"
  done
done
echo "(per connection; cpu busy: the server CPU's busy time over OK connections)"
