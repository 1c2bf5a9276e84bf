# shellcheck shell=bash
# shellcheck disable=SC2034  # NET_* are read by the sourcing scripts
# The network between the load tester and the server in a benchmark (sourced by bench_lib.sh,
# not run). Two modes, chosen with the scripts' --net option:
#
#   lo    (default) everything on loopback; the receive processing of every loopback packet
#         (both directions) is steered to the server CPUs with RPS. The server CPUs then also
#         do the client's receive work (its SYN-ACK, the answer, the FIN): a fixed kernel cost
#         per connection that every server pays alike, which pulls every ratio towards 1.
#   veth  the client (and, in frontend-bench.sh, the backend) lives in a network namespace
#         joined to the root namespace by a veth pair, as a second host behind a NIC: packets
#         to the server are received on the root side, whose RPS mask is the server CPUs;
#         packets to the client are received in the namespace, whose RPS mask is the client
#         CPUs. Each side pays its own kernel work, as two hosts do; across N server CPUs the
#         flow hash spreads connections like a NIC's RSS, and the server's CPU steering
#         (reuseport by the CPU that received the SYN) takes effect as behind one.
#
# net_setup MODE SERVER_CPUS CLIENT_CPUS sets:
#   NET_SERVER_IP      the address servers listen on (127.0.0.1 or 10.201.0.1)
#   NET_CLIENT_SOURCES the tester's --source range (the server ends in TIME-WAIT: it closes
#                      first, so the client needs many 4-tuples at these rates)
#   NET_PEER_IP        an address on the client's side for backends (127.0.0.1 or 10.201.0.2)
#   NET_NS             the namespace (empty on lo)
# and arranges nothing at exit: call net_teardown (cleanup_work_dir does).
# net_steer SERVER_CPUS moves the server side's receive processing to other server CPUs (a
# scaling run's next N). client_exec CMD... runs CMD on the client's side (in the namespace,
# or as is on lo).

NET_MODE=lo
NET_SERVER_IP=127.0.0.1
NET_CLIENT_SOURCES=127.0.0.2-127.0.0.254
NET_PEER_IP=127.0.0.1
NET_NS=""
NET_LINK=""
# The command prefix that runs on the client's side, for processes started in the background
# whose PID is needed ("${NET_EXEC[@]}" CMD &: ip execs CMD, the PID is CMD's).
NET_EXEC=()

net_setup() {
  local mode=$1 server_cpus=$2 client_cpus=$3
  NET_MODE=$mode
  case $mode in
    lo)
      steer_rps "$server_cpus"
      return 0 ;;
    veth) ;;
    *) echo "bench: --net must be lo or veth, not $mode" >&2; return 1 ;;
  esac
  command -v ip > /dev/null || { echo "bench: --net veth needs ip (apt-get install iproute2)" >&2; return 1; }
  take_rps_lock  # one benchmark at a time: the addresses below are fixed
  net_remove_stale
  NET_NS="onepass-bench-$$"
  NET_LINK="opb$$"
  # Server side "${NET_LINK}s" in the root namespace, client side "${NET_LINK}c" in NET_NS.
  if ! ip netns add "$NET_NS" ||
    ! ip link add "${NET_LINK}s" type veth peer name "${NET_LINK}c" netns "$NET_NS"; then
    echo "bench: --net veth: cannot create a network namespace and a veth pair (root needed, and a kernel with CONFIG_VETH and CONFIG_NET_NS); use --net lo" >&2
    ip netns del "$NET_NS" 2> /dev/null || true
    NET_NS=""
    return 1
  fi
  ip addr add 10.201.0.1/16 dev "${NET_LINK}s"
  ip link set "${NET_LINK}s" up
  {
    echo "link set lo up"
    echo "link set ${NET_LINK}c up"
    echo "addr add 10.201.0.2/16 dev ${NET_LINK}c"
    local host
    for ((host = 2; host <= 254; host++)); do echo "addr add 10.201.1.$host/16 dev ${NET_LINK}c"; done
  } | ip -n "$NET_NS" -batch -
  NET_EXEC=(ip netns exec "$NET_NS")
  NET_SERVER_IP=10.201.0.1
  NET_PEER_IP=10.201.0.2
  NET_CLIENT_SOURCES=10.201.1.2-10.201.1.254
  local server_mask client_mask
  server_mask=$(cpu_mask "$server_cpus")
  client_mask=$(cpu_mask "$client_cpus")
  echo "$server_mask" > "/sys/class/net/${NET_LINK}s/queues/rx-0/rps_cpus"
  # `ip netns exec` mounts the namespace's own /sys, where its veth end is.
  ip netns exec "$NET_NS" sh -c "echo $client_mask > /sys/class/net/${NET_LINK}c/queues/rx-0/rps_cpus"
  echo "bench: --net veth: client in namespace $NET_NS ($NET_CLIENT_SOURCES), servers on $NET_SERVER_IP; receive processing on the server CPUs $server_cpus for packets to the server, on $client_cpus for packets to the client"
}

net_steer() {
  if [ -z "$NET_NS" ]; then
    restore_rps
    steer_rps "$1"
  else
    cpu_mask "$1" > "/sys/class/net/${NET_LINK}s/queues/rx-0/rps_cpus"
  fi
}

# net_veth_possible: whether this machine can make a network namespace and a veth pair (root,
# a kernel with CONFIG_NET_NS and CONFIG_VETH, iproute2); leaves nothing behind.
net_veth_possible() {
  local ns="onepass-probe-$$" made=0
  ip netns add "$ns" 2> /dev/null || return 1
  ip link add "opp$$s" type veth peer name "opp$$c" netns "$ns" 2> /dev/null && made=1
  ip link del "opp$$s" 2> /dev/null
  ip netns del "$ns" 2> /dev/null
  [ "$made" = 1 ]
}

# Namespaces left by a run that was killed before its teardown (its PID gone): their links
# hold the fixed addresses this run needs.
net_remove_stale() {
  local ns pid
  for ns in $(ip netns list 2> /dev/null | awk '{ print $1 }' | grep '^onepass-bench-' || true); do
    pid=${ns#onepass-bench-}
    if ! kill -0 "$pid" 2> /dev/null; then
      ip link del "opb${pid}s" 2> /dev/null || true
      ip netns del "$ns" 2> /dev/null || true
    fi
  done
}

net_teardown() {
  if [ -n "$NET_NS" ]; then
    # Deleting one end of the pair deletes both; the namespace goes after it.
    ip link del "${NET_LINK}s" 2> /dev/null || true
    ip netns del "$NET_NS" 2> /dev/null || true
    NET_NS=""
    NET_EXEC=()
  fi
}

client_exec() {
  if [ -n "$NET_NS" ]; then
    ip netns exec "$NET_NS" "$@"
  else
    "$@"
  fi
}
