# shellcheck shell=bash disable=SC2034 # DEPLOY and ROOT are read by the .bats files
# shellcheck source-path=SCRIPTDIR
# Shared by the bats files: a fake host (tests/deploy/fake_nic.bash), the built binaries, and a
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

# A /proc/sys with the keys of deploy/sysctl/*.conf at Debian 12 defaults
# (tcp_migrate_req absent: an older kernel).
make_fake_proc_sys() {
  local root=$1 key value
  while read -r key value; do
    mkdir -p "$(dirname "$root/proc/sys/${key//.//}")"
    printf '%s\n' "$value" >"$root/proc/sys/${key//.//}"
  done <<'KEYS'
net.core.somaxconn 4096
net.ipv4.tcp_max_syn_backlog 1024
net.core.netdev_max_backlog 1000
net.ipv4.tcp_syncookies 1
net.ipv4.tcp_max_tw_buckets 131072
net.ipv4.tcp_fastopen 1
fs.file-max 9223372036854775807
fs.nr_open 1048576
net.ipv4.ip_local_port_range 32768	60999
net.ipv4.tcp_tw_reuse 2
net.core.default_qdisc fq_codel
net.ipv4.tcp_congestion_control cubic
KEYS
}

# find_built_into FILE VAR PATH: $VAR, else the newest build/*/PATH that
# answers --help, written to $T/FILE.
find_built_into() {
  local given=${!2:-} f newest=""
  if [ -n "$given" ]; then newest=$given; else
    for f in "$BATS_TEST_DIRNAME"/../../build/*/"$3"; do
      if [ ! -x "$f" ] || ! "$f" --help >/dev/null 2>&1; then continue; fi
      if [ -z "$newest" ] || [ "$f" -nt "$newest" ]; then newest=$f; fi
    done
  fi
  [ -n "$newest" ] || return 1
  printf '%s' "$newest" >"$T/$1"
}
