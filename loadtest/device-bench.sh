#!/usr/bin/env bash
# Every measurement that needs the 16-core machine, in one run (its time is counted in
# minutes): from a bundle made here with
#   scripts/bundle.sh build/release .devpkg nsd nsd-checkconf dnsdist kdig ip ss taskset chrt flock pgrep \
#     knotd kxdpgun ethtool
# and carried there (.devpkg is ignored by git):
#   loadtest/device-bench.sh [--bin .devpkg] [--seconds 5] [--server-cpu 0] [--backend-cpus 1-3]
#                            [--client-cpus 8-15] [--frontend-client-cpus 4-15] [--counts "1 2 4 8"]
#                            [--only scaling,frontend,frontend-lo,bench,xdp] [--results DIR]
#   1. scaling: loadtest/scaling.sh, 1/2/4/8 workers, CPU steering on and off, both worker
#      loops, client on --client-cpus, --net veth (each side's receive work on its own CPUs).
#   2. frontend: loadtest/frontend-bench.sh --net veth, onepassd's DNS frontend against dnsdist,
#      one server core, NSD on --backend-cpus, the client on --frontend-client-cpus (enough
#      client CPUs that the server core, not the client, is the bottleneck).
#   3. frontend-lo: the same on loopback (RPS to the server core), as measured on 2 cores.
#   4. bench: loadtest/bench.sh --net veth, one core, onepassd (epoll, uring) against the
#      reference server, DNS.
#   5. xdp: loadtest/xdp-bench.sh (issue 40), kxdpgun -T on the first of --client-cpus against
#      onepassd --xdp, onepassd on kernel sockets and knotd's XDP-TCP on --server-cpu, over a
#      veth pair (needs root, and namespaces: not run with --net lo); its table in --results.
# --net veth falls back to lo, said in the output, where the machine cannot make a namespace.
# Each run writes its result file into --results DIR (default loadtest/results of the copy; give
# a folder that comes back, and ONEPASS_COMMIT=<commit> where the copy has no .git).
# Bounded: about 7 minutes with the defaults.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"
BIN_DIR=.devpkg
seconds=5
server_cpu=0
backend_cpus=1-3
client_cpus=8-15
frontend_client_cpus=4-15
counts="1 2 4 8"
only=scaling,frontend,frontend-lo,bench,xdp
COMMON_OPTIONS="bin seconds server-cpu client-cpus results"
while [ $# -gt 0 ]; do
  case $1 in
    --backend-cpus) backend_cpus=$2; shift 2 ;;
    --frontend-client-cpus) frontend_client_cpus=$2; shift 2 ;;
    --counts) counts=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) common_option "$@"; shift "$OPTION_WORDS" ;;
  esac
done
bin=$(cd "$BIN_DIR" && pwd)
# The machine's own tools first; the bundled ones fill in what it lacks.
export PATH="$PATH:$bin/tools"
echo "device-bench: $(uname -r), nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); load $(cut -d' ' -f1-3 /proc/loadavg)"
for tool in ip nsd dnsdist kdig taskset chrt flock pgrep ss knotd kxdpgun ethtool; do
  printf '  %s: %s\n' "$tool" "$(command -v "$tool" || echo missing)"
done
net=veth
if ! net_veth_possible; then
  echo "device-bench: no network namespace or veth here: --net lo for every run"
  net=lo
fi
want() { [[ ",$only," == *",$1,"* ]]; }
section() { echo; echo "######## $* ($(date -u +%T))"; }

if want scaling; then
  section "1. scaling, --net $net"
  "$here/scaling.sh" --bin "$bin" --net "$net" --seconds "$seconds" --counts "$counts" \
    --client-cpus "$client_cpus" --steering "cpu hash" --io "epoll uring" --proto dns \
    --results "$results_dir" --name "scaling-16core-$net"
fi
if want frontend; then
  section "2. frontend vs dnsdist, --net $net"
  "$here/frontend-bench.sh" --bin "$bin" --net "$net" --seconds "$seconds" --rounds 2 \
    --server-cpus "$server_cpu" --backend-cpus "$backend_cpus" --client-cpus "$frontend_client_cpus" \
    --results "$results_dir" --name "frontend-bench-16core-$net"
fi
if want frontend-lo; then
  section "3. frontend vs dnsdist, --net lo"
  "$here/frontend-bench.sh" --bin "$bin" --net lo --seconds "$seconds" --rounds 1 \
    --server-cpus "$server_cpu" --backend-cpus "$backend_cpus" --client-cpus "$frontend_client_cpus" \
    --results "$results_dir" --name frontend-bench-16core-lo
fi
if want bench; then
  section "4. one core against the reference, --net $net"
  "$here/bench.sh" --bin "$bin" --net "$net" --seconds "$seconds" --rounds 2 --proto dns \
    --io "epoll uring" --server-cpus "$server_cpu" --client-cpus "$client_cpus" \
    --results "$results_dir" --name "bench-16core-$net"
fi
if want xdp; then
  section "5. AF_XDP against kernel sockets and Knot's XDP-TCP, veth"
  if [ "$net" != veth ]; then
    echo "device-bench: xdp needs network namespaces and a veth pair: not run"
  else
    xdp_table=$(mktemp)
    xdp_args=(--onepassd "$bin/onepassd" --seconds "$seconds" --qps 40000
      --server-cpu "$server_cpu" --client-cpu "${client_cpus%%[-,]*}")
    "$here/xdp-bench.sh" "${xdp_args[@]}" | tee "$xdp_table"
    write_result_file "$results_dir" xdp-bench-16core-veth \
      "onepassd --xdp against kernel sockets and knotd XDP-TCP (device-bench.sh, 16 cores)" \
      "loadtest/xdp-bench.sh ${xdp_args[*]}" "$xdp_table"
    rm -f "$xdp_table"
  fi
fi
section "finished"
