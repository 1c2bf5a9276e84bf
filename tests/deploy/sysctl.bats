#!/usr/bin/env bats
# onepass-sysctl against a fake /proc/sys: the profiles' values are set, the
# file lands in /etc/sysctl.d, and rollback restores every value and file.

setup() {
  load helpers
  ROOT=$BATS_TEST_TMPDIR/root
  mkdir -p "$ROOT/etc" "$ROOT/var/lib"
  make_fake_proc_sys "$ROOT"
  SYSCTL=$DEPLOY/onepass-sysctl
}

sysctl_() { "$SYSCTL" "$@" --sysroot "$ROOT"; }
value() { cat "$ROOT/proc/sys/${1//.//}"; }

@test "every setting in the profiles has a one-line reason above it" {
  for f in "$DEPLOY"/sysctl/*.conf; do
    prev=""
    while IFS= read -r line; do
      if [[ $line =~ ^-?[a-z] ]]; then
        [[ $prev == "#"* ]] || { echo "$f: no reason above '$line'"; return 1; }
      fi
      prev=$line
    done <"$f"
  done
  grep -q "does NOT help" "$DEPLOY/sysctl/91-onepass-bbr.conf"
  grep -q "onepass-sysctl rollback bbr" "$DEPLOY/sysctl/91-onepass-bbr.conf"
}

@test "apply server: sets the values, never lowers a larger limit, installs the file" {
  run sysctl_ apply server
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(value net.core.somaxconn)" = 65535 ]
  [ "$(value net.ipv4.tcp_max_syn_backlog)" = 65535 ]
  [ "$(value net.core.netdev_max_backlog)" = 16384 ]
  [ "$(value net.ipv4.tcp_max_tw_buckets)" = 2000000 ]
  [ "$(value net.ipv4.tcp_fastopen)" = 3 ]
  [ "$(value fs.file-max)" = 9223372036854775807 ]
  [[ $output == *"never lowered"* ]]
  [[ $output == *"skip   net.ipv4.tcp_migrate_req: not in this kernel (optional)"* ]]
  cmp "$DEPLOY/sysctl/90-onepass.conf" "$ROOT/etc/sysctl.d/90-onepass.conf"
  run sysctl_ show server
  [[ $output =~ net.core.somaxconn\ +65535\ +65535\ +set ]]
  [[ $output =~ fs.file-max\ +9223372036854775807\ +4194304\ +higher\ here:\ kept ]]
}

@test "rollback restores every value and removes the file" {
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/before"
  for p in server client bbr; do
    run sysctl_ apply "$p"
    [ "$status" -eq 0 ]
  done
  [ "$(value net.ipv4.ip_local_port_range)" = "10000 65535" ]
  [ "$(value net.ipv4.tcp_tw_reuse)" = 1 ]
  [ "$(value net.ipv4.tcp_congestion_control)" = bbr ]
  [ "$(value net.core.default_qdisc)" = fq ]
  for p in bbr client server; do
    run sysctl_ rollback "$p"
    echo "$output"
    [ "$status" -eq 0 ]
  done
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/after"
  assert_same_snapshot "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "--dry-run changes nothing and says what apply would write" {
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/before"
  run sysctl_ apply bbr --dry-run
  [ "$status" -eq 0 ]
  [[ $output == *"write  /proc/sys/net/ipv4/tcp_congestion_control = bbr   (was cubic)"* ]]
  [[ $output == *"write  /etc/sysctl.d/91-onepass-bbr.conf:"* ]]
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/after"
  assert_same_snapshot "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "refuses clearly: unknown profile, nothing to roll back, no /proc/sys" {
  run sysctl_ apply turbo
  [ "$status" -eq 1 ]
  [ "$output" = "onepass-sysctl: unknown profile 'turbo': use server, client or bbr" ]
  run sysctl_ rollback server
  [ "$status" -eq 1 ]
  [[ $output == *"nothing to roll back"* ]]
  run "$SYSCTL" show --sysroot "$BATS_TEST_TMPDIR/empty"
  [ "$status" -eq 1 ]
  [[ $output == *"/proc/sys not found"* ]]
}
