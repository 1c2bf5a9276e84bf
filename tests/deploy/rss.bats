#!/usr/bin/env bats
# onepass-rss against a fake 4-queue NIC on 8 CPUs with SMT pairs
# (tests/deploy/fake_nic.bash): what it shows, plans, writes, and that
# rollback restores every value (whole-tree snapshots before and after).

setup() {
  load helpers
  make_fake_host
  RSS=$DEPLOY/onepass-rss
}

rss() { "$RSS" "$@" --sysroot "$ROOT"; }

@test "show: one table of queues, IRQs, affinities, RPS/XPS, RSS, irqbalance" {
  run rss show eth0
  [ "$status" -eq 0 ]
  echo "$output"
  [[ $output == *"interface eth0  driver ixgbe  NUMA node 0  local CPUs 0-7"* ]]
  [[ $output == *"channels   combined 4 (max 8)"* ]]
  [[ $output == *"RSS table  128 entries over queues 0-3"* ]]
  [[ $output == *"tcp4 hash  src IP, dst IP (ethtool -N letters: sd)"* ]]
  [[ $output == *"irqbalance running (pid 100)"* ]]
  [[ $output == *"physical cores near the NIC: 0-3"* ]]
  [[ $output =~ "0      40    eth0-TxRx-0                0-7       -         -" ]]
  [[ $output =~ "3      43    eth0-TxRx-3                0-7       -         -" ]]
  [[ $output =~ "-      39    eth0                       0-7" ]]
}

@test "plan changes nothing and prints every write apply makes" {
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/before"
  run rss plan eth0
  [ "$status" -eq 0 ]
  echo "$output"
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/after"
  assert_same_snapshot "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
  [[ $output == *"plan for eth0 (dry run: nothing is changed): 4 queue(s) on CPUs 0-3"* ]]
  [[ $output == *"write  /proc/irq/42/smp_affinity_list = 2   (was 0-7)"* ]]
  [[ $output == *"write  /sys/class/net/eth0/queues/tx-3/xps_cpus = 8   (was 00)"* ]]
  [[ $output == *"ethtool -N eth0 rx-flow-hash tcp4 sdfn"* ]]
  [[ $output == *"+IRQBALANCE_ARGS=\"--banirq=40 --banirq=41 --banirq=42 --banirq=43\""* ]]
  [[ $output == *"server flags: --cpus 0-3"* ]]
  run grep -E -- '^-[LXN] ' "$FAKE_ETHTOOL_LOG"
  [ "$status" -eq 1 ]
  run rss plan eth0
  plan_lines=$(grep -E '^  (write|keep|run|note) |^ {11}' <<<"$output")
  run rss apply eth0
  [ "$status" -eq 0 ]
  apply_lines=$(grep -E '^  (write|keep|run|note) |^ {11}' <<<"$output")
  [ "$plan_lines" = "$apply_lines" ]
}

@test "apply: queue i's IRQ on CPU i, XPS CPU i -> queue i, no RPS, hash on ports, irqbalance banned, flags written" {
  run rss apply eth0
  echo "$output"
  [ "$status" -eq 0 ]
  for i in 0 1 2 3; do
    [ "$(cat "$ROOT/proc/irq/$((40 + i))/smp_affinity_list")" = "$i" ]
    [ "$(cat "$ROOT/sys/class/net/eth0/queues/rx-$i/rps_cpus")" = 00 ]
  done
  [ "$(cat "$ROOT/sys/class/net/eth0/queues/tx-0/xps_cpus")" = 1 ]
  [ "$(cat "$ROOT/sys/class/net/eth0/queues/tx-1/xps_cpus")" = 2 ]
  [ "$(cat "$ROOT/sys/class/net/eth0/queues/tx-2/xps_cpus")" = 4 ]
  [ "$(cat "$ROOT/sys/class/net/eth0/queues/tx-3/xps_cpus")" = 8 ]
  [ "$(cat "$ROOT/proc/irq/39/smp_affinity_list")" = 0-7 ]
  [ "$(cat "$ROOT/.fake-nic/eth0/tcp4")" = sdfn ]
  [ "$(cat "$ROOT/.fake-nic/eth0/combined")" = 4 ]
  grep -qx 'IRQBALANCE_BANNED_CPULIST=0-3' "$ROOT/etc/default/irqbalance"
  grep -qx 'IRQBALANCE_ARGS="--banirq=40 --banirq=41 --banirq=42 --banirq=43"' "$ROOT/etc/default/irqbalance"
  grep -qx '#IRQBALANCE_ONESHOT=' "$ROOT/etc/default/irqbalance"
  grep -qx 'ONEPASS_CPU_FLAGS="--cpus 0-3"' "$ROOT/etc/default/onepass"
  [[ $output == *"server flags: --cpus 0-3"* ]]
  run rss show eth0
  [[ $output =~ "2      42    eth0-TxRx-2                2         -         2" ]]
  [[ $output == *"banned CPUs 0-3, banned IRQs 40,41,42,43"* ]]
  [[ $output == *"tcp4 hash  src IP, dst IP, src port, dst port"* ]]
}

@test "rollback restores every value of the tree" {
  echo 0f >"$ROOT/sys/class/net/eth0/queues/rx-1/rps_cpus"
  echo 3 >"$ROOT/proc/irq/42/smp_affinity_list"
  echo 'ONEPASS_CPU_FLAGS=""' >"$ROOT/etc/default/onepass"
  echo sd >"$ROOT/.fake-nic/eth0/tcp6"
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/before"
  run rss apply eth0
  [ "$status" -eq 0 ]
  [ "$(cat "$ROOT/.fake-nic/eth0/tcp6")" = sdfn ]
  [ "$(cat "$ROOT/sys/class/net/eth0/queues/rx-1/rps_cpus")" = 0 ]
  grep -qx 'ONEPASS_CPU_FLAGS="--cpus 0-3"' "$ROOT/etc/default/onepass"
  run rss rollback eth0
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"rollback complete"* ]]
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/after"
  assert_same_snapshot "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
  [ ! -e "$ROOT/var/lib/onepass-rss" ]
}

@test "--cpus 0,1 lowers the channels to 2; rollback brings back 4 queues with their values" {
  echo 0f >"$ROOT/sys/class/net/eth0/queues/rx-3/rps_cpus"
  echo 1-2 >"$ROOT/proc/irq/43/smp_affinity_list"
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/before"
  run rss apply eth0 --cpus 0,1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"ethtool -L eth0 combined 2   (was combined 4)"* ]]
  [ "$(cat "$ROOT/.fake-nic/eth0/combined")" = 2 ]
  [ ! -e "$ROOT/sys/class/net/eth0/queues/rx-2" ]
  [ "$(cat "$ROOT/proc/irq/41/smp_affinity_list")" = 1 ]
  grep -qx 'ONEPASS_CPU_FLAGS="--cpus 0-1"' "$ROOT/etc/default/onepass"
  run rss rollback eth0
  echo "$output"
  [ "$status" -eq 0 ]
  grep -qx -- '-L eth0 combined 4' "$FAKE_ETHTOOL_LOG"
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/after"
  assert_same_snapshot "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "default CPUs: the NIC's NUMA-local physical cores, SMT siblings skipped" {
  echo 0-1,4-5 >"$ROOT/sys/class/net/eth0/device/local_cpulist"
  run rss plan eth0
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"2 queue(s) on CPUs 0-1"* ]]
  [[ $output == *"ethtool -L eth0 combined 2"* ]]
  [[ $output == *"server flags: --cpus 0-1"* ]]
}

@test "more cores than channels: as many CPUs as the NIC has queues" {
  echo 2 >"$ROOT/.fake-nic/eth0/max_combined"
  fake_nic_layout "$ROOT" eth0 2
  run rss plan eth0
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"at most 2 queue(s): using 2 of the 4 local physical cores"* ]]
  [[ $output == *"server flags: --cpus 0-1"* ]]
}

@test "--cpus keeps the given order: queue 0 -> CPU 3, queue 1 -> CPU 2" {
  run rss apply eth0 --cpus 3,2
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(cat "$ROOT/proc/irq/40/smp_affinity_list")" = 3 ]
  [ "$(cat "$ROOT/sys/class/net/eth0/queues/tx-0/xps_cpus")" = 8 ]
  [ "$(cat "$ROOT/sys/class/net/eth0/queues/tx-1/xps_cpus")" = 4 ]
  [[ $output == *"server flags: --cpus 3,2"* ]]
}

@test "a second apply keeps the first originals; one rollback restores them all" {
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/before"
  run rss apply eth0
  [ "$status" -eq 0 ]
  run rss apply eth0 --cpus 2,3
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"adding to the state saved at"* ]]
  run rss rollback eth0
  [ "$status" -eq 0 ]
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/after"
  assert_same_snapshot "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "irqbalance bans merge with the operator's own" {
  printf 'IRQBALANCE_BANNED_CPULIST=6-7\nIRQBALANCE_ARGS="--policyscript=/x --banirq=7"\n' >>"$ROOT/etc/default/irqbalance"
  run rss apply eth0
  [ "$status" -eq 0 ]
  grep -qx 'IRQBALANCE_BANNED_CPULIST=0-3,6-7' "$ROOT/etc/default/irqbalance"
  grep -qx 'IRQBALANCE_ARGS="--policyscript=/x --banirq=7 --banirq=40 --banirq=41 --banirq=42 --banirq=43"' "$ROOT/etc/default/irqbalance"
  [ "$(grep -c '^# BEGIN onepass-rss eth0' "$ROOT/etc/default/irqbalance")" -eq 1 ]
}

@test "--irqbalance stop says so loudly; leave warns that it may undo the pinning" {
  run rss plan eth0 --irqbalance stop
  [ "$status" -eq 0 ]
  [[ $output == *"!!! stopping irqbalance: from now on NO interrupt on this host is rebalanced"* ]]
  run rss plan eth0 --irqbalance leave
  [ "$status" -eq 0 ]
  [[ $output == *"!!! irqbalance (pid 100) runs and --irqbalance leave was given"* ]]
  run rss plan eth0 --irqbalance sometimes
  [ "$status" -eq 1 ]
}

@test "rollback keeps an /etc file edited after apply, says so and keeps the state" {
  run rss apply eth0
  [ "$status" -eq 0 ]
  echo '# edited by the operator' >>"$ROOT/etc/default/irqbalance"
  run rss rollback eth0
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"/etc/default/irqbalance was edited after apply: left as it is"* ]]
  [ -d "$ROOT/var/lib/onepass-rss/eth0" ]
  [ "$(cat "$ROOT/proc/irq/40/smp_affinity_list")" = 0-7 ]
}

@test "refuses clearly: missing interface, missing ethtool, bad or too many CPUs, nothing to roll back" {
  run rss show eth9
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == "onepass-rss: interface eth9 not found in /sys/class/net (interfaces here: eth0)" ]]
  ONEPASS_ETHTOOL=/nonexistent/ethtool run rss show eth0
  [ "$status" -eq 1 ]
  [ "$output" = "onepass-rss: ethtool not found: install it with 'apt-get install ethtool'" ]
  run rss plan eth0 --cpus 0-9
  [ "$status" -eq 1 ]
  [[ $output == *"CPU 8 is not online (online: 0-7)"* ]]
  run rss plan eth0 --cpus 3-1
  [ "$status" -eq 1 ]
  [[ $output == *"--cpus 3-1 is not a CPU list"* ]]
  echo 2 >"$ROOT/.fake-nic/eth0/max_combined"
  run rss plan eth0 --cpus 0-2
  [ "$status" -eq 1 ]
  [[ $output == *"--cpus lists 3 CPUs but eth0 has at most 2 queues"* ]]
  run rss rollback eth0
  [ "$status" -eq 1 ]
  [[ $output == *"nothing to roll back"* ]]
  run rss frobnicate eth0
  [ "$status" -eq 1 ]
}

@test "--cpus with SMT siblings or a remote NUMA node warns" {
  echo 0-3 >"$ROOT/sys/class/net/eth0/device/local_cpulist"
  run rss plan eth0 --cpus 0,4
  [ "$status" -eq 0 ]
  [[ $output == *"CPU 4 is not on the NIC's NUMA node"* ]]
  [[ $output == *"SMT siblings"* ]]
}

@test "apply and rollback need root on the real system; plan and show do not" {
  [ "$(id -u)" -eq 0 ] || skip "needs root to drop to another user"
  command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
  run setpriv --reuid=65534 --regid=65534 --clear-groups "$RSS" apply lo
  [ "$status" -eq 1 ]
  [[ $output == *"apply changes kernel settings: run it as root (sudo)"* ]]
  run setpriv --reuid=65534 --regid=65534 --clear-groups "$RSS" rollback lo
  [ "$status" -eq 1 ]
  [[ $output == *"run it as root"* ]]
}
