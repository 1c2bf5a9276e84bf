#!/usr/bin/env bash
# Zone data at scale: generates a zone of --names names (scripts/gen-dns-zone.py), then starts
# onepassd and NSD (and Knot if installed) on it one after another and prints, per server, the
# CPU spent until the first answer (user + sys of all its processes), the resident memory then
# (all processes), and the wall time from start to the first answer. For onepassd it also
# sends a SIGHUP and reports the reload time, the RSS peak during it and the RSS after it.
#
#   loadtest/zone_scale.sh [--names N] [--onepassd PATH] [--precompile-mb MB ...] [--no-nsd]
#
# Each run of a 1M-name zone costs ~20 s of CPU per server: keep the count small on shared
# machines. Ports 127.0.0.1:15353.. are used; every process started is ended by its PID.
set -euo pipefail

names=1000000
onepassd=""
precompile=()
with_nsd=1
with_reload=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --names) names="$2"; shift 2 ;;
    --onepassd) onepassd="$2"; shift 2 ;;
    --precompile-mb) precompile+=("$2"); shift 2 ;;
    --no-nsd) with_nsd=0; shift ;;
    --no-reload) with_reload=0; shift ;;
    *) echo "zone_scale.sh: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=loadtest/nsd_conf.sh
source "$root/loadtest/nsd_conf.sh"
if [[ -z "$onepassd" ]]; then
  for candidate in "$root/build/release/server/onepassd" "$root/build/dev/server/onepassd"; do
    [[ -x "$candidate" ]] && { onepassd="$candidate"; break; }
  done
fi
[[ -x "$onepassd" ]] || { echo "zone_scale.sh: no onepassd; build it or pass --onepassd" >&2; exit 2; }
[[ ${#precompile[@]} -gt 0 ]] || precompile=(default 0)

work="$(mktemp -d /tmp/onepass-zone-scale-XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  sleep 0.5
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
zone="$work/bench.zone"
python3 "$root/scripts/gen-dns-zone.py" --names "$names" --out "$zone"
echo "zone: $names names, $(grep -vc '^\$' "$zone") records, $(( $(stat -c %s "$zone") / 1000000 )) MB"

# The processes of a server: the PID and its descendants.
tree_pids() {
  local all=("$1") frontier=("$1") next
  while [[ ${#frontier[@]} -gt 0 ]]; do
    next=()
    for p in "${frontier[@]}"; do
      # shellcheck disable=SC2013 # the file is one line of space-separated PIDs
      for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do next+=("$c"); done
    done
    all+=("${next[@]}")
    frontier=("${next[@]}")
  done
  echo "${all[@]}"
}
# user+sys seconds of the PIDs, counting reaped children too.
cpu_seconds() {
  local ticks=0 hz
  hz=$(getconf CLK_TCK)
  for p in "$@"; do
    local f
    read -r -a f < <(sed 's/^.*) //' /proc/"$p"/stat 2>/dev/null) || continue
    # After "comm)": state=0 ... utime=11 stime=12 cutime=13 cstime=14.
    ticks=$(( ticks + f[11] + f[12] + f[13] + f[14] ))
  done
  awk -v t="$ticks" -v hz="$hz" 'BEGIN { printf "%.1f", t / hz }'
}
# Proportional set size: pages shared by processes (NSD forks after loading) count once.
rss_mb() {
  local kb=0
  for p in "$@"; do
    kb=$(( kb + $(awk '/^Pss:/ { print $2 }' /proc/"$p"/smaps_rollup 2>/dev/null || echo 0) ))
  done
  echo $(( kb / 1024 ))
}
# Waits until a TCP query for the apex SOA is answered; prints the seconds since $2 (the
# server's start, date +%s.%N).
wait_answer() {
  python3 - "$1" "$2" <<'PY'
import socket, struct, sys, time
port = int(sys.argv[1]); start = float(sys.argv[2])
q = struct.pack(">HHHHHH", 1, 0, 1, 0, 0, 0) + b"\x05bench\x04test\x00" + struct.pack(">HH", 6, 1)
while time.time() - start < 300:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(struct.pack(">H", len(q)) + q)
            if len(s.recv(4096)) > 12:
                print(f"{time.time() - start:.2f}"); sys.exit(0)
    except OSError:
        pass
    time.sleep(0.05)
sys.exit("no answer in 300 s")
PY
}

row() { printf '| %-34s | %8s s | %7s MB | %7s s |\n' "$@"; }
echo
echo "| server | CPU to load (user+sys) | memory (PSS) | start to first answer |"
echo "|---|---|---|---|"
reload_rows=()
for mb in "${precompile[@]}"; do
  args=(--handler dns --listen 127.0.0.1:15353 --workers 2 --zone "$zone")
  label="onepassd"
  if [[ "$mb" != default ]]; then args+=(--dns-precompile-max-mb "$mb"); label="onepassd --dns-precompile-max-mb $mb"; fi
  began=$(date +%s.%N)
  "$onepassd" "${args[@]}" >"$work/onepassd.out" 2>"$work/onepassd.err" &
  pid=$!; pids+=("$pid")
  t=$(wait_answer 15353 "$began")
  row "$label" "$(cpu_seconds "$pid")" "$(rss_mb "$pid")" "$t"
  if [[ $with_reload -eq 1 ]]; then
    before=$(grep -c "reloaded" "$work/onepassd.err" || true)
    start=$(date +%s.%N); peak=0
    kill -HUP "$pid"
    while [[ $(grep -c "reloaded\|reload failed" "$work/onepassd.err" || true) -eq $before ]]; do
      r=$(rss_mb "$pid"); (( r > peak )) && peak=$r
      sleep 0.05
      if (( $(date +%s) - ${start%.*} > 300 )); then echo "reload took over 300 s" >&2; break; fi
    done
    took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    sleep 2
    reload_rows+=("| $label | $took s | $peak MB | $(rss_mb "$pid") MB |")
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
if [[ $with_nsd -eq 1 ]] && command -v nsd >/dev/null; then
  write_nsd_conf "$work/nsd.conf" "$work" 15354 bench.test bench.zone
  began=$(date +%s.%N)
  nsd -d -c "$work/nsd.conf" >"$work/nsd.log" 2>&1 &
  pid=$!; pids+=("$pid")
  t=$(wait_answer 15354 "$began")
  tree=$(tree_pids "$pid")
  # shellcheck disable=SC2086
  row "NSD $(nsd -v 2>&1 | head -1 | awk '{print $3}') (all processes)" "$(cpu_seconds $tree)" "$(rss_mb $tree)" "$t"
  kill "$pid"; wait "$pid" 2>/dev/null || true
fi
if command -v knotd >/dev/null; then
  mkdir -p "$work/knot"
  cat >"$work/knot.conf" <<CONF
server:
  listen: 127.0.0.1@15355
  rundir: "$work/knot"
database:
  storage: "$work/knot"
zone:
  - domain: bench.test
    file: "$zone"
    journal-content: none
    zonefile-sync: -1
CONF
  began=$(date +%s.%N)
  knotd -c "$work/knot.conf" >"$work/knot.log" 2>&1 &
  pid=$!; pids+=("$pid")
  t=$(wait_answer 15355 "$began")
  row "Knot $(knotd -V 2>&1 | awk '{print $3}')" "$(cpu_seconds "$pid")" "$(rss_mb "$pid")" "$t"
  kill "$pid"; wait "$pid" 2>/dev/null || true
else
  echo "(knotd not installed: no Knot row)"
fi
if [[ ${#reload_rows[@]} -gt 0 ]]; then
  echo
  echo "| SIGHUP reload | time | PSS peak | PSS 2 s after |"
  echo "|---|---|---|---|"
  printf '%s\n' "${reload_rows[@]}"
fi
