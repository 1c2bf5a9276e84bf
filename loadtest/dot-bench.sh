#!/usr/bin/env bash
# DNS over TLS (RFC 7858) connection rates: onepass-load --proto dot (one query per TLS
# connection, the shape resolvers use) against each DoT server, one run on one machine, the
# same zone (tests/data/example.com.zone) and query (www.example.com A):
#   nsd       NSD (tls-service-key/-pem, tls-port; server-count 1, RRL off)
#   bind      BIND 9 named (a tls block with session tickets on, listen-on tls; -n 1: one worker;
#             tcp-listen-queue 1024: its default of 10 drops SYNs at this rate)
#   dnsdist   dnsdist (addTLSLocal, one TCP worker, no cache) in front of a backend NSD
#   onepassd-idle0  the same with --tls-idle-timeout-ms 0 (every answer closes: the default
#             before DoT connections were kept), so that a run shows what the kept default costs
#             a one-query client
#   onepassd-openssl  the same with --tls-engine openssl: OpenSSL's handshake for every
#             connection instead of our own TLS 1.3 engine (server/tls/onepass/, the default)
#   onepassd-uring  the same with --io uring: the io_uring driver instead of epoll (libevent)
#   onepassd  onepassd --zone --tls-listen (one worker; the per-prefix handshake limits off, as
#             the peers have none and every connection here comes from 127.0.0.1); a build
#             without --tls-listen is said
#             to lack it, in its rows and in a line after the table, not skipped
# Each server alone on the server CPUs, a fresh one per round, in turn --rounds times, each
# with a throwaway P-256 certificate for dot.example.test (signed by a throwaway CA, both made
# with openssl in the scratch folder); first `kdig +tls` must get the answer through it (the
# server side is right before the load tester is blamed). Then two runs per server: full
# handshakes (--tls-resume 0) and resumed ones (--tls-resume 1: every connection offers a
# ticket an earlier one received, each ticket once, RFC 8446 §C.4). onepass-load verifies the chain and the name (--tls-ca,
# --tls-sni) and runs closed loop, --concurrency connections, on the client CPUs. A third run,
# plain, asks the same query over plain TCP (--proto dns) of the same server process on its
# plain port: the row beside the TLS ones that shows what TLS costs each server per connection.
#
#   loadtest/dot-bench.sh [--seconds 5] [--count N] [--rounds 1] [--concurrency 64]
#                         [--servers "nsd bind dnsdist onepassd onepassd-openssl"]
#                         [--modes "full resumed plain"]
#                         [--server-cpus 0] [--client-cpus 1] [--bin DIR] [--name NAME]
#                         [--results DIR]
#
# --count N ends each run after N connections (or at --seconds). One row per mode and server:
# conn/s (answered connections per second, the median of the rounds), server CPU us per
# connection (user+sys from /proc/PID/stat of the server's processes and threads over the run,
# per answered connection; loopback receive work done in the sender's context is not in it, for
# every server alike), the share of handshakes resumed, handshakes failed and all errors
# (summed over the rounds), handshake latency p50/p99 (connect to the server's Finished), and
# conn/s and CPU as ratios to NSD's in the same run. With one client core the client's own
# handshake work (two ECDSA verifications in a full one) may bound conn/s: read CPU per
# connection first. Binaries as for bench.sh (--bin DIR, default build/release). The table is
# also written as a result file, DIR/DATE-COMMIT-NAME.md (--results DIR, default
# loadtest/results; --results '' writes none; --name NAME, default dot-bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"
# shellcheck source=loadtest/nsd_conf.sh
source "$here/nsd_conf.sh"
# shellcheck source=loadtest/zone_scale_lib.sh
source "$here/zone_scale_lib.sh"

command_line=$(command_as_run "$0" "$@")
seconds=5
count=""
rounds=1
concurrency=64
servers="nsd bind dnsdist onepassd onepassd-openssl"
modes="full resumed plain"
server_cpus=0
client_cpus=1
BIN_DIR=""
result_name=dot-bench
COMMON_OPTIONS="seconds rounds concurrency server-cpus client-cpus bin name results"
while [ $# -gt 0 ]; do
  case $1 in
    --count) count=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    *) common_option "$@"; shift "$OPTION_WORDS" ;;
  esac
done
find_binaries load
for server in $servers; do
  case $server in
    nsd) need=nsd ;; bind) need=named ;; dnsdist) need=dnsdist ;;
    onepassd|onepassd-idle0|onepassd-openssl|onepassd-uring) need="" ; find_binaries onepassd ;;
    *) echo "dot-bench: --servers $server: choose among nsd bind dnsdist onepassd onepassd-idle0 onepassd-openssl onepassd-uring" >&2; exit 1 ;;
  esac
  for tool in $need kdig openssl nsd; do
    command -v "$tool" > /dev/null ||
      { echo "dot-bench: $tool is not installed (scripts/install-deps.sh)" >&2; exit 1; }
  done
done
for mode in $modes; do
  case $mode in
    full|resumed|plain) ;;
    *) echo "dot-bench: --modes $mode: full, resumed or plain" >&2; exit 1 ;;
  esac
done
zone="$here/../tests/data/example.com.zone"
hz=$(getconf CLK_TCK)
sni=dot.example.test

make_work_dir
take_rps_lock  # one benchmark at a time on this machine (RPS is left as it is)

# A throwaway CA and a P-256 leaf for $sni signed by it: chain.pem (leaf, then CA), key.pem.
make_certificates() {
  local d=$work/pki
  mkdir -p "$d"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=onepass dot-bench CA" -keyout "$d/ca.key" -out "$d/ca.pem" 2> "$d/log"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$sni" \
    -keyout "$d/key.pem" -out "$d/leaf.csr" 2>> "$d/log"
  printf 'subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\n' "$sni" > "$d/ext"
  openssl x509 -req -in "$d/leaf.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
    -days 2 -extfile "$d/ext" -out "$d/leaf.pem" 2>> "$d/log"
  cat "$d/leaf.pem" "$d/ca.pem" > "$d/chain.pem"
  head -c 80 /dev/urandom > "$d/ticket.keys"  # onepassd --tls-ticket-keys (one 80-byte key)
  CA=$d/ca.pem CHAIN=$d/chain.pem KEY=$d/key.pem TICKET_KEYS=$d/ticket.keys
}
make_certificates

PEER_PID=""
stop_peer() { stop_pid "$PEER_PID"; PEER_PID=""; }
BACKEND_PID=""
trap 'stop_peer; stop_pid "$BACKEND_PID"; cleanup_work_dir' EXIT

# kdig_tls PORT: the answer kdig +tls gets from 127.0.0.1:PORT, verifying as onepass-load does.
kdig_tls() {
  kdig -p "$1" @127.0.0.1 +tls +tls-ca="$CA" +tls-hostname="$sni" +short +timeout=2 +retry=0 \
    www.example.com A 2>&1
}
# wait_dot PORT PID NAME: until kdig +tls answers (10 s at most) or PID exits.
wait_dot() {
  local tries
  for ((tries = 0; tries < 50; tries++)); do
    [[ $(kdig_tls "$1") =~ ^[0-9.]+$ ]] && { echo "  kdig +tls: $(kdig_tls "$1")"; return 0; }
    kill -0 "$2" 2>/dev/null || { echo "dot-bench: $3 exited" >&2; return 1; }
    sleep 0.2
  done
  echo "dot-bench: $3 gave kdig +tls no answer on port $1: $(kdig_tls "$1" | tail -n 2)" >&2
  return 1
}

# start_nsd DIR CPUS TLS: NSD serving the zone on a free port, and DNS over TLS on another when
# TLS is 1; pinned to CPUS; sets NSD_PORT, NSD_TLS_PORT and NSD_PID.
start_nsd() {
  local dir=$1 cpu_list=$2 tls=$3 extra=("rrl-ratelimit: 0" "rrl-whitelist-ratelimit: 0" "tcp-count: 1000")
  mkdir -p "$dir"
  cp "$zone" "$dir/zone0"
  NSD_PORT=$(free_local_port)
  NSD_TLS_PORT=$(free_local_port)
  # NSD serves TLS on the interfaces whose port is tls-port.
  [ "$tls" = 1 ] && extra+=("ip-address: 127.0.0.1@$NSD_TLS_PORT" "tls-port: $NSD_TLS_PORT"
    "tls-service-key: \"$KEY\"" "tls-service-pem: \"$CHAIN\"")
  write_nsd_conf "$dir/nsd.conf" "$dir" "$NSD_PORT" example.com zone0 "${extra[@]}"
  taskset -c "$cpu_list" nsd -d -c "$dir/nsd.conf" > "$dir/nsd.log" 2>&1 &
  NSD_PID=$!
}

# start_bind DIR CPUS: named (one worker) serving the zone over TCP and TLS; sets PEER_PID, PORT
# (TLS) and PLAIN_PORT.
start_bind() {
  local dir=$1 cpu_list=$2 plain
  mkdir -p "$dir"
  cp "$zone" "$dir/example.com.zone"
  plain=$(free_local_port)
  PLAIN_PORT=$plain
  PORT=$(free_local_port)
  cat > "$dir/named.conf" <<CONF
tls bench-tls {
  key-file "$KEY";
  cert-file "$CHAIN";
  protocols { TLSv1.2; TLSv1.3; };
  session-tickets yes;
};
options {
  directory "$dir";
  pid-file "$dir/named.pid";
  session-keyfile "$dir/session.key";
  listen-on port $plain { 127.0.0.1; };
  listen-on port $PORT tls bench-tls { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  allow-query { any; };
  tcp-clients 1000;
  tcp-listen-queue 1024;
  notify no;
};
controls { };
zone "example.com" { type primary; file "$dir/example.com.zone"; };
CONF
  named-checkconf "$dir/named.conf" || return 1
  taskset -c "$cpu_list" named -g -n 1 -c "$dir/named.conf" > "$dir/named.log" 2>&1 &
  PEER_PID=$!
}

# start_dnsdist DIR CPUS BACKEND: dnsdist's DoT frontend (and its plain one) before BACKEND; sets
# PEER_PID, PORT (TLS) and PLAIN_PORT.
start_dnsdist_tls() {
  local dir=$1 cpu_list=$2 backend=$3
  mkdir -p "$dir"
  PORT=$(free_local_port)
  PLAIN_PORT=$(free_local_port)
  cat > "$dir/dnsdist.conf" <<CONF
setSecurityPollSuffix('')
setLocal('127.0.0.1:$PLAIN_PORT')
addTLSLocal('127.0.0.1:$PORT', '$CHAIN', '$KEY', {provider='openssl'})
newServer({address='$backend', checkName='example.com.', checkType='SOA'})
setMaxTCPClientThreads(1)
CONF
  taskset -c "$cpu_list" dnsdist --supervised --disable-syslog -C "$dir/dnsdist.conf" \
    > "$dir/dnsdist.log" 2>&1 &
  PEER_PID=$!
}

# Whether this onepassd has the DoT listener (issue 24's server side).
# (Its whole help is read first: grep -q would stop at the first match, and the SIGPIPE would
# fail the pipeline under pipefail.)
onepassd_has_tls() {
  local help
  help=$("$onepassd" --help 2>&1 || true)
  grep -q -- '--tls-listen' <<< "$help"
}

# measure NAME SERVER MODE PORT PID: onepass-load --proto dot (--proto dns for mode plain) against
# 127.0.0.1:PORT; one line in $results: mode server conn/s cpu_us_per_conn resumed_share failed
# errors p50 p99 ok
measure() {
  local name=$1 server=$2 mode=$3 port=$4 pid=$5 t0 t1 resume=0 limits=(--duration "$seconds")
  local proto=(--proto dot --tls-ca "$CA" --tls-sni "$sni")
  [ "$mode" = resumed ] && resume=1
  [ "$mode" = plain ] && proto=(--proto dns)
  [ "$mode" = plain ] || proto+=(--tls-resume "$resume")
  [ -n "$count" ] && limits+=(--count "$count")
  t0=$(cpu_ticks_of "$pid")
  "$load" --target "127.0.0.1:$port" "${proto[@]}" \
    --qname www.example.com. --concurrency "$concurrency" "${limits[@]}" --timeout-ms 3000 \
    --cpus "$client_cpus" --threads "$(count_cpus "$client_cpus")" \
    --min-success 0 --json "$work/$name.json" > "$work/$name.out" 2>&1 || true
  t1=$(cpu_ticks_of "$pid")
  grep -E '^  (connections|rate|errors|TLS|handshake|verdict)|^    ' "$work/$name.out" | head -n 12
  local json=$work/$name.json
  [ -s "$json" ] || { echo "  onepass-load wrote no JSON:"; tail -n 5 "$work/$name.out"; return 1; }
  local ok wall
  ok=$(json_number "$json" ok)
  wall=$(json_number "$json" wall_s)
  awk -v mode="$mode" -v server="$server" -v ok="$ok" -v wall="$wall" -v ticks=$((t1 - t0)) \
    -v hz="$hz" -v share="$(json_number "$json" resumed_share tls)" \
    -v failed="$(json_number "$json" failed tls)" -v errors="$(json_number "$json" total errors)" \
    -v p50="$(json_number "$json" p50 handshake_us)" -v p99="$(json_number "$json" p99 handshake_us)" \
    'BEGIN { printf "%s\t%s\t%.1f\t%.2f\t%.1f\t%d\t%d\t%.0f\t%.0f\t%d\n", mode, server,
      (wall > 0 ? ok / wall : 0), (ok > 0 ? ticks * 1e6 / hz / ok : 0), share * 100, failed,
      errors, p50, p99, ok }' >> "$results"
}

# run_server SERVER ROUND: a fresh SERVER on the server CPUs, checked with kdig, measured in
# every mode, stopped.
run_server() {
  local server=$1 name="$1-$2" mode port plain_port pid
  case $server in
    nsd)
      start_nsd "$work/$name" "$server_cpus" 1
      PEER_PID=$NSD_PID port=$NSD_TLS_PORT plain_port=$NSD_PORT ;;
    bind)
      start_bind "$work/$name" "$server_cpus" || return 1
      port=$PORT plain_port=$PLAIN_PORT ;;
    dnsdist)
      start_dnsdist_tls "$work/$name" "$server_cpus" "127.0.0.1:$BACKEND_PORT"
      port=$PORT plain_port=$PLAIN_PORT ;;
    onepassd|onepassd-idle0|onepassd-openssl|onepassd-uring)
      local extra=()
      [ "$server" = onepassd-idle0 ] && extra=(--tls-idle-timeout-ms 0)
      [ "$server" = onepassd-openssl ] && extra=(--tls-engine openssl)
      [ "$server" = onepassd-uring ] && extra=(--io uring)
      if ! onepassd_has_tls; then
        echo "  onepassd: NOT MEASURED: $onepassd has no --tls-listen (DNS over TLS is not in this build)"
        return 1
      fi
      port=$(free_local_port)
      plain_port=$(free_local_port)
      start_server "$work/$name.server" "$onepassd" --handler dns --zone "$zone" --workers 1 \
        --cpus "$server_cpus" --listen "127.0.0.1:$plain_port" \
        --tls-listen "127.0.0.1:$port" --tls-cert "$CHAIN" --tls-key "$KEY" \
        --tls-ticket-keys "$TICKET_KEYS" --max-connections-per-client $((2 * concurrency + 16)) \
        --tls-full-per-client 0 --tls-resumed-per-client 0 "${extra[@]}" || return 1
      PEER_PID=$SERVER_PID ;;
  esac
  pid=$PEER_PID
  if wait_dot "$port" "$pid" "$server"; then
    for mode in $modes; do
      if [ "$mode" = plain ]; then
        echo "  -- plain TCP (no TLS), port $plain_port"
        measure "$name-$mode" "$server" "$mode" "$plain_port" "$pid" || echo "  $server $mode: no result"
      else
        echo "  -- $mode handshakes"
        measure "$name-$mode" "$server" "$mode" "$port" "$pid" || echo "  $server $mode: no result"
      fi
    done
  else
    tail -n 5 "$work/$name"*.log "$work/$name.server.err" 2>/dev/null | sed 's/^/    /' >&2 || true
  fi
  if [[ $server == onepassd* ]]; then
    echo "  onepassd: $(stop_server | grep -o 'accepted=[0-9]* served=[0-9]*' || echo no stats line)"
    PEER_PID=""
  else
    stop_peer
  fi
}

# dnsdist's backend: one NSD (plain TCP) on the client CPUs for the whole run.
if [[ " $servers " == *" dnsdist "* ]]; then
  start_nsd "$work/backend" "$client_cpus" 0
  BACKEND_PID=$NSD_PID
  BACKEND_PORT=$NSD_PORT
  wait_answer_tcp() {
    local tries
    for ((tries = 0; tries < 100; tries++)); do
      [ -n "$(kdig -p "$BACKEND_PORT" @127.0.0.1 +tcp +short +timeout=1 +retry=0 example.com SOA 2>/dev/null)" ] && return 0
      sleep 0.1
    done
    return 1
  }
  wait_answer_tcp || { echo "dot-bench: the backend NSD did not answer:" >&2; cat "$work/backend/nsd.log" >&2; exit 1; }
fi

results="$work/results.tsv"
: > "$results"
echo "command: $command_line"
echo "dot-bench: $(uname -r), nproc=$(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg), $(openssl version | cut -d' ' -f1-2), server CPUs $server_cpus, onepass-load (and dnsdist's backend NSD) on CPUs $client_cpus, $concurrency connections in flight, ${seconds}s${count:+ or $count connections} per run, certificate P-256 (ECDSA), SNI $sni"
missing_onepassd=""
if [[ " $servers " == *" onepassd "* ]] && ! onepassd_has_tls; then
  missing_onepassd="onepassd: not measured: $onepassd has no --tls-listen (DNS over TLS is not in this build of onepassd)"
  echo "dot-bench: WARNING: $missing_onepassd"
fi
for ((round = 1; round <= rounds; round++)); do
  for server in $servers; do
    echo; echo "== $server, round $round"
    run_server "$server" "$round" || echo "  $server: no result"
  done
done

# $results, a row per run (results_column MODE SERVER FIELD): 3 conn/s, 4 cpu, 5 resumed %,
# 6 failed, 7 errors, 8 p50, 9 p99, 10 ok.
total() { awk '{ s += $1; n++ } END { if (n) print s; else print "n/a" }'; }
print_table() {
  echo "| handshakes | server | conn/s | server cpu us/conn | resumed % | handshakes failed | errors | handshake p50 us | handshake p99 us | conn/s / NSD | cpu / NSD |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  local mode server rate cpu
  for mode in $modes; do
    for server in $servers; do
      rate=$(results_column "$mode" "$server" 3 | median_of)
      cpu=$(results_column "$mode" "$server" 4 | median_of)
      # The plain rows have no handshake: "-" where the TLS rows give its figures.
      local share failed p50 p99
      share=$(results_column "$mode" "$server" 5 | median_of)
      failed=$(results_column "$mode" "$server" 6 | total)
      p50=$(results_column "$mode" "$server" 8 | median_of)
      p99=$(results_column "$mode" "$server" 9 | median_of)
      [ "$mode" = plain ] && share=- failed=- p50=- p99=-
      printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$mode" "$server" "$rate" \
        "$cpu" "$share" "$failed" "$(results_column "$mode" "$server" 7 | total)" "$p50" "$p99" \
        "$(ratio_of "$rate" "$(results_column "$mode" nsd 3 | median_of)")" \
        "$(ratio_of "$cpu" "$(results_column "$mode" nsd 4 | median_of)")"
    done
  done
  [ -z "$missing_onepassd" ] || { echo; echo "$missing_onepassd"; }
}
echo
echo "command: $command_line"
print_table | tee "$work/table.md"
if [ -n "$results_dir" ]; then
  echo "dot-bench: wrote $(write_result_file "$results_dir" "$result_name" \
    "dot-bench.sh: DNS over TLS, onepass-load --proto dot against NSD, BIND, dnsdist and onepassd" \
    "$command_line" "$work/table.md")"
fi
