# shellcheck shell=bash
# Measuring helpers of zone_scale.sh (and dnsperf-bench.sh, dot-bench.sh): processes, CPU,
# memory, first answer, the Knot config, ranges. Sourced.

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

# cpu_ticks_of PID: user+sys clock ticks of the process PID, its threads and its live children.
cpu_ticks_of() {
  local ticks=0 p f
  for p in $(tree_pids "$1"); do
    read -r -a f < <(sed 's/^.*) //' /proc/"$p"/stat 2>/dev/null) || continue
    ticks=$((ticks + f[11] + f[12]))  # after "comm) ": utime is the 12th field, stime the 13th
  done
  echo "$ticks"
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

# Proportional set size [MB]: pages shared by processes (NSD forks after loading) count once.
# Walks the page tables under the address-space lock: not while the server loads.
pss_mb() {
  local kb=0
  for p in "$@"; do
    kb=$(( kb + $(awk '/^Pss:/ { print $2 }' /proc/"$p"/smaps_rollup 2>/dev/null || echo 0) ))
  done
  echo $(( kb / 1024 ))
}

# Resident set size now [kB] (VmRSS: counters, read without walking the address space).
rss_kb() {
  awk '/^VmRSS:/ { print $2 }' /proc/"$1"/status
}

# Peak resident set size since start [MB] (VmHWM: a counter, read without any lock).
hwm_mb() {
  echo $(( $(awk '/^VmHWM:/ { print $2 }' /proc/"$1"/status) / 1024 ))
}

# Waits until a TCP query for the apex SOA of bench.test is answered on 127.0.0.1:$1; prints
# the seconds since $2 (the server's start, date +%s.%N).
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
    time.sleep(0.02)
sys.exit("no answer in 300 s")
PY
}

# write_knot_conf FILE DIR PORT ZONE_NAME ZONE_FILE [EXTRA_SERVER_LINE...]: knotd in the
# foreground on loopback, its state in DIR, the zone loaded whole from the file, no journal, no
# zone-file flush; as root it stays root (no user to switch to in a scratch setup). Each
# EXTRA_SERVER_LINE goes into the server: section (e.g. "tcp-workers: 1").
write_knot_conf() {
  local file=$1 dir=$2 port=$3 zone_name=$4 zone_file=$5
  shift 5
  {
    cat <<CONF
server:
  listen: 127.0.0.1@$port
  rundir: "$dir"
CONF
    [[ $(id -u) -eq 0 ]] && echo "  user: root:root"
    local line
    for line in "$@"; do printf '  %s\n' "$line"; done
    cat <<CONF
database:
  storage: "$dir"
template:
  - id: default
    storage: "$dir"
    zonefile-load: whole
    journal-content: none
    zonefile-sync: -1
zone:
  - domain: $zone_name
    file: "$zone_file"
CONF
  } > "$file"
}

# span "1.2 1.5 1.3 " -> "1.2-1.5" (one value: itself; none: "-").
span() {
  awk '{ if (NF == 0) { print "-"; exit }
         lo = $1; hi = $1
         for (i = 2; i <= NF; i++) { if ($i + 0 < lo + 0) lo = $i; if ($i + 0 > hi + 0) hi = $i }
         print (lo == hi ? lo : lo "-" hi) }' <<<"$1"
}

# median "1.2 1.5 1.3 " -> "1.3" (an even count: the mean of the middle two).
median() {
  tr ' ' '\n' <<<"$1" | grep . | sort -g |
    awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
                              else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
