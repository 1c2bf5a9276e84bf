#!/usr/bin/env bats
# deploy/install.sh into a temporary root: what lands where, that the
# installed tools and unit work, and that --uninstall restores the tree.

setup() {
  load helpers
  ROOT=$BATS_TEST_TMPDIR/root
  mkdir -p "$ROOT/etc/default" "$ROOT/var/lib" "$ROOT/usr/local/bin"
  make_fake_proc_sys "$ROOT"
  printf '#!/bin/sh\necho onepassd stub\n' >"$BATS_TEST_TMPDIR/onepassd"
  chmod 0755 "$BATS_TEST_TMPDIR/onepassd"
  INSTALL=$DEPLOY/install.sh
}

install_() { "$INSTALL" --root "$ROOT" --binary "$BATS_TEST_TMPDIR/onepassd" "$@"; }

@test "installs binary, tools, unit, defaults and the server sysctl profile" {
  run install_
  echo "$output"
  [ "$status" -eq 0 ]
  [ -x "$ROOT/usr/local/bin/onepassd" ]
  [ "$(stat -c %a "$ROOT/usr/local/bin/onepassd")" = 755 ]
  [ -x "$ROOT/usr/local/sbin/onepass-rss" ]
  grep -qF 'exec /usr/local/lib/onepass-deploy/onepass-rss "$@"' "$ROOT/usr/local/sbin/onepass-rss"
  [ -x "$ROOT/usr/local/lib/onepass-deploy/onepass-sysctl" ]
  [ -f "$ROOT/usr/local/lib/onepass-deploy/lib/rss_plan.sh" ]
  cmp "$DEPLOY/systemd/onepass@.service" "$ROOT/etc/systemd/system/onepass@.service"
  for f in onepass onepass-dns onepass-ocsp onepass-whois; do
    cmp "$DEPLOY/default/$f" "$ROOT/etc/default/$f"
  done
  cmp "$DEPLOY/sysctl/90-onepass.conf" "$ROOT/etc/sysctl.d/90-onepass.conf"
  [ -x "$ROOT/usr/local/lib/onepass-deploy/install.sh" ]
  [ "$(cat "$ROOT/proc/sys/net/core/somaxconn")" = 65535 ]
  # The installed copy runs from its own directory.
  make_fake_nic_in "$ROOT"
  run "$ROOT/usr/local/lib/onepass-deploy/onepass-rss" plan eth0 --sysroot "$ROOT"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"server flags: --cpus 0-3"* ]]
}

make_fake_nic_in() {
  fake_cpus "$1"
  fake_nic "$1" eth0 4 8
  export FAKE_ROOT=$1 ONEPASS_ETHTOOL=$BATS_TEST_DIRNAME/fake-ethtool
}

@test "--uninstall restores the tree exactly, including a replaced binary" {
  printf '#!/bin/sh\necho old\n' >"$ROOT/usr/local/bin/onepassd"
  chmod 0750 "$ROOT/usr/local/bin/onepassd"
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/before"
  run install_
  [ "$status" -eq 0 ]
  [[ $output == *"replaces the one there: saved for rollback"* ]]
  # Uninstalled by the installed copy, as the README says.
  run "$ROOT/usr/local/lib/onepass-deploy/install.sh" --root "$ROOT" --uninstall
  echo "$output"
  [ "$status" -eq 0 ]
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/after"
  assert_same_snapshot "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "the operator's defaults files are never overwritten" {
  echo 'ONEPASS_LISTEN="--listen 192.0.2.1:53"' >"$ROOT/etc/default/onepass-dns"
  run install_ --no-sysctl
  [ "$status" -eq 0 ]
  [[ $output == *"keep   /etc/default/onepass-dns (yours: not overwritten)"* ]]
  [ "$(cat "$ROOT/etc/default/onepass-dns")" = 'ONEPASS_LISTEN="--listen 192.0.2.1:53"' ]
  [ ! -e "$ROOT/etc/sysctl.d/90-onepass.conf" ]
}

@test "--dry-run changes nothing" {
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/before"
  run install_ --dry-run
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"write  /usr/local/bin/onepassd"* ]]
  [[ $output == *"write  /proc/sys/net/core/somaxconn = 65535"* ]]
  snapshot "$ROOT" >"$BATS_TEST_TMPDIR/after"
  assert_same_snapshot "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "uninstall refuses while onepass-rss changes are applied; a missing binary is named" {
  run install_ --no-sysctl
  [ "$status" -eq 0 ]
  make_fake_nic_in "$ROOT"
  # (The sbin wrapper execs /usr/local/lib/..., outside this test root.)
  run "$ROOT/usr/local/lib/onepass-deploy/onepass-rss" apply eth0 --sysroot "$ROOT"
  [ "$status" -eq 0 ]
  run "$INSTALL" --root "$ROOT" --uninstall
  [ "$status" -eq 1 ]
  [[ $output == *"onepass-rss changes to eth0 are still applied: run 'onepass-rss rollback eth0' first"* ]]
  run "$INSTALL" --root "$ROOT" --binary "$BATS_TEST_TMPDIR/nope"
  [ "$status" -eq 1 ]
  [[ $output == *"--binary $BATS_TEST_TMPDIR/nope is not an executable file"* ]]
}
