#!/usr/bin/env bats
# shellcheck source-path=SCRIPTDIR/../..
# loadtest/net_lib.sh --net veth, for real: the namespace and the veth pair are made, each
# side's receive processing is steered to its own CPUs, a client in the namespace reaches a
# server listening in the root namespace from its spread source addresses, and the teardown
# (or the next run, for a killed one) leaves nothing behind. Needs root and `ip netns`.

setup() {
  [ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
  command -v ip > /dev/null || skip "ip not installed (apt-get install iproute2)"
  export ONEPASS_BENCH_LOCK=$BATS_TEST_TMPDIR/bench.lock
  # shellcheck source=loadtest/bench_lib.sh
  source "$BATS_TEST_DIRNAME/../../loadtest/bench_lib.sh"
}

teardown() {
  net_teardown
  if [ -n "${SERVER:-}" ]; then kill "$SERVER" 2> /dev/null || true; fi
}

@test "veth: a client in the namespace reaches the server from its source addresses" {
  net_setup veth 0 1
  [ "$NET_SERVER_IP" = 10.201.0.1 ]
  [ "$NET_CLIENT_SOURCES" = 10.201.1.2-10.201.1.254 ]
  ip netns list | grep -q "^$NET_NS"
  [ "$(tr -d 0, < "/sys/class/net/${NET_LINK}s/queues/rx-0/rps_cpus")" = 1 ]
  [ "$(client_exec cat "/sys/class/net/${NET_LINK}c/queues/rx-0/rps_cpus" | tr -d 0,)" = 2 ]
  # A server in the root namespace that answers each connection with the peer's address.
  python3 - "$NET_SERVER_IP" > "$BATS_TEST_TMPDIR/port" <<'PY' &
import socket, sys
s = socket.socket()
s.bind((sys.argv[1], 0))
s.listen(8)
print(s.getsockname()[1], flush=True)
s.settimeout(20)
for _ in range(2):
    c, peer = s.accept()
    c.sendall(peer[0].encode())
    c.close()
PY
  SERVER=$!
  for _ in $(seq 50); do [ -s "$BATS_TEST_TMPDIR/port" ] && break; sleep 0.1; done
  port=$(cat "$BATS_TEST_TMPDIR/port")
  for source in 10.201.1.2 10.201.1.254; do
    peer=$(client_exec python3 -c 'import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5, source_address=(sys.argv[3], 0))
print(c.recv(100).decode())' "$NET_SERVER_IP" "$port" "$source")
    [ "$peer" = "$source" ]
  done
  wait "$SERVER"
  SERVER=""
}

@test "veth: the teardown removes the namespace and both ends of the pair" {
  net_setup veth 0 1
  ns=$NET_NS link=$NET_LINK
  net_teardown
  [ -z "$(ip netns list | grep "^$ns" || true)" ]
  [ -z "$(ip link show "${link}s" 2> /dev/null || true)" ]
  [ -z "$NET_NS" ]
  [ "${#NET_EXEC[@]}" -eq 0 ]
}

@test "veth: a namespace left by a killed run is removed by the next one" {
  # A PID that is not running: the run that made it is gone.
  ip netns add onepass-bench-4999999
  net_setup veth 0 1
  [ -z "$(ip netns list | grep '^onepass-bench-4999999' || true)" ]
}

@test "veth: the probe says yes here and leaves no namespace or link behind" {
  net_veth_possible
  [ "$(ip netns list | grep -c '^onepass-probe-')" -eq 0 ]
  [ "$(ip -o link show | grep -c "opp$$s")" -eq 0 ]
}
