#!/usr/bin/env bash
# The main job, end to end: onepassd serves each protocol in turn on its default data (DNS: the
# embedded example.com zone; OCSP: pre-signed responses made here by
# scripts/make-ocsp-testdata.sh; Whois: the embedded database), and the bundled load tester
# drives it with a new TCP connection per transaction, checking every answer, then prints
# what the server sustained. After each protocol, the server's own counts: accepted, served,
# errors, rejected, timeouts (its other counters: its `stats` line on SIGUSR1 and at exit, and
# Prometheus /metrics with --metrics-listen).
#
#   scripts/demo.sh [BUILD_DIR] [--seconds 5] [--protos "dns ocsp whois"]
#
# BUILD_DIR defaults to build/release (scripts/main.sh builds it). Everything it starts, it
# stops (by PID, at exit). A protocol whose handler is not in this onepassd is skipped. With
# more than one CPU, loopback receive processing is steered to the server's CPU while it runs
# (loadtest/bench_lib.sh steer_rps: root, under the benchmarks' lock, restored at exit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$root/loadtest/bench_lib.sh"

BIN_DIR="$root/build/release"
if [ $# -gt 0 ] && [[ $1 != --* ]]; then
  BIN_DIR=$1
  shift
fi
seconds=5
protos="dns ocsp whois"
COMMON_OPTIONS="seconds"
while [ $# -gt 0 ]; do
  case $1 in
    --protos) protos=$2; shift 2 ;;
    *) common_option "$@"; shift "$OPTION_WORDS" ;;
  esac
done
find_binaries onepassd load

work=$(mktemp -d)
trap 'stop_server >/dev/null 2>&1 || true; restore_rps; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# Server on CPU 0, the tester on the others (on a 1-CPU machine they share it).
cores=$(nproc)
server_cpus=0
client_cpus=0
[ "$cores" -gt 1 ] && client_cpus=1
[ "$cores" -gt 2 ] && client_cpus="1-$((cores - 1))"
client_threads=$(count_cpus "$client_cpus")

echo "demo: onepassd on CPU $server_cpus, onepass-load on CPUs $client_cpus ($client_threads threads), ${seconds}s per protocol, nproc=$cores"
# On loopback the receive work of a packet runs on its sender's CPU: the client's CPU would do
# the server's handshake and request processing, and the client look like the bottleneck.
# Steered to the server's CPU (RPS, as loadtest/bench.sh does; root; restored at exit), each
# side pays for what it receives, and the figure is the server's.
[ "$cores" -gt 1 ] && steer_rps "$server_cpus"
summary=()
for proto in $protos; do
  server_extra=()
  case $proto in
    dns) args=(--proto dns --qname www.example.com. --qtype A) ;;
    whois) args=(--proto whois --whois-query example.com --expect-substring EXAMPLE.COM) ;;
    ocsp)
      # A fresh data set (scripts/make-ocsp-testdata.sh) in the scratch folder, or
      # $ONEPASS_OCSP_DATA; the tester asks for the "good" certificate's status.
      if ! data=$(ocsp_data_dir); then
        echo "demo: ocsp skipped: no OCSP data set (reason above)"
        continue
      fi
      server_extra=(--ocsp-responses "$data/responses")
      args=(--proto ocsp --ocsp-request "$data/good.req.der") ;;
    *) echo "demo: unknown protocol $proto" >&2; continue ;;
  esac
  echo
  echo "== $proto: onepassd --handler $proto (embedded default data)"
  if ! start_server "$work/$proto.out" "$onepassd" --handler "$proto" "${server_extra[@]}" --listen 127.0.0.1:0 \
      --workers 1 --cpus "$server_cpus"; then
    echo "demo: $proto skipped: this onepassd could not start its handler (reason above)"
    continue
  fi
  "$load" --target "$SERVER_ADDR" "${args[@]}" --threads "$client_threads" --cpus "$client_cpus" \
    --concurrency $((32 * client_threads)) --duration "$seconds" --progress \
    --server-pid "$SERVER_PID" --server-cpus "$server_cpus" --json "$work/$proto.json" || true
  if [ "$proto" = dns ] && [ -s "$work/dns.json" ]; then
    # The same server at half that rate, open loop: the latency a client sees below saturation,
    # measured from each connection's intended start (a stall cannot hide).
    half=$(awk -v r="$(json_number "$work/dns.json" ok_per_s)" 'BEGIN { printf "%d", r / 2 }')
    if [ "${half:-0}" -gt 0 ]; then
      echo "-- open loop at $half conn/s (half the closed-loop rate)"
      "$load" --target "$SERVER_ADDR" "${args[@]}" --threads "$client_threads" --cpus "$client_cpus" \
        --rate "$half" --duration "$seconds" --server-pid "$SERVER_PID" --server-cpus "$server_cpus" \
        --json "$work/dns-open.json" || true
    fi
  fi
  # The counters to read first; the server's other hundred are in its whole `stats` line.
  echo "server: $(stats_summary "$(stop_server)")"
  for f in "$work/$proto.json" "$work/$proto-open.json"; do
    [ -s "$f" ] || continue
    mode=closed
    [[ $f == *-open.json ]] && mode="open $(json_number "$f" requested_rate | cut -d. -f1)/s"
    summary+=("$(printf '%-6s %-14s %10s %10s %8s %9s %9s %10s %9s %9s %s' "$proto" "$mode" \
      "$(json_number "$f" ok_per_s)" "$(json_number "$f" ok)" "$(json_number "$f" total errors)" \
      "$(json_number "$f" p50 latency_us)" "$(json_number "$f" p99 latency_us)" \
      "$(json_number "$f" p99_9 latency_us)" "$(json_number "$f" cpu_us_per_conn client)" \
      "$(json_number "$f" cpu_us_per_conn server)" \
      "$(grep -q '"client_bound": true' "$f" && echo 'client-bound' || echo '')")")
  done
done

echo
echo "== summary (conn/s = whole transactions per second, each a new TCP connection; latency in us)"
printf '%-6s %-14s %10s %10s %8s %9s %9s %10s %9s %9s\n' proto loop "conn/s" ok errors p50 p99 p99.9 \
  "client us" "server us"
for row in "${summary[@]}"; do echo "$row"; done
echo "(loopback, server and client on one machine; client/server us: CPU per connection, /proc schedstat of each process plus the ksoftirqd of its CPUs; loadtest/bench.sh compares against a minimal reference server)"
echo "(server: its own counts; every counter of a running onepassd: GET /metrics (Prometheus) with --metrics-listen ADDR:PORT, or kill -USR1 PID for a stats line on stderr; docs/operations.md)"
