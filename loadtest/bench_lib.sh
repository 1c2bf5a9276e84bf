# shellcheck shell=bash
# shellcheck disable=SC2034  # SERVER_ADDR and friends are read by the sourcing scripts
# Shared by the benchmark scripts of loadtest/ and scripts/demo.sh (sourced, not run): their
# common flags, the binaries, CPU lists, RPS steering, servers, JSON fields, result files.
# Plain bash + coreutils (no python, no jq) so the scripts run from a bundle on a bare machine.

# header_usage SCRIPT: SCRIPT's --help, the comment block at its top (after the #! line, up
# to the first line that is not a comment).
header_usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1"; }

# usage_error TEXT: "SCRIPT: TEXT" and the script's --help on stderr, exit 1.
usage_error() {
  echo "$(basename "$0" .sh): $1" >&2
  header_usage "$0" >&2
  exit 1
}

# The flags most benchmarks share. A script sets its defaults, names the ones it takes in
# COMMON_OPTIONS (e.g. "seconds rounds bin") and ends its own `case` with
#   *) common_option "$@"; shift "$OPTION_WORDS" ;;
# Each flag sets one variable: --seconds S seconds, --rounds N rounds, --server-cpus LIST
# server_cpus, --client-cpus LIST client_cpus, --server-cpu N server_cpu, --client-cpu N
# client_cpu, --concurrency N concurrency, --net lo|veth net, --io LOOPS io_modes, --bin DIR
# BIN_DIR, --json FILE json_out, --out DIR out_dir, --name NAME result_name, --results DIR
# results_dir. -h/--help prints the script's header and exits 0; any other flag, or one of
# these that is not in COMMON_OPTIONS, is a usage_error.
# The variables whose default is the same in every script start so here (a script that has
# another sets it after sourcing this file); the others are the script's own to set.
COMMON_OPTIONS=""
OPTION_WORDS=0
net=lo
json_out=""
out_dir=""
result_name=""
results_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/results"
common_option() {
  local var
  case $1 in
    -h|--help) header_usage "$0"; exit 0 ;;
  esac
  [[ " $COMMON_OPTIONS " == *" ${1#--} "* ]] || usage_error "unknown option $1"
  case $1 in
    --seconds) var=seconds ;;
    --rounds) var=rounds ;;
    --server-cpus) var=server_cpus ;;
    --client-cpus) var=client_cpus ;;
    --server-cpu) var=server_cpu ;;
    --client-cpu) var=client_cpu ;;
    --concurrency) var=concurrency ;;
    --net) var=net ;;
    --io) var=io_modes ;;
    --bin) var=BIN_DIR ;;
    --json) var=json_out ;;
    --out) var=out_dir ;;
    --name) var=result_name ;;
    --results) var=results_dir ;;
    *) usage_error "unknown option $1" ;;
  esac
  [ $# -ge 2 ] || usage_error "$1 needs a value"
  printf -v "$var" '%s' "$2"
  OPTION_WORDS=2
}

# default_bin_dir: the first folder that holds onepassd (in server/, as a build does, or at its
# top, as a bundle of scripts/bundle.sh does): build/release, build/ci, build/static, each
# build/NAME of BIN_DIR_FALLBACK (a script that may run on a debug build sets it to dev), then
# the scripts' own folder (a bundle carried with them); build/release when none does
# (find_binary then says so).
BIN_DIR_FALLBACK=""
default_bin_dir() {
  local here tree dir fallback=()
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  tree=$(dirname "$here")
  read -ra fallback <<< "$BIN_DIR_FALLBACK"
  for dir in "$tree/build/release" "$tree/build/ci" "$tree/build/static" \
    "${fallback[@]/#/$tree/build/}" "$here"; do
    if [ -x "$dir/server/onepassd" ] || [ -x "$dir/onepassd" ]; then
      echo "$dir"
      return 0
    fi
  done
  echo "$tree/build/release"
}

# Finds a binary: $2 (an explicit path from the environment) or $BIN_DIR/{.,server,loadtest}/$1
# (BIN_DIR: --bin, else default_bin_dir).
find_binary() {
  local name=$1 explicit=$2 bin_dir=${BIN_DIR:-$(default_bin_dir)} dir
  if [ -n "$explicit" ]; then
    [ -x "$explicit" ] || { echo "bench: $explicit is not executable" >&2; return 1; }
    echo "$explicit"
    return 0
  fi
  for dir in "$bin_dir" "$bin_dir/server" "$bin_dir/loadtest"; do
    if [ -x "$dir/$name" ]; then
      echo "$dir/$name"
      return 0
    fi
  done
  echo "bench: cannot find $name under $bin_dir (build it, or set its path in the environment)" >&2
  return 1
}

# find_binaries WHICH...: sets each variable named, onepassd, load or reference, to the path
# of its binary (onepassd, onepass-load, onepass-reference: find_binary, the environment's
# ONEPASSD, ONEPASS_LOAD, ONEPASS_REFERENCE first); BIN_DIR to default_bin_dir when unset.
# Exits when one is missing.
onepassd="" load="" reference=""
find_binaries() {
  local which name env path
  [ -n "${BIN_DIR:-}" ] || BIN_DIR=$(default_bin_dir)
  for which in "$@"; do
    case $which in
      onepassd) name=onepassd env=ONEPASSD ;;
      load) name=onepass-load env=ONEPASS_LOAD ;;
      reference) name=onepass-reference env=ONEPASS_REFERENCE ;;
      *) echo "bench: find_binaries: no binary called $which" >&2; exit 1 ;;
    esac
    path=$(find_binary "$name" "${!env:-}") || exit 1
    printf -v "$which" '%s' "$path"
  done
}

# "0-2,5" -> "0 1 2 5"
expand_cpus() {
  local item from to cpu expanded=()
  IFS=',' read -ra items <<< "$1"
  for item in "${items[@]}"; do
    if [[ $item == *-* ]]; then
      from=${item%-*}
      to=${item#*-}
      for ((cpu = from; cpu <= to; cpu++)); do expanded+=("$cpu"); done
    else
      expanded+=("$item")
    fi
  done
  echo "${expanded[*]}"
}

count_cpus() { local cpus; read -ra cpus <<< "$(expand_cpus "$1")"; echo "${#cpus[@]}"; }

# CPU list -> the hex mask rps_cpus takes: 32-bit groups, most significant first, comma-joined.
cpu_mask() {
  local cpu max=0 group groups=() words=()
  for cpu in $(expand_cpus "$1"); do ((cpu > max)) && max=$cpu; done
  for ((group = 0; group <= max / 32; group++)); do words[group]=0; done
  for cpu in $(expand_cpus "$1"); do
    words[cpu / 32]=$((words[cpu / 32] | (1 << (cpu % 32))))
  done
  for ((group = max / 32; group >= 0; group--)); do groups+=("$(printf '%08x' "${words[group]}")"); done
  local IFS=,
  echo "${groups[*]}"
}

# A loopback port below the ephemeral range (the load tester's thousands of TIME-WAIT
# connections live there, and a listener cannot bind a port they hold) that nothing listens on.
free_local_port() {
  local low port tries
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  ((low > 11000)) || low=32768
  for ((tries = 0; tries < 50; tries++)); do
    port=$(( (RANDOM % (low - 10000)) + 10000 ))
    [ -z "$(ss -Htuln "sport = :$port" 2>/dev/null)" ] && break
  done
  echo "$port"
}

RPS_FILE=/sys/class/net/lo/queues/rx-0/rps_cpus
RPS_SAVED=""
# Two benchmarks at once would each save the other's mask and restore it, leaving rps_cpus
# steered after both have gone (it broke another engineer's tests): the save ... restore is
# held under an exclusive lock, taken once and kept until the script exits (the descriptor
# closes with it, so a killed run cannot leave it held). Waits 15 minutes at most.
RPS_LOCK=${ONEPASS_BENCH_LOCK:-/tmp/onepass-bench-rps.lock}
RPS_LOCK_FD=""
take_rps_lock() {
  [ -z "$RPS_LOCK_FD" ] || return 0
  # "command": a lock file that cannot be opened is a warning, not the end of the script.
  if ! command exec {RPS_LOCK_FD}>>"$RPS_LOCK"; then
    echo "bench: WARNING: cannot open $RPS_LOCK: rps_cpus is changed without the lock"
    RPS_LOCK_FD=""
    return 0
  fi
  chmod 0666 "$RPS_LOCK" 2>/dev/null || true  # any user's run can take it
  if ! flock -n "$RPS_LOCK_FD"; then
    echo "bench: another benchmark holds $RPS_LOCK; waiting (15 min at most)"
    flock -w 900 "$RPS_LOCK_FD" || { echo "bench: $RPS_LOCK still held after 15 min" >&2; exit 1; }
  fi
}

# On loopback a packet's receive path (the SYN, the handshake, the request) runs on the
# SENDER's CPU, so a pinned server would leave its kernel work on the client's cores.
# Steering loopback receive processing to the server's CPUs with RPS charges the server what
# it would pay behind a NIC (docs/design.md "The load tester and the benchmarks"). Restored by
# restore_rps (trap EXIT).
steer_rps() {
  local mask
  mask=$(cpu_mask "$1")
  take_rps_lock
  if [ ! -w "$RPS_FILE" ]; then
    echo "bench: WARNING: cannot write $RPS_FILE (not root?): loopback receive work stays on the client's CPUs; figures under-charge the server"
    return 0
  fi
  RPS_SAVED=$(cat "$RPS_FILE")
  if echo "$mask" > "$RPS_FILE" 2>/dev/null; then
    echo "bench: steering loopback receive processing to the server CPUs $1 (rps_cpus $RPS_SAVED -> $mask; restored at exit)"
  else
    echo "bench: WARNING: could not write $mask to $RPS_FILE; loopback receive work stays on the sender's CPUs"
    RPS_SAVED=""
  fi
}

restore_rps() {
  if [ -n "$RPS_SAVED" ]; then
    echo "$RPS_SAVED" > "$RPS_FILE" 2>/dev/null || true
    RPS_SAVED=""
  fi
}

# shellcheck source=loadtest/net_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/net_lib.sh"

SERVER_PID=""
# shellcheck disable=SC2034  # read by the scripts that source this file
SERVER_ADDR=""
SERVER_OUT=""

# start_server OUTFILE CMD...: starts CMD in the background, waits for "ready" (20 s at most)
# and reads the first "listening on" address.
start_server() {
  SERVER_OUT=$1
  shift
  # Emptied here, not only by the background redirect: a file left by an earlier run under
  # the same name would otherwise be read for "ready" before the new server truncates it.
  : > "$SERVER_OUT"
  "$@" > "$SERVER_OUT" 2> "$SERVER_OUT.err" &
  SERVER_PID=$!
  if wait_ready "$SERVER_OUT" "$SERVER_PID" "$1"; then
    SERVER_ADDR=$(sed -n 's/^listening on //p' "$SERVER_OUT" | head -n 1)
    return 0
  fi
  kill -0 "$SERVER_PID" 2>/dev/null && stop_server
  SERVER_PID=""
  return 1
}

# wait_ready OUTFILE PID NAME: waits (20 s at most) for the server PID to print "ready" to
# OUTFILE; 1, with what it wrote to OUTFILE.err, when it exits first or takes longer.
wait_ready() {
  local tries
  for ((tries = 0; tries < 200; tries++)); do
    grep -q '^ready$' "$1" 2>/dev/null && return 0
    if ! kill -0 "$2" 2>/dev/null; then
      echo "bench: $3 exited before ready:" >&2
      cat "$1.err" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "bench: $3 did not print ready within 20 s" >&2
  return 1
}

# CPU time [ns] the server has run so far, all its threads (schedstat: the scheduler's own
# count, which includes the softirq work that ran in the server's context), 0 when gone.
server_cpu_ns() { process_cpu_ns "$SERVER_PID"; }
# The same for any process: process_cpu_ns PID (0 when PID is empty or gone).
process_cpu_ns() {
  [ -n "$1" ] || { echo 0; return 0; }
  cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ sum += $1 } END { printf "%.0f\n", sum }'
}

# CPU time [ns] of the ksoftirqd threads of the given CPUs: with loopback receive processing
# steered to the server CPUs, the receive work that did not run in the server's context runs
# there. (Per-CPU softirq ticks of /proc/stat would count twice what ran in the server's
# context: without IRQ_TIME_ACCOUNTING the server's own runtime includes it.) Softirq that
# interrupts an unrelated process is missed, for both servers alike.
ksoftirqd_ns() {
  local cpu pid sum=0 ns
  for cpu in $(expand_cpus "$1"); do
    pid=$(pgrep -x "ksoftirqd/$cpu" | head -n 1)
    [ -n "$pid" ] || continue
    ns=$(awk '{ print $1 }' "/proc/$pid/schedstat" 2>/dev/null || echo 0)
    sum=$((sum + ${ns:-0}))
  done
  echo "$sum"
}

# cpu_ticks CPUS: "busy total" jiffies summed over those CPUs (/proc/stat: busy is everything
# but idle and iowait, so the softirq that runs in the idle task's context counts too: with
# receive processing steered to a CPU that is not saturated, much of it runs there, where
# neither the server's nor ksoftirqd's own time shows it).
cpu_ticks() {
  awk -v list=" $(expand_cpus "$1") " '
    /^cpu[0-9]/ { cpu = substr($1, 4); if (index(list, " " cpu " ") == 0) next
      t = 0; for (i = 2; i <= NF; i++) t += $i
      busy += t - $5 - $6; total += t }
    END { printf "%d %d\n", busy, total }' /proc/stat
}

# busy_cores "BUSY0 TOTAL0" "BUSY1 TOTAL1" NCPUS: the CPUs' busy share in between, in cores.
busy_cores() {
  awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { split(a, x, " "); split(b, y, " ")
    if (y[2] > x[2]) printf "%.2f", (y[1] - x[1]) / (y[2] - x[2]) * n; else print 0 }'
}

# stop_pid PID: SIGTERM, then SIGKILL after 10 s; reaped. Nothing when PID is empty.
stop_pid() {
  [ -n "$1" ] || return 0
  kill -TERM "$1" 2>/dev/null || true
  local tries
  for ((tries = 0; tries < 100; tries++)); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$1" 2>/dev/null; then
    kill -KILL "$1" 2>/dev/null || true
  fi
  wait "$1" 2>/dev/null || true
}

# Stops the server started last (stop_pid); prints its stats line.
stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  stop_pid "$SERVER_PID"
  SERVER_PID=""
  grep '^stats ' "$SERVER_OUT" || true
}

# stats_field NAME LINE: counter NAME of onepassd's `stats` line LINE (what stop_server prints,
# and SIGUSR1 logs): space-separated NAME=VALUE, labelled ones NAME{LABEL="V"}=VALUE, in the
# order of server/core/stats.h; empty when the line has no NAME.
stats_field() {
  awk -v want="$1=" '{ for (i = 1; i <= NF; i++) if (index($i, want) == 1) { print substr($i, length(want) + 1); exit } }' <<< "$2"
}

# stats_summary LINE: the counters to read first, "accepted N, served N, errors N, rejected N,
# timeouts N" (errors, rejected and timeouts: the totals of their causes); "no stats line" for
# an empty LINE (the server died).
stats_summary() {
  local name value summary=""
  [ -n "$1" ] || { echo "no stats line"; return 0; }
  for name in accepted served errors rejected timeouts; do
    value=$(stats_field "$name" "$1")
    summary+="${summary:+, }$name ${value:-?}"
  done
  echo "$summary"
}

# json_number FILE KEY [SECTION]: the number after "KEY": (inside "SECTION": {...} if given).
json_number() {
  local text
  text=$(cat "$1")
  if [ -n "${3:-}" ]; then
    text=$(grep -o "\"$3\": {[^}]*}" <<< "$text" | head -n 1)
  fi
  grep -o "\"$2\": -\?[0-9.]*" <<< "$text" | head -n 1 | sed 's/.*: //'
}

json_bool() { grep -o "\"$2\": \(true\|false\)" "$1" | head -n 1 | sed 's/.*: //'; }

# ratio A B -> A/B with 3 decimals ("n/a" when B is 0 or missing)
ratio() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }

# results_column KEY1 KEY2 FIELD: FIELD of every row of $results (the script's table of runs:
# tab-separated, a row per run) whose first two fields are KEY1 and KEY2, one a line.
results=""
results_column() { awk -F'\t' -v a="$1" -v b="$2" -v f="$3" '$1 == a && $2 == b { print $f }' "$results"; }

# median_of: the median of the numbers on stdin, one a line (an even count: the mean of the
# middle two, 2 decimals); n/a when there are none.
median_of() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# ratio_of A B: ratio A B, or n/a when either is n/a (not measured).
ratio_of() { if [ "$1" = n/a ] || [ "$2" = n/a ]; then echo n/a; else ratio "$1" "$2"; fi; }

# An OCSP data set (scripts/make-ocsp-testdata.sh output: good.req.der, responses/good.der):
# $ONEPASS_OCSP_DATA when set, else a fresh one made in $work/ocsp-data (the build makes none:
# the responses expire after 7 days).
ocsp_data_dir() {
  local dir=${ONEPASS_OCSP_DATA:-}
  if [ -n "$dir" ]; then
    if [ -f "$dir/good.req.der" ] && [ -f "$dir/responses/good.der" ]; then
      echo "$dir"
      return 0
    fi
    echo "bench: ONEPASS_OCSP_DATA=$dir holds no good.req.der and responses/good.der (make one with scripts/make-ocsp-testdata.sh DIR)" >&2
    return 1
  fi
  if [ -z "${work:-}" ]; then
    echo "bench: no scratch folder for an OCSP data set; set ONEPASS_OCSP_DATA" >&2
    return 1
  fi
  dir="$work/ocsp-data"
  if [ ! -f "$dir/responses/good.der" ]; then
    "$(dirname "${BASH_SOURCE[0]}")/../scripts/make-ocsp-testdata.sh" "$dir" >&2 || return 1
  fi
  echo "$dir"
}

# The signed zone of the dnssec benchmark: $ONEPASS_DNSSEC_ZONE or the repository's copy.
dnssec_zone() {
  echo "${ONEPASS_DNSSEC_ZONE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/data/dnssec/example.org.signed}"
}

# The whole HTTP response onepassd sends to the RDAP benchmark's request (GET /domain/
# example.com), captured once into $work: the reference then sends the same bytes.
rdap_response() {
  local file="$work/rdap-response" binary="${onepassd:-}"
  if [ ! -s "$file" ]; then
    [ -n "$binary" ] || binary=$(find_binary onepassd "${ONEPASSD:-}") || return 1
    start_server "$work/rdap-capture.out" "$binary" --handler rdap --listen 127.0.0.1:0 \
      --workers 1 || return 1
    curl -sS -i --max-time 10 "http://$SERVER_ADDR/domain/example.com" > "$file" || true
    stop_server > /dev/null
    grep -q '^HTTP/1.1 200 ' "$file" || { echo "bench: onepassd gave no RDAP answer to capture" >&2; return 1; }
  fi
  echo "$file"
}

# Sets load_args, server_args (onepassd) and reference_args for a protocol.
protocol_args() {
  server_args=(--handler "$1")
  reference_args=(--proto "$1")
  case $1 in
    dns) load_args=(--proto dns --qname www.example.com. --qtype A) ;;
    dnssec)
      # A signed zone, an A query with the DO bit: the answer carries its RRSIG, the apex NS
      # with its RRSIG and the signed glue. The reference answers the same number of bytes
      # (bench.sh measures onepassd's answer size in the first round).
      server_args=(--handler dns --zone "$(dnssec_zone)")
      reference_args=(--proto dns)
      load_args=(--proto dns --qname www.example.org. --qtype A --edns-size 1232 --dnssec-ok) ;;
    dnslarge)
      # Query cost against zone size: a zone of $ONEPASS_LARGE_NAMES names (1,000,000 by
      # default, scripts/gen-dns-zone.py), asked for random names of it (--queries); the
      # reference answers its fixed answer.
      local names=${ONEPASS_LARGE_NAMES:-1000000} root
      root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
      if [ ! -f "$work/large.zone" ]; then
        python3 "$root/scripts/gen-dns-zone.py" --names "$names" --out "$work/large.zone" \
          --queries "$work/large.queries" --query-count 100000 || return 1
      fi
      server_args=(--handler dns --zone "$work/large.zone")
      reference_args=(--proto dns)
      load_args=(--proto dns --queries "$work/large.queries") ;;
    whois) load_args=(--proto whois --whois-query example.com) ;;
    rdap)
      # RDAP over plain HTTP here (HTTPS is --tls-listen); the reference answers onepassd's bytes.
      local response
      response=$(rdap_response) || return 1
      load_args=(--proto rdap --rdap-path /domain/example.com)
      reference_args+=(--response-file "$response") ;;
    ocsp)
      local data
      data=$(ocsp_data_dir) || return 1
      load_args=(--proto ocsp --ocsp-request "$data/good.req.der")
      server_args+=(--ocsp-responses "$data/responses")
      reference_args+=(--response-file "$data/responses/good.der") ;;
    *) echo "bench: protocol must be dns, dnssec, dnslarge, ocsp, whois or rdap" >&2; return 1 ;;
  esac
}

# Makes the scratch folder $work and arranges that, on any exit, the server is stopped,
# loopback RPS restored, the JSON reports copied to $out_dir (when set) and $work removed.
make_work_dir() {
  work=$(mktemp -d)
  trap cleanup_work_dir EXIT
  trap 'exit 130' INT TERM
}
cleanup_work_dir() {
  stop_server >/dev/null 2>&1 || true
  restore_rps
  net_teardown
  if [ -n "${out_dir:-}" ]; then
    mkdir -p "$out_dir"
    cp "$work"/*.json "$out_dir"/ 2>/dev/null || true
  fi
  rm -rf "$work"
}

# command_as_run SCRIPT ARGS...: the command line as run, "chrt -f N " first when the script
# runs under a real-time policy (as a result file should say).
command_as_run() {
  local line policy
  line="loadtest/$(basename "$1")"
  shift
  [ $# -eq 0 ] || line+=" $*"
  policy=$(chrt -p $$ 2>/dev/null | sed -n 's/.*current scheduling policy: SCHED_//p' | head -n 1)
  if [ -n "$policy" ] && [ "$policy" != OTHER ]; then
    case $policy in FIFO) policy=f ;; RR) policy=r ;; *) policy=${policy:0:1} ;; esac
    line="chrt -$policy $(chrt -p $$ | sed -n 's/.*current scheduling priority: //p') $line"
  fi
  echo "$line"
}

# tree_commit: the short commit of the tree this script is in, "-dirty" when tracked files
# differ from it, "nogit" outside a checkout; $ONEPASS_COMMIT when set (a copy of the tree
# carried to another machine without its .git).
tree_commit() {
  local tree commit
  if [ -n "${ONEPASS_COMMIT:-}" ]; then echo "$ONEPASS_COMMIT"; return 0; fi
  tree=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  commit=$(git -C "$tree" rev-parse --short HEAD 2>/dev/null) || { echo nogit; return 0; }
  git -C "$tree" diff --quiet HEAD -- 2>/dev/null || commit+=-dirty
  echo "$commit"
}

# write_result_file DIR NAME TITLE COMMAND TABLE-FILE [NOTES-FILE]: writes DIR/DATE-COMMIT-NAME.md
# (loadtest/README.md "Results"): the date, the commit, the machine and its load, the command,
# then the table as printed and the notes that came with it. Prints the file's path.
write_result_file() {
  local dir=$1 name=$2 title=$3 command=$4 table=$5 notes=${6:-} commit file
  commit=$(tree_commit)
  file="$dir/$(date -u +%F)-$commit-$name.md"
  mkdir -p "$dir"
  {
    echo "# $title"
    echo
    echo "- date: $(date -u '+%F %H:%M UTC')"
    echo "- commit: $commit"
    echo "- machine: $(uname -r), nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
    echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- how to read the columns: loadtest/README.md"
    echo
    echo "    $command"
    echo
    if [ "$(head -c 1 "$table")" = "|" ]; then cat "$table"; else sed 's/^/    /' "$table"; fi
    if [ -n "$notes" ] && [ -s "$notes" ]; then
      echo
      cat "$notes"
    fi
  } > "$file"
  echo "$file"
}
