#!/usr/bin/env bash
# The multi-core scaling curve: for N server CPUs (default 1 2 4 8), onepassd with N pinned
# workers and the reference server with N SO_REUSEPORT threads, one after the other, each
# driven by the same closed-loop tester on the client CPUs (default 8-15), with loopback
# receive processing steered to the server CPUs (RPS, as RSS would behind a NIC). onepassd
# runs once per --steering mode (default "cpu hash": CPU steering on, then off). Prints N, the
# steering mode, conn/s of both, their ratio, onepassd per core, its fraction of linear (conn/s
# at N over N x conn/s at 1, same mode) and p99. --io "epoll uring" runs each steering mode once
# per worker loop (onepassd --io), so both loops scale in the same run.
#
#   loadtest/scaling.sh [--seconds 8] [--counts "1 2 4 8"] [--client-cpus 8-15] [--proto dns|ocsp|whois]
#                       [--steering "cpu hash"] [--io "epoll"] [--concurrency 512] [--net lo|veth]
#                       [--server-args "ARGS"] [--bin DIR] [--out DIR] [--name NAME] [--results DIR]
#
# --server-args adds ARGS (split on spaces) to every onepassd command line, e.g.
# "--private-fd-tables=false".
# --net veth (loadtest/net_lib.sh): the client lives in a network namespace behind a veth pair;
# packets to the server are received on the server CPUs, packets to the client on the client
# CPUs (on lo, the server CPUs also do the client's receive work).
# Made for a 16-core machine, from a static build directory (no packages needed: bash,
# coreutils, awk). Binaries: --bin DIR or ONEPASSD, ONEPASS_LOAD, ONEPASS_REFERENCE.
# Bounded: the whole run stays under 6 minutes (--seconds is lowered to fit).
# The table is also written as a result file, DIR/DATE-COMMIT-NAME.md (--results DIR, default
# loadtest/results; --results '' writes none; --name NAME, default scaling-PROTO-NET).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"

seconds=8
counts="1 2 4 8"
steering_modes="cpu hash"
io_modes="epoll"
client_cpus=8-15
proto=dns
concurrency=""
BIN_DIR=""
server_extra=""
command_line=$(command_as_run "$0" "$@")
COMMON_OPTIONS="seconds io client-cpus concurrency bin out net name results"
while [ $# -gt 0 ]; do
  case $1 in
    --counts) counts=$2; shift 2 ;;
    --steering) steering_modes=$2; shift 2 ;;
    --proto) proto=$2; shift 2 ;;
    --server-args) server_extra=$2; shift 2 ;;
    *) common_option "$@"; shift "$OPTION_WORDS" ;;
  esac
done
find_binaries onepassd load reference

read -ra ns <<< "$counts"
read -ra steerings <<< "$steering_modes"
read -ra ios <<< "$io_modes"
# A mode is STEERING or STEERING/IO (the latter only when more than one loop is measured).
modes=()
for steering in "${steerings[@]}"; do
  for io in "${ios[@]}"; do
    if [ ${#ios[@]} -gt 1 ]; then modes+=("$steering/$io"); else modes+=("$steering"); fi
  done
done
runs=$(((1 + ${#modes[@]}) * ${#ns[@]}))
# Each run costs its seconds plus ~3 s of start, drain and stop: keep the total under 6 min.
max_seconds=$((330 / runs - 3))
if ((seconds > max_seconds)); then
  echo "scaling: --seconds lowered from $seconds to $max_seconds to stay under 6 minutes"
  seconds=$max_seconds
fi
n_client=$(count_cpus "$client_cpus")
concurrency=${concurrency:-$((64 * n_client))}
cores=$(nproc)
make_work_dir

protocol_args "$proto" || exit 1
read -ra extra_args <<< "$server_extra"
server_args+=("${extra_args[@]}")
net_setup "$net" 0 "$client_cpus" || exit 1  # each N steers to its own server CPUs below

echo "scaling: $(uname -r), nproc=$cores, $proto, --net $net,${server_extra:+ onepassd $server_extra,} client CPUs $client_cpus ($n_client threads, $concurrency in flight), ${seconds}s per run, $runs runs"

measure() {  # measure NAME SERVER-CMD...: leaves $work/NAME.json
  local name=$1
  shift
  if ! start_server "$work/$name.out" "$@"; then
    echo "scaling: $name did not start" >&2
    return 0
  fi
  local ticks0
  ticks0=$(cpu_ticks "$server_cpus")
  client_exec "$load" --target "$SERVER_ADDR" "${load_args[@]}" --threads "$n_client" --cpus "$client_cpus" \
    --concurrency "$concurrency" --duration "$seconds" --timeout-ms 2000 \
    --source "$NET_CLIENT_SOURCES" --min-success 0 --json "$work/$name.json" > "$work/$name.txt" || true
  busy_cores "$ticks0" "$(cpu_ticks "$server_cpus")" "$(count_cpus "$server_cpus")" > "$work/$name.busy"
  stop_server > /dev/null
}

rows=()
for n in "${ns[@]}"; do
  server_cpus="0-$((n - 1))"
  [ "$n" -eq 1 ] && server_cpus=0
  overlap=""
  for cpu in $(expand_cpus "$server_cpus"); do
    [[ " $(expand_cpus "$client_cpus") " == *" $cpu "* ]] && overlap=$cpu
    ((cpu < cores)) || overlap=$cpu
  done
  if [ -n "$overlap" ]; then
    echo "scaling: skipping N=$n: CPU $overlap is a client CPU or absent (nproc=$cores)"
    continue
  fi
  net_steer "$server_cpus"
  echo "scaling: N=$n server CPUs $server_cpus"
  for mode in "${modes[@]}"; do
    io_args=()
    [[ $mode == */* ]] && io_args=(--io "${mode#*/}")
    measure "onepassd-${mode/\//-}-$n" "$onepassd" "${server_args[@]}" --steering "${mode%%/*}" \
      "${io_args[@]}" --listen "$NET_SERVER_IP:0" --workers "$n" --cpus "$server_cpus"
  done
  measure "reference-$n" "$reference" "${reference_args[@]}" --listen "$NET_SERVER_IP:0" --threads "$n" --cpus "$server_cpus"
  r="$work/reference-$n.json"
  r_rate=$(json_number "$r" ok_per_s 2>/dev/null || echo 0)
  for mode in "${modes[@]}"; do
    key=${mode/\//_}
    o="$work/onepassd-${mode/\//-}-$n.json"
    o_rate=$(json_number "$o" ok_per_s 2>/dev/null || echo 0)
    o_busy=$(cat "$work/onepassd-${mode/\//-}-$n.busy" 2>/dev/null || echo 0)
    r_busy=$(cat "$work/reference-$n.busy" 2>/dev/null || echo 0)
    # Per busy core: conn/s over the server CPUs' busy share, in cores.
    o_core=$(awk -v a="${o_rate:-0}" -v b="$o_busy" 'BEGIN { if (b > 0) printf "%.0f", a / b; else print 0 }')
    r_core=$(awk -v a="${r_rate:-0}" -v b="$r_busy" 'BEGIN { if (b > 0) printf "%.0f", a / b; else print 0 }')
    if [ "$n" -eq "${ns[0]}" ]; then
      eval "first_rate_$key=\${o_rate:-0}; first_core_$key=$o_core; first_ref_core=$r_core"
      first_n=$n
    fi
    first_var="first_rate_$key"
    first_core_var="first_core_$key"
    flags=""
    grep -q '"client_bound": true' "$o" "$r" 2>/dev/null && flags=" CLIENT-BOUND"
    rows+=("$(printf '%3s %11s %12s %12s %7s %10s %7s %5s/%-5s %9s %9s %6s %6s %9s %9s %s' "$n" "$mode" "${o_rate:-0}" "${r_rate:-0}" \
      "$(ratio "$o_rate" "$r_rate")" "$(awk -v a="${o_rate:-0}" -v n="$n" 'BEGIN { printf "%.0f", a / n }')" \
      "$(awk -v a="${o_rate:-0}" -v n="$n" -v f="${!first_var:-0}" -v n0="${first_n:-1}" \
        'BEGIN { if (f > 0) printf "%.3f", (a / n) / (f / n0); else print "-" }')" \
      "$o_busy" "$r_busy" "$o_core" "$r_core" \
      "$(awk -v a="$o_core" -v f="${!first_core_var:-0}" 'BEGIN { if (f > 0) printf "%.3f", a / f; else print "-" }')" \
      "$(awk -v a="$r_core" -v f="${first_ref_core:-0}" 'BEGIN { if (f > 0) printf "%.3f", a / f; else print "-" }')" \
      "$(json_number "$o" p99 latency_us 2>/dev/null || echo -)" \
      "$(json_number "$r" p99 latency_us 2>/dev/null || echo -)" "$flags")")
  done
done

# The table, printed and kept for the result file.
print_table() {
  printf '%3s %11s %12s %12s %7s %10s %7s %11s %9s %9s %6s %6s %9s %9s\n' N steer "onepassd/s" "reference/s" ratio "per core" linear "busy o/ref" "o/busy" "ref/busy" "b-lin" "ref-bl" "p99 us" "ref p99"
  for row in "${rows[@]}"; do echo "$row"; done
  echo "(steer: onepassd --steering cpu (on) or hash (off), /IO the worker loop (--io); linear: per-core conn/s over the first N's, same mode; busy: the server CPUs' busy share in cores (/proc/stat, softirq included), onepassd/reference; o/busy, ref/busy: conn/s per busy core; b-lin, ref-bl: that over the first N's, i.e. how the CPU per connection holds up as cores are added, which stays a measure when the client, not the server, sets the rate; conn/s = completed OK transactions per second; CLIENT-BOUND rows are lower bounds: the tester's threads were saturated)"
}
echo
print_table | tee "$work/table.txt"
if [ -n "$results_dir" ]; then
  echo "scaling: wrote $(write_result_file "$results_dir" "${result_name:-scaling-$proto-$net}" \
    "scaling.sh: $proto, counts $counts, client CPUs $client_cpus, --net $net" "$command_line" "$work/table.txt")"
fi
