#!/usr/bin/env bats
# shellcheck source-path=SCRIPTDIR/../..
# One address, both transports (docs/operations.md), for real, in network namespaces made for
# the test:
#
#   client 10.79.0.2 ---- veth ---- 10.79.0.1 server: onepassd on TCP 10.79.0.1:53,
#                                            NSD on 10.79.0.1@5353 (UDP and TCP),
#                                            deploy/udp/onepass-udp.nft: UDP :53 -> :5353
#
# NSD and onepassd serve copies of tests/data/example.com.zone that differ in one record,
# who.example.com TXT "nsd" / "onepassd", so that each answer names the server that gave it.
# kdig +notcp and kdig +tcp to the same address and port, from the client and from the server
# host itself: UDP is answered by NSD, TCP by onepassd; then the same with onepassd as NSD's
# TCP frontend (--dns-backend), where the TCP answer is NSD's data forwarded by onepassd. And
# every file of deploy/udp/ passes its server's own configuration check.
# Needs root, ip netns, nftables, nsd, kdig, knotc, unbound-checkconf, named-checkconf and a
# built onepassd; skips with a message
# otherwise (all of them come with scripts/install-deps.sh and the build).

SERVICE=10.79.0.1
CLIENT=10.79.0.2

setup_file() {
  load helpers
  export TAG=$$
  export NS_S=onepass-us-$TAG NS_C=onepass-uc-$TAG
  export T=$BATS_FILE_TMPDIR
  if ! prerequisites >"$T/skip" 2>&1; then return 0; fi
  build_topology >"$T/setup.log" 2>&1 || {
    cat "$T/setup.log" >&3
    return 1
  }
}

teardown_file() {
  stop_all
  ip netns del "$NS_C" 2>/dev/null || true
  ip netns del "$NS_S" 2>/dev/null || true
}

setup() {
  if [ -s "$T/skip" ]; then skip "$(cat "$T/skip")"; fi
  ONEPASSD=$(cat "$T/onepassd_bin")
}

teardown() { stop_all; }

# Prints why the test cannot run (and returns 1), or nothing.
prerequisites() {
  [ "$(id -u)" -eq 0 ] || { echo "needs root to create network namespaces"; return 1; }
  local tool pkg
  for tool in ip:iproute2 nft:nftables nsd:nsd kdig:knot-dnsutils ss:iproute2 knotc:knot \
    unbound-checkconf:unbound named-checkconf:bind9-utils; do
    pkg=${tool#*:} tool=${tool%%:*}
    command -v "$tool" >/dev/null || { echo "$tool not installed (apt-get install $pkg)"; return 1; }
  done
  find_built_into onepassd_bin ONEPASSD server/onepassd || { echo "onepassd not built (build/*/server/onepassd or \$ONEPASSD)"; return 1; }
  ip netns add "$NS_S" 2>/dev/null || { echo "ip netns is unavailable here"; return 1; }
  ip netns del "$NS_S"
}

build_topology() {
  set -e
  local root=$BATS_TEST_DIRNAME/../..
  ip netns add "$NS_S"
  ip netns add "$NS_C"
  ip -n "$NS_S" link set lo up
  ip -n "$NS_C" link set lo up
  ip link add srv0 netns "$NS_S" type veth peer name cli0 netns "$NS_C"
  ip -n "$NS_S" addr add "$SERVICE/24" dev srv0
  ip -n "$NS_C" addr add "$CLIENT/24" dev cli0
  ip -n "$NS_S" link set srv0 up
  ip -n "$NS_C" link set cli0 up
  # The rules as shipped, with this test's address.
  sed "s/^define SERVICE_V4 = .*/define SERVICE_V4 = $SERVICE/" "$root/deploy/udp/onepass-udp.nft" >"$T/rules.nft"
  ip netns exec "$NS_S" nft -f "$T/rules.nft"
  mkdir -p "$T/nsd"
  { cat "$root/tests/data/example.com.zone"; echo 'who IN TXT "nsd"'; } >"$T/nsd/example.com.zone"
  { cat "$root/tests/data/example.com.zone"; echo 'who IN TXT "onepassd"'; } >"$T/onepassd.zone"
  # shellcheck source=loadtest/nsd_conf.sh
  . "$root/loadtest/nsd_conf.sh"
  NSD_LISTEN_IP=$SERVICE write_nsd_conf "$T/nsd.conf" "$T/nsd" 5353 example.com example.com.zone
}

# start NAME CMD...: CMD in the server namespace, its PID in $T/NAME.pid, output in $T/NAME.log.
start() {
  local name=$1
  shift
  ip netns exec "$NS_S" "$@" >"$T/$name.log" 2>&1 &
  echo $! >"$T/$name.pid"
}

stop_all() {
  local f
  for f in "$T"/*.pid; do
    [ -e "$f" ] || continue
    kill -TERM "$(cat "$f")" 2>/dev/null || true
    wait "$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
  done
}

# until_ok SECONDS CMD...: runs CMD until it succeeds, at most SECONDS.
until_ok() {
  local end=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.1
  done
}

# answered_by NS TRANSPORT WHO: who.example.com TXT asked of SERVICE port 53 from namespace NS
# over TRANSPORT (+notcp, +tcp) is answered, with the data of WHO (nsd, onepassd).
answered_by() {
  run ip netns exec "$1" kdig "@$SERVICE" -p 53 "$2" +short +timeout=2 +retry=0 who.example.com TXT
  [ "$status" -eq 0 ] && [ "$output" = "\"$3\"" ]
}

start_nsd() {
  start nsd nsd -d -c "$T/nsd.conf"
  until_ok 10 ip netns exec "$NS_S" kdig "@$SERVICE" -p 5353 +notcp +timeout=1 +retry=0 who.example.com TXT
}

start_onepassd() {
  start onepassd "$ONEPASSD" --handler dns --listen "$SERVICE:53" --workers 1 "$@"
  until_ok 10 grep -qx ready "$T/onepassd.log"
}

@test "zone mode: UDP to the address is answered by NSD, TCP by onepassd" {
  start_nsd
  start_onepassd --zone "$T/onepassd.zone"
  # Who listens where: onepassd on TCP :53 (ss -p names no process: each worker holds its
  # listener in a descriptor table of its own), nothing on UDP :53.
  grep -qx "listening on $SERVICE:53" "$T/onepassd.log"
  run ip netns exec "$NS_S" ss -Htln "sport = :53"
  [[ "$output" == *"$SERVICE:53"* ]]
  run ip netns exec "$NS_S" ss -Huln "sport = :53"
  [ -z "$output" ]
  for ns in "$NS_C" "$NS_S"; do # another host (prerouting) and this host (output)
    answered_by "$ns" +notcp nsd
    answered_by "$ns" +tcp onepassd
  done
  stop_all
  # onepassd saw the two TCP queries only.
  grep -q '^stats accepted=2 ' "$T/onepassd.log"
}

@test "frontend mode: TCP clients get NSD's answers through onepassd, UDP clients from NSD" {
  start_nsd
  start_onepassd --dns-backend "$SERVICE:5353" --dns-cache-entries 0
  answered_by "$NS_C" +tcp nsd
  answered_by "$NS_C" +notcp nsd
  stop_all
  # The TCP query went through onepassd to NSD over UDP; the UDP one never reached onepassd.
  grep -q '^stats accepted=1 ' "$T/onepassd.log"
  grep -q ' upstream_sent=1 ' "$T/onepassd.log"
  grep -q ' upstream_received=1 ' "$T/onepassd.log"
}

@test "the settings in deploy/udp/ pass each server's own check" {
  local udp=$BATS_TEST_DIRNAME/../../deploy/udp
  nsd-checkconf "$udp/nsd.conf"
  knotc -c "$udp/knot.conf" conf-check
  unbound-checkconf "$udp/unbound.conf"
  named-checkconf "$udp/named.conf"
  ip netns exec "$NS_S" nft -c -f "$udp/onepass-udp.nft"
}
