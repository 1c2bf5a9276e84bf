#!/usr/bin/env bats
# shellcheck source-path=SCRIPTDIR/../..
# The real thing, in network namespaces made for the test: a veth pair with
# 2 RX / 2 TX queues between a server namespace and a client namespace.
# onepass-rss plans, applies and rolls back XPS/RPS (and the channel count) on
# the veth's real sysfs queues; onepassd runs pinned as planned and answers
# kdig from the other namespace. /etc and the saved state go to a temporary
# directory; veth has no interrupts, so nothing outside the namespaces changes.
# onepassd runs with the unit's command line (port 53, IPv4 and IPv6), as an
# unprivileged user holding only CAP_NET_BIND_SERVICE, as the unit runs it.
# Needs root and `ip netns`; skips with a message otherwise.

setup() {
  load helpers
  [ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
  command -v ip >/dev/null || skip "ip not installed (apt-get install iproute2)"
  command -v ethtool >/dev/null || skip "ethtool not installed (apt-get install ethtool)"
  TAG=$$${BATS_TEST_NUMBER}
  NS_SRV=onepass-srv-$TAG
  NS_CLI=onepass-cli-$TAG
  VS=ops$TAG
  VC=opc$TAG
  ip netns add "$NS_SRV" 2>/dev/null || skip "ip netns is unavailable here (no permission or no netns support)"
  ip netns add "$NS_CLI"
  ip link add "$VS" numtxqueues 2 numrxqueues 2 type veth peer name "$VC" numtxqueues 2 numrxqueues 2
  ip link set "$VS" netns "$NS_SRV"
  ip link set "$VC" netns "$NS_CLI"
  in_srv ip addr add 10.77.0.1/24 dev "$VS"
  in_cli ip addr add 10.77.0.2/24 dev "$VC"
  if [ -e /proc/sys/net/ipv6 ]; then
    in_srv ip -6 addr add fd77::1/64 dev "$VS" nodad
    in_cli ip -6 addr add fd77::2/64 dev "$VC" nodad
  fi
  in_srv ip link set lo up
  in_cli ip link set lo up
  in_srv ip link set "$VS" up
  in_cli ip link set "$VC" up
  WORK=$BATS_TEST_TMPDIR/host
  mkdir -p "$WORK/etc/default" "$WORK/state"
  RSS_OPTS=(--etc-root "$WORK/etc" --state-dir "$WORK/state")
  SERVER_PID=""
}

teardown() {
  if [ -n "${SERVER_PID:-}" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  # Deleting a namespace destroys the veth end inside it, and so its peer.
  [ -z "${NS_SRV:-}" ] || ip netns del "$NS_SRV" 2>/dev/null || true
  [ -z "${NS_CLI:-}" ] || ip netns del "$NS_CLI" 2>/dev/null || true
  # A pair that never made it into its namespace is still here.
  [ -z "${VS:-}" ] || ip link del "$VS" 2>/dev/null || true
}

# ip netns exec mounts the namespace's own /sys, so sysfs paths are the veth's.
in_srv() { ip netns exec "$NS_SRV" "$@"; }
in_cli() { ip netns exec "$NS_CLI" "$@"; }

# Every queue value of the server-side veth, as the namespace's sysfs shows it.
queue_values() {
  in_srv sh -c "cd /sys/class/net/$VS/queues && for f in */rps_cpus */rps_flow_cnt */xps_cpus */xps_rxqs; do [ -r \"\$f\" ] && printf '%s=%s\n' \"\$f\" \"\$(cat \"\$f\")\"; done"
}

# Keys of deploy/sysctl that each network namespace has its own copy of (the
# others, fs.* and net.core.netdev_max_backlog, are host-wide: not touched here).
PER_NETNS_KEYS="net.core.somaxconn net.ipv4.tcp_max_syn_backlog net.ipv4.tcp_syncookies net.ipv4.tcp_max_tw_buckets net.ipv4.tcp_fastopen net.ipv4.tcp_migrate_req net.ipv4.ip_local_port_range net.ipv4.tcp_tw_reuse"

# The shipped profiles cut down to PER_NETNS_KEYS, in $WORK/profiles.
netns_profiles() {
  local f line key
  mkdir -p "$WORK/profiles"
  for f in "$DEPLOY"/sysctl/90-onepass.conf "$DEPLOY"/sysctl/90-onepass-client.conf; do
    while IFS= read -r line; do
      key=${line%%=*}
      key=${key//[[:space:]-]/}
      if [[ $line =~ ^-?[a-z] ]] && [[ " $PER_NETNS_KEYS " != *" $key "* ]]; then continue; fi
      printf '%s\n' "$line"
    done <"$f" >"$WORK/profiles/${f##*/}"
  done
}

# find_built VAR PATH_IN_BUILD: $VAR if set, else the newest
# build/*/PATH_IN_BUILD that answers --help (a build that works).
find_built() {
  local given=${!1:-} f newest=""
  if [ -n "$given" ]; then
    printf '%s' "$given"
    return
  fi
  for f in "$BATS_TEST_DIRNAME"/../../build/*/"$2"; do
    if [ ! -x "$f" ] || ! "$f" --help >/dev/null 2>&1; then continue; fi
    if [ -z "$newest" ] || [ "$f" -nt "$newest" ]; then newest=$f; fi
  done
  printf '%s' "$newest"
}

@test "netns: plan/apply/rollback XPS and RPS on a real 2-queue veth" {
  in_srv sh -c "echo 3 > /sys/class/net/$VS/queues/rx-1/rps_cpus" || skip "this kernel has no RPS (CONFIG_RPS)"
  queue_values >"$BATS_TEST_TMPDIR/before"
  cat "$BATS_TEST_TMPDIR/before"
  run in_srv "$DEPLOY/onepass-rss" show "$VS" "${RSS_OPTS[@]}"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"driver virtual"* ]]
  [[ $output == *"(no interrupt)"* ]]
  run in_srv "$DEPLOY/onepass-rss" plan "$VS" "${RSS_OPTS[@]}"
  echo "$output"
  [ "$status" -eq 0 ]
  queue_values >"$BATS_TEST_TMPDIR/after-plan"
  assert_same_snapshot "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after-plan"
  cpus=$(sed -n 's/^server flags: --cpus //p' <<<"$output")
  [ -n "$cpus" ]
  run in_srv "$DEPLOY/onepass-rss" apply "$VS" "${RSS_OPTS[@]}"
  echo "$output"
  [ "$status" -eq 0 ]
  # shellcheck source=deploy/lib/common.sh
  . "$DEPLOY/lib/common.sh"
  read -r -a cpu_of <<<"$(cpulist_expand "$cpus")"
  for ((i = 0; i < ${#cpu_of[@]}; i++)); do
    xps=$(in_srv cat "/sys/class/net/$VS/queues/tx-$i/xps_cpus")
    [ "$(cpus_from_mask "$xps")" = "${cpu_of[i]}" ]
    rps=$(in_srv cat "/sys/class/net/$VS/queues/rx-$i/rps_cpus")
    [ -z "$(cpus_from_mask "$rps")" ]
  done
  grep -qx "ONEPASS_CPU_FLAGS=\"--cpus $cpus\"" "$WORK/etc/default/onepass"
  run in_srv "$DEPLOY/onepass-rss" rollback "$VS" "${RSS_OPTS[@]}"
  echo "$output"
  [ "$status" -eq 0 ]
  queue_values >"$BATS_TEST_TMPDIR/after"
  assert_same_snapshot "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
  [ ! -e "$WORK/etc/default/onepass" ]
}

@test "netns: one CPU lowers the veth to 1 queue; rollback brings back 2 with their values" {
  in_srv ethtool -l "$VS" >/dev/null 2>&1 || skip "this kernel's veth does not report channels"
  in_srv sh -c "echo 2 > /sys/class/net/$VS/queues/tx-1/xps_cpus" || skip "this kernel has no XPS"
  queue_values >"$BATS_TEST_TMPDIR/before"
  run in_srv "$DEPLOY/onepass-rss" apply "$VS" --cpus 0 "${RSS_OPTS[@]}"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"-L $VS rx 1 tx 1"* ]]
  run in_srv ls "/sys/class/net/$VS/queues"
  [ "$output" = "$(printf 'rx-0\ntx-0')" ]
  run in_srv "$DEPLOY/onepass-rss" rollback "$VS" "${RSS_OPTS[@]}"
  echo "$output"
  [ "$status" -eq 0 ]
  queue_values >"$BATS_TEST_TMPDIR/after"
  assert_same_snapshot "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "netns: onepass-sysctl applies and rolls back the per-namespace keys on the real /proc/sys" {
  netns_profiles
  host_before=$(sysctl -n net.core.somaxconn net.ipv4.ip_local_port_range)
  before=$(in_srv sysctl -a 2>/dev/null | grep -E '^net\.(core\.somaxconn|ipv4\.(tcp_|ip_local))' | sort)
  for p in server client; do
    run in_srv "$DEPLOY/onepass-sysctl" apply "$p" --profile-dir "$WORK/profiles" "${RSS_OPTS[@]}"
    echo "$output"
    [ "$status" -eq 0 ]
  done
  [ "$(in_srv sysctl -n net.core.somaxconn)" = 65535 ]
  [ "$(in_srv sysctl -n net.ipv4.ip_local_port_range | tr '\t' ' ')" = "10000 65535" ]
  [ "$(in_srv sysctl -n net.ipv4.tcp_fastopen)" = 3 ]
  [ -f "$WORK/etc/sysctl.d/90-onepass.conf" ]
  # The host's own values did not move.
  [ "$(sysctl -n net.core.somaxconn net.ipv4.ip_local_port_range)" = "$host_before" ]
  for p in client server; do
    run in_srv "$DEPLOY/onepass-sysctl" rollback "$p" "${RSS_OPTS[@]}"
    echo "$output"
    [ "$status" -eq 0 ]
  done
  after=$(in_srv sysctl -a 2>/dev/null | grep -E '^net\.(core\.somaxconn|ipv4\.(tcp_|ip_local))' | sort)
  [ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after"); return 1; }
  [ ! -e "$WORK/etc/sysctl.d" ]
}

@test "netns: onepassd started as the unit starts it, pinned as planned, answers kdig and onepass-load from the client namespace" {
  ONEPASSD_BIN=$(find_built ONEPASSD server/onepassd)
  [ -n "$ONEPASSD_BIN" ] || skip "onepassd not built (build/*/server/onepassd or \$ONEPASSD): server part skipped"
  command -v kdig >/dev/null || skip "kdig not installed (apt-get install knot-dnsutils)"
  run in_srv "$DEPLOY/onepass-rss" apply "$VS" "${RSS_OPTS[@]}"
  [ "$status" -eq 0 ]
  flags=$(sed -n 's/^server flags: //p' <<<"$output")
  # The flags reach the server exactly as systemd would pass them.
  # shellcheck disable=SC1091
  . "$WORK/etc/default/onepass"
  [ "$ONEPASS_CPU_FLAGS" = "$flags" ]
  # The rest of the unit's command line, from the shipped defaults file:
  # port 53 on every address of the namespace, IPv4 and IPv6.
  # shellcheck disable=SC1091
  . "$DEPLOY/default/onepass-dns"
  if [ ! -e /proc/sys/net/ipv6 ]; then
    echo "# IPv6 disabled in this kernel: listening on IPv4 only" >&3
    ONEPASS_LISTEN=${ONEPASS_LISTEN/--listen \[::\]:53/}
  fi
  # As the unit runs it: not root, only CAP_NET_BIND_SERVICE, no new privileges.
  as_unit=()
  if command -v setpriv >/dev/null; then
    # shellcheck disable=SC2054 # capability lists are comma-separated
    as_unit=(setpriv --reuid=65534 --regid=65534 --clear-groups --nnp --inh-caps=-all,+net_bind_service
      --ambient-caps=-all,+net_bind_service --bounding-set=-all,+net_bind_service)
  else
    echo "# setpriv missing: onepassd runs as root" >&3
  fi
  # The server profile's per-namespace keys, so --backlog 65535 is not capped.
  netns_profiles
  run in_srv "$DEPLOY/onepass-sysctl" apply server --profile-dir "$WORK/profiles" "${RSS_OPTS[@]}"
  [ "$status" -eq 0 ]
  log=$BATS_TEST_TMPDIR/server.log
  # shellcheck disable=SC2086 # unquoted as systemd expands $VARS: split on spaces
  ip netns exec "$NS_SRV" "${as_unit[@]}" "$ONEPASSD_BIN" --handler dns $ONEPASS_CPU_FLAGS $ONEPASS_LISTEN $ONEPASS_ARGS >"$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    grep -q '^ready' "$log" && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  cat "$log"
  grep -q '^ready' "$log"
  grep -qx 'listening on 0.0.0.0:53' "$log"
  run grep -c 'capped by net.core.somaxconn' "$log"
  [ "$output" = 0 ]
  port=53
  [ -z "${as_unit[*]}" ] || [ "$(stat -c %u "/proc/$SERVER_PID")" -eq 65534 ]
  # Every planned CPU has a server thread pinned to it alone.
  for cpu in $(cpulist_expand_via_lib "${flags#--cpus }"); do
    grep -h '^Cpus_allowed_list:' /proc/"$SERVER_PID"/task/*/status | grep -qP "^Cpus_allowed_list:\t$cpu$" ||
      { echo "no thread pinned to CPU $cpu"; grep -h '^Cpus_allowed_list' /proc/"$SERVER_PID"/task/*/status; return 1; }
  done
  run in_cli timeout 10 kdig +tcp +timeout=3 +retry=0 @10.77.0.1 -p "$port" www.example.com A
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"status: NOERROR"* ]]
  [[ $output =~ www\.example\.com\.[[:space:]]+[0-9]+[[:space:]]+IN[[:space:]]+A[[:space:]]+192\.0\.2\.80 ]]
  expected_accepted=1
  if [ -e /proc/sys/net/ipv6 ]; then
    run in_cli timeout 10 kdig +tcp +timeout=3 +retry=0 @fd77::1 -p "$port" www.example.com AAAA
    echo "$output"
    [ "$status" -eq 0 ]
    [[ $output =~ www\.example\.com\.[[:space:]]+[0-9]+[[:space:]]+IN[[:space:]]+AAAA[[:space:]]+2001:db8::80 ]]
    expected_accepted=2
  fi
  load_bin=$(find_built ONEPASS_LOAD loadtest/onepass-load)
  if [ -n "$load_bin" ]; then
    # 2000 connections from two client threads, each on one of the planned CPUs.
    run in_cli timeout 60 "$load_bin" --target "10.77.0.1:$port" --proto dns --qname www.example.com. \
      --count 2000 --concurrency 8 --threads 2 --cpus "${flags#--cpus }" --timeout-ms 2000
    echo "$output"
    [ "$status" -eq 0 ]
    expected_accepted=$((expected_accepted + 2000))
  else
    echo "# onepass-load not built: load part skipped" >&3
  fi
  # From the host (another namespace, no route) the server cannot be reached.
  run timeout 5 kdig +tcp +timeout=1 +retry=0 @10.77.0.1 -p "$port" www.example.com A
  [[ $output != *"192.0.2.80"* ]]
  kill -TERM "$SERVER_PID"
  for _ in $(seq 1 100); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  wait "$SERVER_PID" # exits 0 after its drain; teardown kills it if it hangs
  SERVER_PID=""
  cat "$log"
  accepted=$(sed -n 's/^stats .*\baccepted=\([0-9]*\).*/\1/p' "$log")
  served=$(sed -n 's/^stats .*\bserved=\([0-9]*\).*/\1/p' "$log")
  [ "$accepted" -eq "$expected_accepted" ]
  [ "$served" -eq "$expected_accepted" ]
  run in_srv "$DEPLOY/onepass-rss" rollback "$VS" "${RSS_OPTS[@]}"
  [ "$status" -eq 0 ]
}

cpulist_expand_via_lib() {
  (
    # shellcheck source=deploy/lib/common.sh
    . "$DEPLOY/lib/common.sh"
    cpulist_expand "$1"
  )
}
