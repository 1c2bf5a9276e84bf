#!/usr/bin/env bats
# The anycast pieces that need no network namespace: the BIRD configuration
# onepass-bird-config renders (checked by BIRD's own parser, bird -p), its
# refusals, the health agent's unit and its argument checks. The agent
# against real BIRDs and onepassd: anycast.bats.

setup() {
  load helpers
  command -v bird >/dev/null || skip "bird not installed (apt-get install bird2)"
  CONFIG=$DEPLOY/onepass-bird-config
  AGENT=$DEPLOY/onepass-health-agent
}

@test "bird config: IPv4, IPv6 and BFD variants parse in BIRD, announce only the service prefixes, start disabled" {
  run "$CONFIG" --router-id 10.0.0.2 --local-as 65010 --peer 10.0.0.1:65000 --peer 10.0.1.1:65000 --service 192.0.2.53 --log stderr
  [ "$status" -eq 0 ]
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/v4.conf"
  bird -p -c "$BATS_TEST_TMPDIR/v4.conf"
  [[ $output == *"protocol bgp uplink1 from onepass_uplink"* ]]
  [[ $output == *"neighbor 10.0.1.1 as 65000;"* ]]
  [[ $output == *"define ONEPASS_SERVICE4 = [ 192.0.2.53/32 ];"* ]]
  [[ $output == *'route 192.0.2.53/32 via "onepass0";'* ]]
  [[ $output != *"bfd"* ]]
  [[ $output != *"protocol static onepass_service6"* ]]
  # Every service protocol starts disabled (the agent enables it).
  [ "$(grep -c '^protocol static' "$BATS_TEST_TMPDIR/v4.conf")" -eq "$(grep -c 'disabled yes;' "$BATS_TEST_TMPDIR/v4.conf")" ]
  run "$CONFIG" --router-id 10.0.0.2 --local-as 65010 --peer 10.0.0.1:65000 --peer '[fd00::1]:65000' \
    --service 192.0.2.53 --service 2001:db8::53/128 --service 192.0.2.54 --bfd --hold 3 --interface lo --log stderr
  [ "$status" -eq 0 ]
  printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/v46.conf"
  bird -p -c "$BATS_TEST_TMPDIR/v46.conf"
  [[ $output == *"define ONEPASS_SERVICE4 = [ 192.0.2.53/32, 192.0.2.54/32 ];"* ]]
  [[ $output == *'route 2001:db8::53/128 via "lo";'* ]]
  [[ $output == *"protocol bfd"* ]]
  [ "$(grep -c 'bfd on;' "$BATS_TEST_TMPDIR/v46.conf")" -eq 2 ]
  [[ $output == *"keepalive time 1;"* ]]
}

@test "bird config: refuses what BIRD would not take, naming the flag" {
  base=(--router-id 10.0.0.2 --local-as 65010)
  run "$CONFIG" "${base[@]}" --peer '[fd00::1]:65000' --service 192.0.2.53
  [ "$status" -eq 1 ]
  [[ $output == *"is IPv6 but no IPv6 --service"* ]]
  run "$CONFIG" "${base[@]}" --peer 10.0.0.1 --service 192.0.2.53
  [[ $output == *"--peer '10.0.0.1' is not ADDR:AS"* ]]
  run "$CONFIG" --router-id 10.0.0.2 --local-as 65x --peer 10.0.0.1:1 --service 192.0.2.53
  [[ $output == *"--local-as must be a number"* ]]
  run "$CONFIG" "${base[@]}" --peer 10.0.0.1:65000
  [[ $output == *"at least one --service"* ]]
  run "$CONFIG" "${base[@]}" --peer 10.0.0.1:65000 --service 192.0.2.300x
  [ "$status" -eq 1 ]
}

@test "bird config: --output writes a checked file and keeps the previous one; --dry-run writes nothing" {
  out=$BATS_TEST_TMPDIR/bird.conf
  args=(--router-id 10.0.0.2 --local-as 65010 --peer 10.0.0.1:65000 --service 192.0.2.53 --log stderr)
  run "$CONFIG" "${args[@]}" --output "$out" --dry-run
  [ "$status" -eq 0 ]
  [ ! -e "$out" ]
  [[ $output == *"dry run: would write $out"* ]]
  echo "previous" >"$out"
  run "$CONFIG" "${args[@]}" --output "$out"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(cat "$out.old")" = previous ]
  bird -p -c "$out"
  [ "$(stat -c %a "$out")" = 644 ]
}

@test "health agent: the unit verifies; arguments are checked; status names what it sees" {
  command -v systemd-analyze >/dev/null || skip "systemd-analyze not installed (apt-get install systemd)"
  mkdir -p "$BATS_TEST_TMPDIR/units"
  sed "s|/usr/local/lib/onepass-deploy/onepass-health-agent|$AGENT|" "$DEPLOY/systemd/onepass-health-agent.service" \
    >"$BATS_TEST_TMPDIR/units/onepass-health-agent.service"
  run systemd-analyze verify "$BATS_TEST_TMPDIR/units/onepass-health-agent.service"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  run "$AGENT" --help
  [ "$status" -eq 0 ]
  [[ $output == *"onepass-health-agent drain [--then CMD]"* ]]
  run "$AGENT" run --fall 0
  [ "$status" -eq 1 ]
  [[ $output == *"--fall and --rise must be at least 1"* ]]
  run "$AGENT" run --interval-ms 1s
  [[ $output == *"--interval-ms must be a whole number"* ]]
  run "$AGENT" frobnicate
  [[ $output == *"unknown command 'frobnicate'"* ]]
  # Nothing listens on port 1 of 127.0.0.1, and there is no BIRD on that socket.
  run "$AGENT" status --url http://127.0.0.1:1/healthz --bird-socket "$BATS_TEST_TMPDIR/none.ctl" --state-dir "$BATS_TEST_TMPDIR/st"
  echo "$output"
  [[ $output == *"health      failed (connection refused)"* ]]
  [[ $output == *"unreachable"* ]]
  [[ $output == *"maintenance no"* ]]
}

@test "anycast drop-in: onepass@dns with it verifies; stop drains through the agent as root; a broken path is caught" {
  command -v systemd-analyze >/dev/null || skip "systemd-analyze not installed (apt-get install systemd)"
  units=$BATS_TEST_TMPDIR/units
  mkdir -p "$units/onepass@dns.service.d"
  printf '#!/bin/sh\nexit 0\n' >"$BATS_TEST_TMPDIR/onepassd"
  chmod 0755 "$BATS_TEST_TMPDIR/onepassd"
  sed "s|/usr/local/bin/onepassd|$BATS_TEST_TMPDIR/onepassd|" "$DEPLOY/systemd/onepass@.service" >"$units/onepass@dns.service"
  sed "s|/usr/local/lib/onepass-deploy/onepass-health-agent|$AGENT|" "$DEPLOY/systemd/onepass-anycast.conf" \
    >"$units/onepass@dns.service.d/anycast.conf"
  SYSTEMD_UNIT_PATH=$units: run systemd-analyze verify "$units/onepass@dns.service"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  grep -qxF "ExecStop=+$AGENT drain --hold-syns --drain-max-s 20" "$units/onepass@dns.service.d/anycast.conf"
  grep -qxF "ExecStartPost=+$AGENT resume" "$units/onepass@dns.service.d/anycast.conf"
  # The stop timeout covers the agent's drain (20 s) and onepassd's (5 s).
  [ "$(sed -n 's/^TimeoutStopSec=//p' "$units/onepass@dns.service.d/anycast.conf")" -gt 25 ]
  sed -i "s|ExecStop=+$AGENT|ExecStop=+$BATS_TEST_TMPDIR/missing|" "$units/onepass@dns.service.d/anycast.conf"
  SYSTEMD_UNIT_PATH=$units: run systemd-analyze verify "$units/onepass@dns.service"
  [ "$status" -ne 0 ]
  [[ $output == *"missing"* ]]
}
