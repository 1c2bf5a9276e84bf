#!/usr/bin/env bats
# shellcheck source-path=SCRIPTDIR/../..
# Scale-out behind one anycast address, for real, in network namespaces made
# for the test:
#
#   client  10.78.9.2 -- 10.78.9.1 router (BIRD, ECMP, L4 hash) 10.78.1.1 -- 10.78.1.2 srv1
#   client2 10.78.10.2 - 10.78.10.1                             10.78.2.1 -- 10.78.2.2 srv2
#
# srv1 and srv2 each hold the service address 10.78.53.53/32 on a dummy
# interface (lo where the kernel has no dummy driver), run onepassd on it,
# BIRD with the configuration deploy/onepass-bird-config renders, and
# deploy/onepass-health-agent polling onepassd's /healthz. The router's BIRD
# takes the route from both and installs it as one ECMP route
# (merge paths, fib_multipath_hash_policy=1); the client runs onepass-load
# against 10.78.53.53. The tests share this topology and run in file order:
# shares, planned maintenance of srv1, crash of srv2, srv2 back, then
# loadtest/multi-load.sh from both client namespaces at once.
# Needs root, ip netns, bird2, nftables, curl, and onepassd with
# --metrics-listen (/healthz); skips with a message otherwise.

ANYCAST=10.78.53.53
PORT=53
# Each agent checks every 200 ms and withdraws after 3 failures: a crash is
# withdrawn within ~0.6 s plus one check's timeout.
AGENT_OPTS=(--interval-ms 200 --timeout-ms 300 --fall 3 --rise 3 --max-polls 3000)

setup_file() {
  load helpers
  export TAG=$$
  export NS_R=onepass-ar-$TAG NS_S1=onepass-as1-$TAG NS_S2=onepass-as2-$TAG NS_C=onepass-ac-$TAG NS_C2=onepass-ac2-$TAG
  export T=$BATS_FILE_TMPDIR
  if ! prerequisites >"$T/skip" 2>&1; then return 0; fi
  build_topology >"$T/setup.log" 2>&1 || {
    cat "$T/setup.log" >&3
    return 1
  }
}

teardown_file() {
  local f
  for f in "$T"/*.pid; do
    [ -e "$f" ] || continue
    kill -KILL "$(cat "$f")" 2>/dev/null || true
  done
  for ns in "$NS_C" "$NS_C2" "$NS_S1" "$NS_S2" "$NS_R"; do
    ip netns del "$ns" 2>/dev/null || true
  done
}

setup() {
  load helpers
  if [ -s "$T/skip" ]; then skip "$(cat "$T/skip")"; fi
  LOAD_BIN=$(cat "$T/load_bin")
}

# Prints why the test cannot run (and returns 1), or nothing.
prerequisites() {
  [ "$(id -u)" -eq 0 ] || { echo "needs root to create network namespaces"; return 1; }
  local tool pkg
  for tool in ip:iproute2 bird:bird2 birdc:bird2 nft:nftables curl:curl; do
    pkg=${tool#*:} tool=${tool%%:*}
    command -v "$tool" >/dev/null || { echo "$tool not installed (apt-get install $pkg)"; return 1; }
  done
  find_built_into onepassd_bin ONEPASSD server/onepassd || { echo "onepassd not built (build/*/server/onepassd or \$ONEPASSD)"; return 1; }
  find_built_into load_bin ONEPASS_LOAD loadtest/onepass-load || { echo "onepass-load not built (build/*/loadtest/onepass-load or \$ONEPASS_LOAD)"; return 1; }
  "$(cat "$T/onepassd_bin")" --help 2>&1 | grep -q -- '--metrics-listen' ||
    { echo "this onepassd has no --metrics-listen (/healthz): build one that has"; return 1; }
  ip netns add "$NS_R" 2>/dev/null || { echo "ip netns is unavailable here"; return 1; }
  ip netns del "$NS_R"
}

in_ns() {
  local ns=$1
  shift
  ip netns exec "$ns" "$@"
}

# Background process in namespace NS, its PID in $T/NAME.pid, output in $T/NAME.log.
start_bg() {
  local name=$1 ns=$2
  shift 2
  ip netns exec "$ns" "$@" >"$T/$name.log" 2>&1 &
  echo $! >"$T/$name.pid"
}

# link NS_A IF_A ADDR_A NS_B IF_B ADDR_B: a veth pair made in place (its
# names never exist in the host's namespace).
link() {
  ip link add "$2" netns "$1" type veth peer name "$5" netns "$4"
  ip -n "$1" addr add "$3" dev "$2"
  ip -n "$4" addr add "$6" dev "$5"
  ip -n "$1" link set "$2" up
  ip -n "$4" link set "$5" up
}

build_topology() {
  set -e
  local ns i
  for ns in "$NS_R" "$NS_S1" "$NS_S2" "$NS_C" "$NS_C2"; do
    ip netns add "$ns"
    ip -n "$ns" link set lo up
  done
  link "$NS_R" r1 10.78.1.1/30 "$NS_S1" up1 10.78.1.2/30
  link "$NS_R" r2 10.78.2.1/30 "$NS_S2" up1 10.78.2.2/30
  link "$NS_R" rc 10.78.9.1/24 "$NS_C" eth0 10.78.9.2/24
  link "$NS_R" rd 10.78.10.1/24 "$NS_C2" eth0 10.78.10.2/24
  in_ns "$NS_R" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.fib_multipath_hash_policy=1
  ip -n "$NS_C" route add default via 10.78.9.1
  ip -n "$NS_C2" route add default via 10.78.10.1
  ip -n "$NS_S1" route add default via 10.78.1.1
  ip -n "$NS_S2" route add default via 10.78.2.1
  # The router's BIRD: takes 10.78.53.53/32 from both hosts, installs both
  # next hops as one route (merge paths).
  cat >"$T/router.conf" <<EOF
log "$T/bird-router.log" all;
router id 10.78.9.1;
protocol device { scan time 10; }
protocol kernel { ipv4 { import none; export all; }; merge paths on; }
template bgp anycast_host {
  local as 65000;
  connect delay time 1; connect retry time 2; error wait time 1, 5;
  ipv4 { import where net = $ANYCAST/32; export none; };
}
protocol bgp srv1 from anycast_host { neighbor 10.78.1.2 as 65010; }
protocol bgp srv2 from anycast_host { neighbor 10.78.2.2 as 65010; }
EOF
  start_bg bird-router "$NS_R" bird -f -c "$T/router.conf" -s "$T/router.ctl" -P "$T/router.bird-pid"
  for i in 1 2; do
    ns=NS_S$i
    ns=${!ns}
    if ip -n "$ns" link add onepass0 type dummy 2>/dev/null; then
      echo "srv$i: service address on dummy interface onepass0"
      ip -n "$ns" link set onepass0 up
      echo onepass0 >"$T/service_if"
    else
      echo "srv$i: no dummy driver in this kernel: service address on lo"
      echo lo >"$T/service_if"
    fi
    ip -n "$ns" addr add "$ANYCAST/32" dev "$(cat "$T/service_if")"
    "$DEPLOY/onepass-bird-config" --router-id "10.78.$i.2" --local-as 65010 --peer 10.78.$i.1:65000 \
      --service "$ANYCAST" --interface "$(cat "$T/service_if")" --log "$T/bird-srv$i.log" >"$T/srv$i.conf"
    bird -p -c "$T/srv$i.conf"
    start_bg "bird-srv$i" "$ns" bird -f -c "$T/srv$i.conf" -s "$T/srv$i.ctl" -P "$T/srv$i.bird-pid"
    start_onepassd "$i"
    start_bg "agent-srv$i" "$ns" "$DEPLOY/onepass-health-agent" run --url "http://127.0.0.1:9153/healthz" \
      --bird-socket "$T/srv$i.ctl" --state-dir "$T/state-srv$i" --service-interface "$(cat "$T/service_if")" "${AGENT_OPTS[@]}"
  done
  wait_paths 2 30 || {
    tail -n 5 "$T"/agent-srv*.log "$T"/onepassd-srv*.log "$T"/bird-*.log
    return 1
  }
}

# onepassd N: the DNS server of srvN on the anycast address, worker on CPU N-1
# where there is one, operations listener on 127.0.0.1:9153.
start_onepassd() {
  local i=$1 ns=NS_S$1 cpu=$(($1 - 1)) log
  ns=${!ns}
  [ "$(nproc)" -gt "$cpu" ] || cpu=0
  log=$T/onepassd-srv$i.log
  ip netns exec "$ns" "$(cat "$T/onepassd_bin")" --handler dns --listen "$ANYCAST:$PORT" --cpus "$cpu" \
    --metrics-listen 127.0.0.1:9153 >>"$log" 2>&1 &
  echo $! >"$T/onepassd-srv$i.pid"
  for _ in $(seq 1 100); do
    [ "$(grep -c '^ready' "$log")" -ge "$(grep -c '^stats' "$log" | awk '{ print $1 + 1 }')" ] && return 0
    sleep 0.1
  done
  echo "onepassd on srv$i did not start:"
  cat "$log"
  return 1
}

# The router's route to the service address: one line per next hop.
paths() {
  ip -n "$NS_R" route show "$ANYCAST" | grep -oE 'via 10\.78\.[12]\.2' | sort -u
}

# wait_paths N SECONDS: until the router has N next hops for the service.
wait_paths() {
  local want=$1 limit=$(($2 * 10)) n
  for _ in $(seq 1 "$limit"); do
    n=$(paths | grep -c . || true)
    [ "$n" -eq "$want" ] && return 0
    sleep 0.1
  done
  echo "the router has $n next hop(s) for $ANYCAST after $2 s, not $want:"
  ip -n "$NS_R" route show "$ANYCAST"
  birdc -s "$T/router.ctl" show protocols all 2>&1 | tail -40
  return 1
}

# Connections a server's onepassd has accepted, from its /metrics.
accepted() {
  local i=$1 ns=NS_S$1
  ns=${!ns}
  in_ns "$ns" curl -sS --max-time 2 http://127.0.0.1:9153/metrics | awk '$1 == "onepass_accepted_total" { print $2 }'
}

# drive OUT ARGS...: onepass-load from the client namespace against the service.
drive() {
  local out=$1
  shift
  in_ns "$NS_C" timeout 120 "$LOAD_BIN" --target "$ANYCAST:$PORT" --proto dns --qname www.example.com. \
    --threads 1 --timeout-ms 3000 --json "$T/$out.json" "$@"
}

json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$T/$1.json" "$2"; }

# The time of a log line (it starts with an ISO 8601 UTC time) in ms.
ms_of() { date -d "${1%% *}" +%s%3N; }

# Shares of N connections between srv1 and srv2 must each be at least 25 %.
check_shares() {
  local label=$1 a1=$2 a2=$3 b1 b2
  b1=$(accepted 1) b2=$(accepted 2)
  d1=$((b1 - a1)) d2=$((b2 - a2))
  echo "# $label: srv1 accepted $d1, srv2 accepted $d2" >&3
  [ $((d1 * 4)) -ge $((d1 + d2)) ] && [ $((d2 * 4)) -ge $((d1 + d2)) ]
}

@test "anycast: the router has both servers as ECMP next hops and both take a share" {
  run paths
  [ "${#lines[@]}" -eq 2 ]
  a1=$(accepted 1) a2=$(accepted 2)
  [ -n "$a1" ] && [ -n "$a2" ]
  run drive shares --count 4000 --concurrency 16
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(json shares "d['errors']['total']")" -eq 0 ]
  [ "$(json shares "d['ok']")" -eq 4000 ]
  check_shares "both up, 4000 connections" "$a1" "$a2"
}

@test "anycast: planned maintenance of srv1 (hold SYNs, withdraw, drain, stop) fails no connection" {
  a2=$(accepted 2)
  drive maint --duration 6 --concurrency 16 >"$T/maint.out" 2>&1 &
  load_pid=$!
  sleep 2
  pid=$(cat "$T/onepassd-srv1.pid")
  run in_ns "$NS_S1" "$DEPLOY/onepass-health-agent" drain --hold-syns --quiet-ms 500 --drain-max-s 20 \
    --bird-socket "$T/srv1.ctl" --state-dir "$T/state-srv1" --service-interface "$(cat "$T/service_if")" \
    --then "kill -TERM $pid"
  echo "$output"
  [ "$status" -eq 0 ]
  # The route was withdrawn (by drain or by the running agent, whichever came
  # first) only after the SYN hold had let the handshakes in flight finish.
  held=$(ms_of "$(grep -m1 'holding new SYNs' <<<"$output")")
  withdrawn=$(ms_of "$( (grep 'withdrawn for maintenance' <<<"$output"; grep 'withdrawn: maintenance' "$T/agent-srv1.log") | sort | head -1)")
  echo "# maintenance: withdrawn $((withdrawn - held)) ms after the SYN hold began" >&3
  [ $((withdrawn - held)) -ge 190 ]
  wait "$load_pid" || { cat "$T/maint.out"; return 1; }
  cat "$T/maint.out"
  # onepassd finished its drain and exited 0.
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then echo "onepassd $pid still runs after its drain"; return 1; fi
  grep '^stats' "$T/onepassd-srv1.log" | tail -1 >&3
  run paths
  [ "$output" = "via 10.78.2.2" ]
  errors=$(json maint "d['errors']['total']")
  echo "# maintenance: $(json maint "d['ok']") ok, $errors failed, latency max $(json maint "d['latency_us']['max']") us (a held SYN is retried after ~1 s)" >&3
  [ "$errors" -eq 0 ]
  [ "$(accepted 2)" -gt "$a2" ]
  # No new SYN hold left behind.
  run in_ns "$NS_S1" nft list table inet onepass_hold
  [ "$status" -ne 0 ]
}

@test "anycast: srv1 back from maintenance is announced again after --rise checks" {
  start_onepassd 1
  run in_ns "$NS_S1" "$DEPLOY/onepass-health-agent" resume --state-dir "$T/state-srv1" --bird-socket "$T/srv1.ctl"
  echo "$output"
  [ "$status" -eq 0 ]
  wait_paths 2 10
  grep -E 'withdrawn|announced' "$T/agent-srv1.log" >&3
  a1=$(accepted 1) a2=$(accepted 2)
  run drive back1 --count 3000 --concurrency 16
  [ "$status" -eq 0 ]
  [ "$(json back1 "d['errors']['total']")" -eq 0 ]
  check_shares "srv1 back, 3000 connections" "$a1" "$a2"
}

@test "anycast: SIGKILL of srv2's onepassd: withdrawn within the agent's interval, failures only in that window" {
  drive crash --duration 6 --concurrency 16 >"$T/crash.out" 2>&1 &
  load_pid=$!
  sleep 2
  pid=$(cat "$T/onepassd-srv2.pid")
  killed_at=$(date +%s%3N)
  kill -KILL "$pid"
  wait_paths 1 5
  gone_at=$(date +%s%3N)
  wait "$load_pid" || true
  cat "$T/crash.out"
  grep -E 'check failed|withdrawn' "$T/agent-srv2.log" | tail -2 >&3
  run paths
  [ "$output" = "via 10.78.1.2" ]
  errors=$(json crash "d['errors']['total']")
  rate=$(json crash "round(d['achieved_conn_per_s'])")
  echo "# crash: route gone from the router $((gone_at - killed_at)) ms after SIGKILL; $errors of $(json crash "d['completed']") connections failed (${rate}/s: $(json crash "d['errors']")" >&3
  # Failures are bounded by what one server gets in the window (plus 1 s of margin).
  [ "$errors" -le $(((gone_at - killed_at + 1000) * rate / 1000)) ]
  [ $((gone_at - killed_at)) -le 3000 ]
  # Then none: everything goes to srv1.
  a1=$(accepted 1)
  run drive after-crash --count 2000 --concurrency 16
  [ "$status" -eq 0 ]
  [ "$(json after-crash "d['errors']['total']")" -eq 0 ]
  [ $(($(accepted 1) - a1)) -eq 2000 ]
}

@test "anycast: srv2 restarted is announced again and takes a share again" {
  start_onepassd 2
  wait_paths 2 10
  grep -E 'withdrawn|announced' "$T/agent-srv2.log" >&3
  a1=$(accepted 1) a2=$(accepted 2)
  run drive back2 --count 3000 --concurrency 16
  [ "$status" -eq 0 ]
  [ "$(json back2 "d['errors']['total']")" -eq 0 ]
  check_shares "srv2 back, 3000 connections" "$a1" "$a2"
}

@test "anycast: loadtest/multi-load.sh runs onepass-load from two client namespaces at once and merges the results" {
  a1=$(accepted 1) a2=$(accepted 2)
  run timeout 120 "$BATS_TEST_DIRNAME/../../loadtest/multi-load.sh" run --netns "$NS_C" --netns "$NS_C2" \
    --dir "$T/multi" --out "$T/multi.json" --timeout-s 60 -- "$LOAD_BIN" --target "$ANYCAST:$PORT" --proto dns \
    --qname www.example.com. --threads 1 --count 2500 --concurrency 8 --timeout-ms 3000
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"all 2 clients"* ]]
  [ "$(json multi "len(d['clients'])")" -eq 2 ]
  [ "$(json multi "d['ok']")" -eq 5000 ]
  [ "$(json multi "d['errors']['total']")" -eq 0 ]
  [ "$(json multi "d['latency_us']['count']")" -eq 5000 ]
  # The merged rate is the sum of the clients' own.
  [ "$(json multi "round(d['achieved_conn_per_s'] - sum(c['achieved_conn_per_s'] for c in d['clients']))")" -eq 0 ]
  # Every merged connection reached one of the servers, from both client addresses.
  [ $(($(accepted 1) - a1 + $(accepted 2) - a2)) -eq 5000 ]
  check_shares "two clients, 5000 connections" "$a1" "$a2"
  # A result with errors makes the merge fail, and a ramp result does not merge.
  python3 -c "import json; d = json.load(open('$T/multi/client-1.json')); d['errors']['total'] = 3; d['errors']['reset'] = 3; json.dump(d, open('$T/bad.json', 'w'))"
  run "$BATS_TEST_DIRNAME/../../loadtest/multi-load.sh" merge --out "$T/bad-merged.json" "$T/bad.json" "$T/multi/client-2.json"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"reset=3"* ]]
}
