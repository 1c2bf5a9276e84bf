# shellcheck shell=bash
# Shared by the bats files: a fake host (tests/deploy/fake_nic.bash) and a
# snapshot of a whole tree, to prove that rollback restores every value.

DEPLOY=$(cd "$BATS_TEST_DIRNAME/../../deploy" && pwd)
# shellcheck source=fake_nic.bash
. "$BATS_TEST_DIRNAME/fake_nic.bash"

# A host with 8 CPUs (SMT pairs i, i+4), a 4-queue NIC eth0 (8 channels at
# most), irqbalance running (pid 100) with Debian's default config file.
make_fake_host() {
  ROOT=$BATS_TEST_TMPDIR/root
  mkdir -p "$ROOT/var/lib" "$ROOT/etc/default" "$ROOT/proc/100" "$ROOT/proc/1"
  fake_cpus "$ROOT"
  fake_nic "$ROOT" eth0 4 8 "${1:-0-7}"
  echo irqbalance >"$ROOT/proc/100/comm"
  echo systemd >"$ROOT/proc/1/comm"
  printf '%s\n' '# irqbalance is a daemon process that distributes interrupts across' \
    '#IRQBALANCE_ONESHOT=' '#IRQBALANCE_BANNED_CPULIST=' '#IRQBALANCE_ARGS=' >"$ROOT/etc/default/irqbalance"
  export FAKE_ROOT=$ROOT
  export ONEPASS_ETHTOOL=$BATS_TEST_DIRNAME/fake-ethtool
  export FAKE_ETHTOOL_LOG=$BATS_TEST_TMPDIR/ethtool.log
  : >"$FAKE_ETHTOOL_LOG"
}

# Every directory, symlink and file under $1 with its mode and content.
snapshot() {
  (cd "$1" && find . -print0 | sort -z | while IFS= read -r -d '' f; do
    if [ -L "$f" ]; then
      printf 'L %s -> %s\n' "$f" "$(readlink "$f")"
    elif [ -f "$f" ]; then
      printf 'F %s %s %s\n' "$f" "$(stat -c %a "$f")" "$(sha256sum <"$f" | cut -c1-16)"
      sed 's/^/  | /' "$f"
    else
      printf 'D %s %s\n' "$f" "$(stat -c %a "$f")"
    fi
  done)
}

# Fails (showing the difference) unless the two snapshot files are equal.
assert_same_snapshot() {
  if ! diff -u "$1" "$2"; then
    echo "the tree differs from its snapshot (- before, + after)" >&2
    return 1
  fi
}
