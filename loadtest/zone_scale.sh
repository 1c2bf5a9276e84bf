#!/usr/bin/env bash
# Zone data at scale: generates a zone of --names names shaped as --shape says
# (scripts/gen-dns-zone.py: default, tld, mixed; tld-signed is tld signed with NSEC3 opt-out), then, for
# --rounds rounds, starts onepassd, NSD and Knot on it one after another and measures per
# server the CPU spent until the first answer (user + sys of all its processes), the memory then
# (PSS of all processes) and the wall time from start to the first answer. onepassd then gets a
# SIGHUP: its reload time (SIGHUP to the "reloaded" log line), the reload's own phases, the
# peak RSS (VmHWM), how long until the RSS is back within 5% of its steady level (the old
# data freed), and the PSS then (2 s after the reload at the earliest; NSD's and Knot's: 2 s).
# After each load, --check-queries random queries
# (names of the zone, some that do not exist) are asked of the server and their answers,
# reduced to RCODE, AA/TC and sorted sections (loadtest/zone_answers.py), compared with
# onepassd's of the same round: the "answers = onepassd" column, "whole/asked(RCODE and
# answer section)" (Knot leaves out the apex NS and the additional records NSD adds). Prints one table (ranges
# over the rounds) headed by the command that made it.
#
#   loadtest/zone_scale.sh [--shape default|tld|tld-signed|mixed] [--names N] [--rounds R]
#                          [--onepassd PATH] [--compare PATH ...] [--precompile-mb MB ...]
#                          [--check-queries N] [--no-nsd] [--no-knot] [--no-reload] [--signed]
#                          [--zone-file FILE --queries FILE]
#
# --zone-file FILE loads a zone made earlier (a signed 10M-name zone takes half an hour to
# sign) instead of generating one; --queries FILE is the query list gen-dns-zone.py wrote with
# it. Origin bench.test; --shape and --names then only label the report. The file's mtime is
# touched for NSD's reload.
#
# --compare PATH adds a row per round for another onepassd binary (an older build: before and
# after on the same generated, and signed, zone), labelled with its file name.
#
# --signed signs the generated zone first (ldns-keygen: a KSK and a ZSK, ECDSA P-256;
# ldns-signzone -n: NSEC3, 0 iterations, no salt, signatures valid 30 days) and every server
# loads the signed zone: a 100,000-name zone gives about 400k records, the case
# handlers/dns/README.md quotes. --shape tld-signed is the tld shape signed with NSEC3 opt-out
# by BIND's dnssec-signzone (-3 - -A: NSEC3 only for the delegations with a DS, as large TLDs
# sign; ECDSA P-256 KSK and ZSK, 30 days).
#
# Nothing reads the address space of a server while it loads or reloads (/proc/PID/smaps walks
# it under the lock that malloc's mmap/brk/mprotect calls need, and slowed reloads twofold when
# it was sampled every 50 ms): the peak comes from VmHWM, PSS is read once the load is done.
# A 1M-name zone costs ~5 s of CPU per server and round: keep the count small on shared
# machines; run it under `chrt -f 10` on a busy one. Ports 127.0.0.1:15353..15355 are used;
# every process started is ended by its PID.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=loadtest/bench_lib.sh
source "$root/loadtest/bench_lib.sh"
# shellcheck source=loadtest/nsd_conf.sh
source "$root/loadtest/nsd_conf.sh"
# shellcheck source=loadtest/zone_scale_lib.sh
source "$root/loadtest/zone_scale_lib.sh"

command_line="$0 $*"
names=1000000
shape=default
check_queries=200
optout=0
signed=0
rounds=2
onepassd=""
compare=()
precompile=()
with_nsd=1
with_knot=1
with_reload=1
zone_file=""
queries_file=""
COMMON_OPTIONS="rounds"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --names) names="$2"; shift 2 ;;
    --shape) shape="$2"; shift 2 ;;
    --check-queries) check_queries="$2"; shift 2 ;;
    --onepassd) onepassd="$2"; shift 2 ;;
    --compare) compare+=("$2"); shift 2 ;;
    --precompile-mb) precompile+=("$2"); shift 2 ;;
    --no-nsd) with_nsd=0; shift ;;
    --no-knot) with_knot=0; shift ;;
    --no-reload) with_reload=0; shift ;;
    --signed) signed=1; shift ;;
    --zone-file) zone_file="$2"; shift 2 ;;
    --queries) queries_file="$2"; shift 2 ;;
    *) common_option "$@"; shift "$OPTION_WORDS" ;;
  esac
done
case "$shape" in
  default|tld|mixed) ;;
  tld-signed) shape=tld; signed=1; optout=1 ;;
  *) echo "zone_scale.sh: --shape is default, tld, tld-signed or mixed" >&2; exit 2 ;;
esac
if [[ -z "$onepassd" ]]; then
  BIN_DIR_FALLBACK=dev
  find_binaries onepassd
fi
[[ -x "$onepassd" ]] || { echo "zone_scale.sh: --onepassd $onepassd is not executable" >&2; exit 2; }
for binary in "${compare[@]}"; do
  [[ -x "$binary" ]] || { echo "zone_scale.sh: --compare $binary is not executable" >&2; exit 2; }
done
binary="$onepassd"
[[ ${#precompile[@]} -gt 0 ]] || precompile=(default)
if [[ $with_nsd -eq 1 ]] && ! command -v nsd >/dev/null; then
  echo "(nsd not installed: no NSD row)"; with_nsd=0
fi
if [[ $with_knot -eq 1 ]] && ! command -v knotd >/dev/null; then
  echo "(knotd not installed: no Knot row)"; with_knot=0
fi

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
if [[ -n "$zone_file" ]]; then
  # Made (and signed) earlier: loaded as it is.
  [[ -f "$zone_file" && -f "$queries_file" ]] ||
    { echo "zone_scale.sh: --zone-file needs the zone and --queries FILE (gen-dns-zone.py --queries)" >&2; exit 2; }
  ln -s "$(realpath "$zone_file")" "$zone"
  head -n "$check_queries" "$queries_file" > "$work/queries"
  echo "zone file: $zone_file (made earlier; --shape and --names label it)"
else
  python3 "$root/scripts/gen-dns-zone.py" --shape "$shape" --names "$names" --out "$zone" \
    --queries "$work/queries" --query-count "$check_queries"
  if [[ $optout -eq 1 ]]; then
    # ldns-signzone -p still writes an NSEC3 for every delegation; BIND's signer skips the
    # insecure ones (RFC 5155 §6), which is what opt-out is for.
    command -v dnssec-signzone >/dev/null || { echo "zone_scale.sh: tld-signed needs dnssec-signzone (bind9-utils)" >&2; exit 2; }
    (cd "$work" && dnssec-keygen -q -a ECDSAP256SHA256 -f KSK bench.test >/dev/null &&
      dnssec-keygen -q -a ECDSAP256SHA256 bench.test >/dev/null &&
      dnssec-signzone -q -3 - -A -H 0 -S -K . -o bench.test -e +2592000 -f "$zone.signed" "$zone")
    mv "$zone.signed" "$zone"
    echo "signed: dnssec-signzone, NSEC3 opt-out (0 iterations, no salt), ECDSA P-256 KSK and ZSK"
  elif [[ $signed -eq 1 ]]; then
    command -v ldns-signzone >/dev/null || { echo "zone_scale.sh: --signed needs ldns-signzone (ldnsutils)" >&2; exit 2; }
    ksk=$(cd "$work" && ldns-keygen -a ECDSAP256SHA256 -k bench.test.)
    zsk=$(cd "$work" && ldns-keygen -a ECDSAP256SHA256 bench.test.)
    (cd "$work" && ldns-signzone -n -t 0 -e "$(date -u -d '+30 days' +%Y%m%d%H%M%S)" \
      -f "$zone.signed" "$zone" "$ksk" "$zsk")
    mv "$zone.signed" "$zone"
    echo "signed: NSEC3 (0 iterations), ECDSA P-256 KSK $ksk, ZSK $zsk"
  fi
fi
echo "zone: shape $shape$([[ $signed -eq 1 ]] && echo " signed"), $names names, $(grep -vc '^\$' "$zone") lines, $(( $(stat -L -c %s "$zone") / 1000000 )) MB"

# Results, one space-separated list of per-round values per "label|column".
declare -A results
labels=()
record() {  # record LABEL COLUMN VALUE
  [[ " ${labels[*]} " == *" $1 "* ]] || labels+=("$1")
  results["$1|$2"]+="$3 "
}

# check_answers LABEL PORT: the server's answers to the check queries, compared with those of
# the first onepassd of this round (its own row: the count it gave, all of them).
check_answers() {
  local out="$work/answers.$2"
  python3 "$root/loadtest/zone_answers.py" "$work/queries" "$2" >"$out"
  [[ -f "$work/answers.reference.$round" ]] || cp "$out" "$work/answers.reference.$round"
  record "$1" answers "$(awk -F'\t' 'NR == FNR { a[FNR] = $0; b[FNR] = $1; next }
    a[FNR] == $0 { n++ } b[FNR] == $1 { m++ }
    END { printf "%d/%d(%d)", n, FNR, m }' "$work/answers.reference.$round" "$out")"
}

# run_onepassd LABEL ARGS...: one start (and reload) of onepassd ($binary).
run_onepassd() {
  local label=$1; shift
  local began pid t
  began=$(date +%s.%N)
  "$binary" "$@" >"$work/onepassd.out" 2>"$work/onepassd.err" &
  pid=$!; pids+=("$pid")
  t=$(wait_answer 15353 "$began")
  record "$label" cpu "$(cpu_seconds "$pid")"
  record "$label" mem "$(pss_mb "$pid")"
  record "$label" start "$t"
  check_answers "$label" 15353
  if [[ $with_reload -eq 1 ]]; then
    local before took line cpu_before steady_kb reloaded_at
    before=$(grep -c "reloaded" "$work/onepassd.err" || true)
    cpu_before=$(cpu_seconds "$pid")
    steady_kb=$(rss_kb "$pid")
    began=$(date +%s.%N)
    kill -HUP "$pid"
    # The log file only: nothing touches the server's memory while it reloads.
    while [[ $(grep -c "reloaded\|reload failed" "$work/onepassd.err" || true) -eq $before ]]; do
      sleep 0.02
      if (( $(date +%s) - ${began%.*} > 300 )); then echo "reload took over 300 s" >&2; break; fi
    done
    took=$(awk -v s="$began" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
    record "$label" reload "$took"
    record "$label" reload_cpu "$(awk -v a="$cpu_before" -v b="$(cpu_seconds "$pid")" \
      'BEGIN { printf "%.1f", b - a }')"
    record "$label" ratio "$(awk -v r="$took" -v s="$t" 'BEGIN { printf "%.2f", r / s }')"
    record "$label" peak "$(hwm_mb "$pid")"
    line=$(grep "reloaded" "$work/onepassd.err" | tail -1)
    echo "  $label, round $round: ${line#*info: }"
    # The old snapshot is freed on a thread of its own once the workers have switched: how
    # long until the RSS is back within 5% of the steady one (VmRSS: no walk of the address
    # space), at most 60 s.
    reloaded_at=$(date +%s.%N)
    while (( $(rss_kb "$pid") * 100 > steady_kb * 105 )); do
      sleep 0.1
      if (( $(date +%s) - ${reloaded_at%.*} > 60 )); then break; fi
    done
    record "$label" settled "$(awk -v s="$reloaded_at" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')"
    sleep "$(awk -v s="$reloaded_at" -v e="$(date +%s.%N)" 'BEGIN { d = 2 - (e - s); print (d > 0 ? d : 0) }')"
    record "$label" after "$(pss_mb "$pid")"
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

run_nsd() {
  local began pid t tree label
  write_nsd_conf "$work/nsd.conf" "$work" 15354 bench.test bench.zone
  label="NSD $( (nsd -v 2>&1 || true) | head -1 | awk '{print $NF}') (all processes)"
  began=$(date +%s.%N)
  nsd -d -c "$work/nsd.conf" >"$work/nsd.log" 2>&1 &
  pid=$!; pids+=("$pid")
  t=$(wait_answer 15354 "$began")
  tree=$(tree_pids "$pid")
  # shellcheck disable=SC2086 # one PID per word
  { record "$label" cpu "$(cpu_seconds $tree)"; record "$label" mem "$(pss_mb $tree)"; }
  record "$label" start "$t"
  check_answers "$label" 15354
  if [[ $with_reload -eq 1 ]]; then
    # NSD re-reads a zone file whose mtime changed on SIGHUP, in a forked reload process.
    local before cpu_before took
    before=$(grep -c "read with success" "$work/nsd.log" || true)
    # shellcheck disable=SC2046 # one PID per word
    cpu_before=$(cpu_seconds $(tree_pids "$pid"))
    touch "$zone"
    began=$(date +%s.%N)
    kill -HUP "$pid"
    while [[ $(grep -c "read with success\|error" "$work/nsd.log" || true) -eq $before ]]; do
      sleep 0.02
      if (( $(date +%s) - ${began%.*} > 300 )); then echo "NSD reload took over 300 s" >&2; break; fi
    done
    took=$(awk -v s="$began" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
    record_reload "$label" "$took" "$t" "$cpu_before" "$pid"
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

run_knot() {
  local began pid t label
  rm -rf "$work/knot"; mkdir -p "$work/knot"
  write_knot_conf "$work/knot.conf" "$work/knot" 15355 bench.test "$zone"
  label="Knot $( (knotd -V 2>&1 || true) | awk '{print $NF}')"
  began=$(date +%s.%N)
  knotd -c "$work/knot.conf" >"$work/knot.log" 2>&1 &
  pid=$!; pids+=("$pid")
  t=$(wait_answer 15355 "$began")
  record "$label" cpu "$(cpu_seconds "$pid")"
  record "$label" mem "$(pss_mb "$pid")"
  record "$label" start "$t"
  check_answers "$label" 15355
  if [[ $with_reload -eq 1 ]]; then
    # knotc -b waits until the zone is loaded; a changed mtime makes Knot read the file again.
    local cpu_before took
    cpu_before=$(cpu_seconds "$pid")
    touch "$zone"
    began=$(date +%s.%N)
    timeout 300 knotc -b -c "$work/knot.conf" zone-reload bench.test >/dev/null
    took=$(awk -v s="$began" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
    record_reload "$label" "$took" "$t" "$cpu_before" "$pid"
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

# record_reload LABEL SECONDS START_SECONDS CPU_BEFORE PID: the reload columns of NSD and Knot
# (no peak: NSD's reload forks, and sampling during the load would slow it).
record_reload() {
  record "$1" reload "$2"
  record "$1" ratio "$(awk -v r="$2" -v s="$3" 'BEGIN { printf "%.2f", r / s }')"
  # shellcheck disable=SC2046 # one PID per word
  record "$1" reload_cpu "$(awk -v a="$4" -v b="$(cpu_seconds $(tree_pids "$5"))" \
    'BEGIN { printf "%.1f", b - a }')"
  sleep 2
  # shellcheck disable=SC2046 # one PID per word
  record "$1" after "$(pss_mb $(tree_pids "$5"))"
}

for (( round = 1; round <= rounds; round++ )); do
  echo "round $round of $rounds"
  for mb in "${precompile[@]}"; do
    args=(--handler dns --listen 127.0.0.1:15353 --workers 2 --zone "$zone")
    label="onepassd"
    if [[ "$mb" != default ]]; then
      args+=(--dns-precompile-max-mb "$mb"); label="onepassd --dns-precompile-max-mb $mb"
    fi
    run_onepassd "$label" "${args[@]}"
  done
  for binary in "${compare[@]}"; do
    run_onepassd "onepassd $(basename "$binary")" --handler dns --listen 127.0.0.1:15353 \
      --workers 2 --zone "$zone"
  done
  binary="$onepassd"
  [[ $with_nsd -eq 1 ]] && run_nsd
  [[ $with_knot -eq 1 ]] && run_knot
done

echo
echo "$command_line  ($(date -u +%Y-%m-%d), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| server | CPU to load (user+sys) | memory (PSS) | start to first answer | answers = onepassd | reload | reload CPU | reload / start (median) | reload peak (RSS) | PSS after (2 s; onepassd: 2 s or once settled) | RSS back to steady after |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
units=(" s" " MB" " s" "" " s" " s" "" " MB" " MB" " s")
for label in "${labels[@]}"; do
  line="| $label |"
  i=0
  for column in cpu mem start answers reload reload_cpu ratio peak after settled; do
    value=$(span "${results["$label|$column"]:-}")
    [[ "$value" == - ]] || value+="${units[$i]}"
    [[ "$column" != ratio || "$value" == - ]] ||
      value+=" ($(median "${results["$label|$column"]}"))"
    line+=" $value |"
    i=$(( i + 1 ))
  done
  echo "$line"
done
