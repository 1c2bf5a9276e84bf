#!/usr/bin/env bats
# The systemd unit: systemd-analyze verify accepts it without a warning (it
# needs the ExecStart binary to exist: a copy points at a stub), it runs
# unprivileged with only CAP_NET_BIND_SERVICE, and its command line takes the
# flags from the defaults files.

setup() {
  load helpers
  command -v systemd-analyze >/dev/null || skip "systemd-analyze not installed (apt-get install systemd)"
  UNIT=$DEPLOY/systemd/onepass@.service
  STUB_DIR=$BATS_TEST_TMPDIR/units
  mkdir -p "$STUB_DIR"
  printf '#!/bin/sh\nexit 0\n' >"$BATS_TEST_TMPDIR/onepassd"
  chmod 0755 "$BATS_TEST_TMPDIR/onepassd"
}

# The unit as instance NAME, with ExecStart pointing at the stub.
instance() {
  sed "s|/usr/local/bin/onepassd|$BATS_TEST_TMPDIR/onepassd|" "$UNIT" >"$STUB_DIR/onepass@$1.service"
  printf '%s' "$STUB_DIR/onepass@$1.service"
}

@test "systemd-analyze verify passes with no warning for every protocol" {
  for p in dns ocsp whois; do
    run systemd-analyze verify "$(instance "$p")"
    echo "$output"
    [ "$status" -eq 0 ]
    [ -z "$output" ]
  done
}

@test "verify would catch a broken unit (the check can fail)" {
  sed "s|/usr/local/bin/onepassd|$BATS_TEST_TMPDIR/missing|" "$UNIT" >"$STUB_DIR/onepass@bad.service"
  run systemd-analyze verify "$STUB_DIR/onepass@bad.service"
  [ "$status" -ne 0 ]
  sed "s|/usr/local/bin/onepassd|$BATS_TEST_TMPDIR/onepassd|; s|^NoNewPrivileges=|NoNewPrivilegs=|" "$UNIT" >"$STUB_DIR/onepass@typo.service"
  run systemd-analyze verify "$STUB_DIR/onepass@typo.service"
  [[ $output == *"Unknown key"* ]]
}

@test "unprivileged, hardened, reloadable, with the planned CPUs" {
  # shellcheck disable=SC2016 # $MAINPID and $ONEPASS_* are for systemd, not the shell
  for line in 'DynamicUser=yes' 'AmbientCapabilities=CAP_NET_BIND_SERVICE' 'CapabilityBoundingSet=CAP_NET_BIND_SERVICE' \
    'NoNewPrivileges=yes' 'ProtectSystem=strict' 'ProtectHome=yes' 'PrivateTmp=yes' 'PrivateDevices=yes' \
    'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' 'SystemCallArchitectures=native' 'ProtectKernelTunables=yes' \
    'MemoryDenyWriteExecute=yes' 'LockPersonality=yes' 'RestrictNamespaces=yes' 'LimitNOFILE=1048576' \
    'ExecReload=/bin/kill -HUP $MAINPID' 'Restart=on-failure' 'KillSignal=SIGTERM' 'EnvironmentFile=-/etc/default/onepass' \
    'NotifyAccess=all' 'RuntimeDirectory=onepass-%i' \
    'ExecStart=/usr/local/bin/onepassd --handler %i --handover-socket /run/onepass-%i/handover.sock $ONEPASS_CPU_FLAGS $ONEPASS_LISTEN $ONEPASS_ARGS' \
    'ExecStartPre=/usr/local/bin/onepassd --check --handler %i $ONEPASS_CPU_FLAGS $ONEPASS_LISTEN $ONEPASS_ARGS' \
    'ExecReload=/usr/local/bin/onepassd --check --handler %i $ONEPASS_CPU_FLAGS $ONEPASS_LISTEN $ONEPASS_ARGS'; do
    grep -qxF -- "$line" "$UNIT" || { echo "missing: $line"; return 1; }
  done
  # The data check runs before the reload signal, so a failed check stops the reload.
  [ "$(grep -n '^ExecReload=' "$UNIT" | head -1 | grep -c -- '--check')" -eq 1 ]
  # The stop timeout covers the server's drain (--drain-timeout-ms, 5 s by default).
  stop=$(sed -n 's/^TimeoutStopSec=//p' "$UNIT")
  [ "$stop" -gt 5 ]
  # sched_setaffinity (worker pinning) is in the allowed system calls.
  run systemd-analyze syscall-filter @system-service
  [[ $output == *"@resources"* ]]
  run systemd-analyze syscall-filter @resources
  [[ $output == *"sched_setaffinity"* ]]
  run systemd-analyze syscall-filter @privileged
  [[ $output != *"sched_setaffinity"* ]]
}

@test "the defaults files give the command line onepass-rss planned" {
  for f in "$DEPLOY"/default/*; do bash -n "$f"; done
  # As systemd expands them: unquoted $VARS split on spaces, empty ones vanish.
  expand() {
    (
      set -f
      # shellcheck disable=SC1090
      . "$1"
      # shellcheck disable=SC1090
      . "$2"
      # shellcheck disable=SC2086
      printf '%s|' --handler dns $ONEPASS_CPU_FLAGS $ONEPASS_LISTEN $ONEPASS_ARGS
    )
  }
  run expand "$DEPLOY/default/onepass" "$DEPLOY/default/onepass-dns"
  [ "$output" = "--handler|dns|--listen|0.0.0.0:53|--listen|[::]:53|--backlog|65535|" ]
  make_fake_host
  cp "$DEPLOY/default/onepass" "$ROOT/etc/default/onepass"
  run "$DEPLOY/onepass-rss" apply eth0 --sysroot "$ROOT"
  [ "$status" -eq 0 ]
  run expand "$ROOT/etc/default/onepass" "$DEPLOY/default/onepass-dns"
  [ "$output" = "--handler|dns|--cpus|0-3|--listen|0.0.0.0:53|--listen|[::]:53|--backlog|65535|" ]
}
