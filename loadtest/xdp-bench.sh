#!/bin/bash
# xdp-bench.sh: server CPU per answered one-query TCP connection, kxdpgun -T on one CPU
# against one server on another, over a veth pair between two network namespaces (issue 40):
# onepassd --xdp (its AF_XDP path), onepassd on kernel sockets, and knotd with `xdp: listen`
# and `tcp: on` (Knot's XDP-TCP). Needs root, kxdpgun, knotd, ethtool, ip.
#
#   loadtest/xdp-bench.sh [--onepassd PATH] [--seconds 5] [--qps 40000] [--server-cpu 0]
#                         [--client-cpu 1] [--servers "xdp kernel knot"] [--loss PCT]
#
# --loss PCT puts a router namespace between the two (a veth pair to each side, the kernel
# forwarding, its NAPI threads on the client's CPU) whose nftables forward chain drops PCT% of
# the frames each way at random: kxdpgun sends and receives over AF_XDP, past any netfilter or
# qdisc of its own side, and this kernel has no netem. --loss 0 gives the same route without
# loss, the baseline to read a loss run against.
#
# The setup that made Knot's XDP-TCP work on a veth pair (issue 40 "What is known here"): one
# queue per side, GRO on, threaded NAPI with each side's NAPI thread pinned to its side's CPU,
# TSO and tx checksum offload off on the client (else the server's receive work runs on the
# client's CPU, and our TCP drops the partial checksums), static neighbours (kxdpgun takes the
# MAC from the neighbour table), `kxdpgun -F <cpu>s0` (its default affinity overrides
# taskset) and `-l` over a /28 (one source address wraps its ports onto connections in
# TIME_WAIT).
#
# kxdpgun -T closes each connection after its answer (5 frames in and 3 out per connection over
# --xdp), but one that loses a frame is never completed and holds its slot until the idle
# deadline (--read-timeout-ms), so a client of 16 addresses could fill what its
# --max-connections-per-client allows. Both onepassd runs get the same --read-timeout-ms 500 and
# limits that hold a run's worth of such slots (onepassd_flags below).
#
# Server CPU: the schedstat runtime of the server's tasks, of the server side's NAPI thread
# and of ksoftirqd on the server's CPU, over the run; client CPU the same for kxdpgun (its
# user+sys), its NAPI thread and ksoftirqd on its CPU. Per answered connection: divided by
# kxdpgun's "total replies". A client CPU near 1 s per second reads as a client-bound run.
set -euo pipefail

onepassd=""
seconds=5
qps=40000
server_cpu=0
client_cpu=1
servers="xdp kernel knot"
loss=""
while [ $# -gt 0 ]; do
  case $1 in
    --onepassd) onepassd=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --qps) qps=$2; shift 2 ;;
    --server-cpu) server_cpu=$2; shift 2 ;;
    --client-cpu) client_cpu=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --loss) loss=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "xdp-bench: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$onepassd" ]; then
  onepassd=$(find "$here/build" -path '*/server/onepassd' -type f -newer "$here/server/worker.cc" \
    2>/dev/null | head -n 1 || true)
fi
[ -x "$onepassd" ] || { echo "xdp-bench: no onepassd (give --onepassd PATH)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "xdp-bench: needs root (namespaces, XDP)" >&2; exit 2; }
for tool in ip ethtool kxdpgun; do
  command -v "$tool" > /dev/null || { echo "xdp-bench: $tool is not installed" >&2; exit 2; }
done

[[ -z "$loss" || "$loss" =~ ^[0-9]+(\.[0-9])?$ ]] ||
  { echo "xdp-bench: --loss $loss: a percentage, e.g. 1 or 0.5" >&2; exit 2; }
ns_s=xb-s$$
ns_c=xb-c$$
ns_r=xb-r$$  # --loss: the router between them
if_s=xbs0
if_c=xbc0
mac_s=02:0b:d0:00:00:01
mac_c=02:0b:d0:00:00:02
ip_s=10.210.0.1
sources=10.210.0.16/28
port=5300
work=$(mktemp -d /tmp/xdp-bench.XXXXXX)
onepassd_flags=(--handler=dns --workers=1 --keepalive-ms=0 --read-timeout-ms=500
  --max-connections=50000 --max-connections-per-client=50000)
server_pid=""

cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  ip netns del "$ns_s" 2>/dev/null || true
  ip netns del "$ns_c" 2>/dev/null || true
  ip netns del "$ns_r" 2>/dev/null || true
  if [ -n "${XDP_BENCH_KEEP:-}" ]; then echo "xdp-bench: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

in_s() { ip netns exec "$ns_s" "$@"; }
in_c() { ip netns exec "$ns_c" "$@"; }

setup() {
  ip netns add "$ns_s"
  ip netns add "$ns_c"
  ip -n "$ns_s" link add "$if_s" address "$mac_s" type veth peer name "$if_c" address "$mac_c" \
    netns "$ns_c"
  ip -n "$ns_s" addr add "$ip_s/24" dev "$if_s"
  ip -n "$ns_c" addr add 10.210.0.2/24 dev "$if_c"
  for ns in "$ns_s" "$ns_c"; do ip -n "$ns" link set lo up; done
  ip -n "$ns_s" link set "$if_s" up
  ip -n "$ns_c" link set "$if_c" up
  in_s ethtool -K "$if_s" gro on > /dev/null
  in_c ethtool -K "$if_c" gro on tso off tx off > /dev/null
  in_s sh -c "echo 1 > /sys/class/net/$if_s/threaded"
  in_c sh -c "echo 1 > /sys/class/net/$if_c/threaded"
  ip -n "$ns_c" neigh replace "$ip_s" lladdr "$mac_s" dev "$if_c" nud permanent
  # The server's kernel answers every source of the /28: a static neighbour for each.
  local base=${sources%/*} i
  for i in $(seq 0 15); do
    ip -n "$ns_s" neigh replace "${base%.*}.$((${base##*.} + i))" lladdr "$mac_c" dev "$if_s" \
      nud permanent
  done
  ip -n "$ns_s" neigh replace 10.210.0.2 lladdr "$mac_c" dev "$if_s" nud permanent
  # Each side's NAPI thread on its side's CPU (napi/<dev>-<id>, there once traffic flowed).
  in_c ping -c 1 -W 1 "$ip_s" > /dev/null 2>&1 || true
  pin_napi "$if_s" "$server_cpu"
  pin_napi "$if_c" "$client_cpu"
  printf 'www.example.com A\n' > "$work/queries.txt"
}

# setup_routed: --loss. Client 10.211.0.2 (sources 10.211.0.16/28) on xbc0, server 10.210.0.1 on
# xbs0, the router's xbr0 (10.211.0.254) and xbr1 (10.210.0.254) between; static neighbours
# everywhere, kxdpgun told the router's MAC (-R).
routed_sources=10.211.0.16/28
mac_r0=02:0b:d0:00:00:03
mac_r1=02:0b:d0:00:00:04
setup_routed() {
  local ns if i base=${routed_sources%/*}
  for ns in "$ns_s" "$ns_c" "$ns_r"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
  ip -n "$ns_s" link add "$if_s" address "$mac_s" type veth peer name xbr1 address "$mac_r1" \
    netns "$ns_r"
  ip -n "$ns_c" link add "$if_c" address "$mac_c" type veth peer name xbr0 address "$mac_r0" \
    netns "$ns_r"
  ip -n "$ns_s" addr add "$ip_s/24" dev "$if_s"
  ip -n "$ns_r" addr add 10.210.0.254/24 dev xbr1
  ip -n "$ns_r" addr add 10.211.0.254/24 dev xbr0
  ip -n "$ns_c" addr add 10.211.0.2/24 dev "$if_c"
  ip -n "$ns_s" link set "$if_s" up
  ip -n "$ns_c" link set "$if_c" up
  ip -n "$ns_r" link set xbr0 up
  ip -n "$ns_r" link set xbr1 up
  ip -n "$ns_s" route add 10.211.0.0/24 via 10.210.0.254
  ip -n "$ns_c" route add 10.210.0.0/24 via 10.211.0.254
  ip -n "$ns_s" neigh replace 10.210.0.254 lladdr "$mac_r1" dev "$if_s" nud permanent
  ip -n "$ns_c" neigh replace 10.211.0.254 lladdr "$mac_r0" dev "$if_c" nud permanent
  ip -n "$ns_r" neigh replace "$ip_s" lladdr "$mac_s" dev xbr1 nud permanent
  ip -n "$ns_r" neigh replace 10.211.0.2 lladdr "$mac_c" dev xbr0 nud permanent
  for i in $(seq 0 15); do
    ip -n "$ns_r" neigh replace "${base%.*}.$((${base##*.} + i))" lladdr "$mac_c" dev xbr0 \
      nud permanent
  done
  ip netns exec "$ns_r" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
    net.ipv4.conf.default.rp_filter=0
  # TSO off on every sender: a veth hands a peer's frame to its NAPI (on the receiver's pinned
  # thread) only when the sending end has no TSO; else the receive work runs in the sender's
  # context, which here would move the server's receive onto the router's CPU and the router's
  # forwarding of the server's answers onto the server's.
  in_s ethtool -K "$if_s" gro on tso off > /dev/null
  in_c ethtool -K "$if_c" gro on tso off tx off > /dev/null
  for if in xbr0 xbr1; do ip netns exec "$ns_r" ethtool -K "$if" gro on tso off > /dev/null; done
  in_s sh -c "echo 1 > /sys/class/net/$if_s/threaded"
  in_c sh -c "echo 1 > /sys/class/net/$if_c/threaded"
  ip netns exec "$ns_r" sh -c "echo 1 > /sys/class/net/xbr0/threaded; echo 1 > /sys/class/net/xbr1/threaded"
  # PCT% of what the router forwards, each way, in thousandths.
  local permille
  permille=$(awk -v p="$loss" 'BEGIN { printf "%d", p * 10 }')
  ip netns exec "$ns_r" nft -f - <<NFT
table inet loss {
  chain forward {
    type filter hook forward priority 0;
    numgen random mod 1000 < $permille counter drop
  }
}
NFT
  in_c ping -c 1 -W 1 "$ip_s" > /dev/null 2>&1 || true
  pin_napi "$if_s" "$server_cpu"
  pin_napi "$if_c" "$client_cpu"
  pin_napi xbr0 "$client_cpu"
  pin_napi xbr1 "$client_cpu"
  sources=$routed_sources
  printf 'www.example.com A\n' > "$work/queries.txt"
}

napi_pids() { pgrep "^napi/$1-" || true; }
# --loss: how many frames the router has dropped so far.
router_drops() {
  ip netns exec "$ns_r" nft list chain inet loss forward | grep -o 'packets [0-9]*' | awk '{ print $2 }'
}
pin_napi() {
  local pid
  for pid in $(napi_pids "$1"); do taskset -pc "$2" "$pid" > /dev/null; done
}

# snapshot IF CPU [PID]: "tid runtime[ns]" of every task of the side's NAPI threads, of
# ksoftirqd/CPU and of the process. A NAPI thread may come and go while XDP attaches: deltas are
# taken per task (delta_ns), so one that leaves costs its share, never a negative figure.
snapshot() {
  local pid task
  for pid in $(napi_pids "$1") $(pgrep -x "ksoftirqd/$2") ${3:+"$3"}; do
    for task in /proc/"$pid"/task/*; do
      [ -r "$task/schedstat" ] && echo "${task##*/} $(cut -d' ' -f1 "$task/schedstat" 2>/dev/null)"
    done
  done
}
delta_ns() {  # delta_ns BEFORE AFTER: the runtime [ns] spent between the two snapshots
  awk 'NR == FNR { before[$1] = $2; next } { sum += $2 - before[$1] } END { printf "%.0f\n", sum }' \
    "$1" "$2"
}

knot_conf() {
  cat > "$work/knot.conf" <<CONF
server:
    rundir: "$work"
    user: root
    listen: $ip_s@$port
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
xdp:
    listen: $if_s@$port
    udp: on
    tcp: on
    route-check: off
database:
    storage: "$work"
zone:
  - domain: example.com
    file: "$work/example.com.zone"
CONF
  sed -n '/R"zone(/,/)zone"/p' "$here/handlers/dns/default_zone.cc" | sed '1d;$d' \
    > "$work/example.com.zone"
}

# start NAME: the server on $server_cpu in the server namespace (ip netns exec and taskset exec
# it: $! is its pid); waits for an answer.
start() {
  local name=$1
  case $name in
    xdp) ip netns exec "$ns_s" taskset -c "$server_cpu" "$onepassd" "${onepassd_flags[@]}" \
           --listen="$ip_s:$port" --cpus="$server_cpu" --xdp="$if_s" \
           > "$work/$name.out" 2> "$work/$name.err" & ;;
    kernel) ip netns exec "$ns_s" taskset -c "$server_cpu" "$onepassd" "${onepassd_flags[@]}" \
           --listen="$ip_s:$port" --cpus="$server_cpu" \
           > "$work/$name.out" 2> "$work/$name.err" & ;;
    knot) knot_conf
          ip netns exec "$ns_s" taskset -c "$server_cpu" knotd -c "$work/knot.conf" \
           > "$work/$name.out" 2> "$work/$name.err" & ;;
  esac
  server_pid=$!
  local i
  for i in $(seq 100); do
    if in_c kdig @"$ip_s" -p "$port" +tcp +retry=0 +time=1 www.example.com A 2>/dev/null |
        grep -q NOERROR; then
      return 0
    fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "xdp-bench: $name did not answer; its log:" >&2
  cat "$work/$name.err" >&2
  return 1
}

# run NAME: one kxdpgun run against a fresh server; prints the result line.
run() {
  local name=$1 replies client_s knot_mode
  start "$name" || return 1
  sleep 0.5
  # An XDP attach on veth may start new NAPI threads: pinned again, each to its side's CPU.
  pin_napi "$if_s" "$server_cpu"
  pin_napi "$if_c" "$client_cpu"
  if [ -n "$loss" ]; then pin_napi xbr0 "$client_cpu"; pin_napi xbr1 "$client_cpu"; fi
  # What the kernel says is attached to the server's veth (knotd does not log its mode).
  knot_mode=$(ip -n "$ns_s" -d link show dev "$if_s" | grep -o 'xdpgeneric\|xdpdrv\|xdp ' |
    head -n 1 | sed 's/xdpgeneric/generic mode/; s/xdpdrv\|xdp /native mode/')
  snapshot "$if_s" "$server_cpu" "$server_pid" > "$work/s0"
  snapshot "$if_c" "$client_cpu" > "$work/c0"
  local drops0=0
  [ -n "$loss" ] && drops0=$(router_drops)
  TIMEFORMAT='%U %S'
  { time in_c kxdpgun -T -t "$seconds" -Q "$qps" -i "$work/queries.txt" -I "$if_c" \
      -F "${client_cpu}s0" -l "$sources" ${loss:+-R "$mac_r0"} -p "$port" "$ip_s" \
      > "$work/$name.gun" 2>&1; } \
    2> "$work/$name.time" || true
  snapshot "$if_s" "$server_cpu" "$server_pid" > "$work/s1"
  snapshot "$if_c" "$client_cpu" > "$work/c1"
  local dropped=""
  [ -n "$loss" ] && dropped=$(($(router_drops) - drops0))
  client_s=$(awk '{ print $1 + $2 }' "$work/$name.time")
  local status=0
  if kill -TERM "$server_pid" 2>/dev/null; then
    wait "$server_pid" 2>/dev/null || status=$?
  else
    wait "$server_pid" 2>/dev/null || status=$?
    echo "    $name exited during the run (status $status); its log's end:"
    tail -n 5 "$work/$name.err" | sed 's/^/    /'
  fi
  server_pid=""
  replies=$(awk '/^total replies:/ { print $3 }' "$work/$name.gun")
  local mode=""
  [ "$name" = xdp ] && mode=$(grep -o "xdp $if_s: [a-z]* mode[^,]*, [^,]*" "$work/$name.err" | head -n 1)
  [ "$name" = knot ] && mode="knot: $knot_mode"
  awk -v name="$name" -v r="${replies:-0}" -v t="$seconds" -v s="$(delta_ns "$work/s0" "$work/s1")" \
    -v c="$(delta_ns "$work/c0" "$work/c1")" -v cs="$client_s" -v mode="$mode" 'BEGIN {
      n = r > 0 ? r : 1
      printf "%-7s %10.0f %12.2f %12.2f %10.2f   %s\n", name, r / t, s / 1e3 / n,
        (c + cs * 1e9) / 1e3 / n, (c + cs * 1e9) / 1e9 / t, mode }'
  grep -E 'total|rate|lost|reset|error' "$work/$name.gun" | sed 's/^/    kxdpgun: /' | head -n 8
  [ -z "$dropped" ] || echo "    router: dropped $dropped frames during the run"
  [ "$name" = knot ] || grep -o 'xdp_[a-z_]*=[0-9]*' "$work/$name.out" | tr '\n' ' ' | sed 's/^/    /'
  echo
}

route="veth between namespaces"
[ -n "$loss" ] && route="through a router namespace dropping $loss% each way (its NAPI threads on CPU $client_cpu, not counted)"
echo "xdp-bench: $(uname -r), kxdpgun -T -Q $qps for ${seconds}s on CPU $client_cpu, server on CPU $server_cpu, $route; load:$(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$loss" ]; then setup_routed; else setup; fi
printf '%-7s %10s %12s %12s %10s   %s\n' server "conn/s" "server us/c" "client us/c" "client CPU" mode
for name in $servers; do
  if [ "$name" = knot ] && ! command -v knotd > /dev/null; then echo "knot: knotd is not installed"; continue; fi
  run "$name" || echo "$name: failed"
done
