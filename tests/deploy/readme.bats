#!/usr/bin/env bats
# deploy/README.md shows what onepass-rss prints on the fake host; this keeps
# those blocks true: each <!-- NAME --> block must equal today's output.

setup() {
  load helpers
  ROOT=$BATS_TEST_TMPDIR/root
  mkdir -p "$ROOT/var/lib" "$ROOT/etc/default" "$ROOT/proc/100"
  fake_cpus "$ROOT"
  fake_nic "$ROOT" eth0 4 8
  echo irqbalance >"$ROOT/proc/100/comm"
  printf '%s\n' '# irqbalance is a daemon process that distributes interrupts across' \
    '#IRQBALANCE_ONESHOT=' >"$ROOT/etc/default/irqbalance"
  cp "$DEPLOY/default/onepass" "$ROOT/etc/default/onepass"
  export FAKE_ROOT=$ROOT
  # Called "ethtool", as on a real host, so the printed commands read the same.
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  ln -s "$BATS_TEST_DIRNAME/fake-ethtool" "$BATS_TEST_TMPDIR/bin/ethtool"
  export PATH=$BATS_TEST_TMPDIR/bin:$PATH
  unset ONEPASS_ETHTOOL
}

# The fenced block after <!-- NAME --> in the README.
readme_block() {
  awk -v name="<!-- $1 -->" '$0 == name { on = 1; next } on && /^<!-- end -->/ { exit } on && !/^```/ { print }' "$DEPLOY/README.md"
}

check() {
  local name=$1
  shift
  run "$DEPLOY/onepass-rss" "$@" --sysroot "$ROOT"
  [ "$status" -eq 0 ]
  local want got
  want=$(readme_block "$name" | sed 's/saved at .*Z$/saved at TIME/')
  # shellcheck disable=SC2001 # a regular expression on every line
  got=$(sed 's/saved at .*Z$/saved at TIME/' <<<"$output")
  [ -n "$want" ]
  if [ "$want" != "$got" ]; then
    diff -u <(printf '%s\n' "$want") <(printf '%s\n' "$got") || true
    echo "README block '$name' differs from the output (- README, + output)"
    return 1
  fi
}

@test "README: show before, plan, show after and rollback are today's output" {
  check show-before show eth0
  check plan plan eth0
  run "$DEPLOY/onepass-rss" apply eth0 --sysroot "$ROOT"
  [ "$status" -eq 0 ]
  check show-after show eth0
  check rollback rollback eth0
}
