#!/usr/bin/env bash
# Measures onepassd against the minimal reference server (onepass-reference) in the same run,
# on the same CPUs, with the same client: the RATIO is the figure that travels between
# machines; the absolute conn/s depend on the machine.
#
#   loadtest/bench.sh [--seconds 10] [--server-cpus 0] [--client-cpus 1-N] [--rounds 3]
#                     [--proto dns,dnssec,dnslarge,ocsp,whois,rdap] [--concurrency 64] [--open-loop 0.8]
#                     [--steering "cpu hash"] [--io "epoll uring"] [--json FILE] [--compare FILE]
#                     [--net lo|veth] [--bin DIR] [--out DIR] [--name NAME] [--results DIR]
#
# Binaries: --bin DIR (a build directory, or a folder holding the three binaries; default
# build/release, then build/ci), or their paths in ONEPASSD, ONEPASS_LOAD, ONEPASS_REFERENCE.
# Each server gets one worker per server CPU, pinned; the tester gets one thread per client
# CPU, pinned, closed loop. Loopback receive processing is steered to the server CPUs (RPS;
# needs root, restored at exit, under a lock). --net veth puts the client in a network namespace
# behind a veth pair instead, so that each side does its own receive work as two hosts do
# (loadtest/net_lib.sh says what each mode charges to whom). --proto takes a comma list; each protocol
# alternates the two servers --rounds times (a busy machine drifts). --open-loop F adds as many
# open-loop rounds at F x the reference's median closed-loop rate (tail latency).
# --steering "cpu hash" runs onepassd once per --steering mode in each round (rows onepassd@cpu,
# onepassd@hash), to compare CPU steering on and off in the same run. --io "epoll uring" does
# the same for the worker loop (rows onepassd@epoll, onepassd@uring; uring needs a build with
# -DONEPASS_IO_URING=ON).
# Prints one table: conn/s median [min-max], CPU us per connection (the server's threads plus
# the ksoftirqd of the server CPUs), p50/p99/p99.9 (median over rounds), errors, and the ratios
# onepassd / reference of the summed conn/s and of the CPU per connection. --json FILE writes
# it (one row per line); --compare FILE prints the change against such an earlier file.
# The table is also written as a result file, DIR/DATE-COMMIT-NAME.md (--results DIR, default
# loadtest/results; --results '' writes none; --name NAME, default bench-PROTOS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadtest/bench_lib.sh
source "$here/bench_lib.sh"

seconds=10
server_cpus=0
client_cpus=""
protos=dns
concurrency=""
BIN_DIR=""
rounds=1
open_loop=""
compare=""
steering_modes=""
io_modes=""
command_line=$(command_as_run "$0" "$@")
COMMON_OPTIONS="seconds rounds server-cpus client-cpus concurrency net io bin json out name results"
while [ $# -gt 0 ]; do
  case $1 in
    --proto) protos=$2; shift 2 ;;
    --open-loop) open_loop=$2; shift 2 ;;
    --steering) steering_modes=$2; shift 2 ;;
    --compare) compare=$2; shift 2 ;;
    *) common_option "$@"; shift "$OPTION_WORDS" ;;
  esac
done
if [ -n "$compare" ] && [ ! -r "$compare" ]; then
  echo "bench: --compare $compare: cannot read it" >&2
  exit 1
fi
find_binaries onepassd load reference

cores=$(nproc)
if [ -z "$client_cpus" ]; then
  client_cpus=""
  for ((cpu = 0; cpu < cores; cpu++)); do
    [[ " $(expand_cpus "$server_cpus") " == *" $cpu "* ]] || client_cpus+="${client_cpus:+,}$cpu"
  done
  [ -n "$client_cpus" ] || { echo "bench: no CPU left for the client; pass --client-cpus" >&2; exit 1; }
fi
n_server=$(count_cpus "$server_cpus")
n_client=$(count_cpus "$client_cpus")
concurrency=${concurrency:-$((64 * n_client))}
make_work_dir
IFS=',' read -ra proto_list <<< "$protos"
for proto in "${proto_list[@]}"; do
  (protocol_args "$proto" > /dev/null) || exit 1
done

echo "bench: $(uname -r), nproc=$cores, ${protos}, --net $net, server CPUs $server_cpus ($n_server workers), client CPUs $client_cpus ($n_client threads), closed loop $concurrency in flight, ${seconds}s per server, $rounds round(s); load:$(cut -d' ' -f1-3 /proc/loadavg)"
net_setup "$net" "$server_cpus" "$client_cpus" || exit 1

# median(" a b c"): plain awk (mawk has no asort), appended to the awk programs below.
AWK_MEDIAN='
  function median(list,   a, n, i, j, t) { n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    if (n == 0) return 0
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }'

# One line per run: proto mode server round conn/s ok errors cpu_us p50 p99 p99.9 bound
results="$work/results.tsv"
: > "$results"

# run_one PROTO MODE NAME LOAD-EXTRA SERVER-CMD...: one measurement; leaves $work/NAME.json
# and a line in $results. MODE is closed or open; LOAD-EXTRA is a space-separated string.
run_one() {
  local proto=$1 mode=$2 name=$3 extra=$4
  shift 4
  start_server "$work/$name.out" "$@" || return 1
  local cpu0 irq0 cpu1 irq1 extra_args
  read -ra extra_args <<< "$extra"
  cpu0=$(server_cpu_ns)
  irq0=$(ksoftirqd_ns "$server_cpus")
  client_exec "$load" --target "$SERVER_ADDR" "${load_args[@]}" --threads "$n_client" --cpus "$client_cpus" \
    "${extra_args[@]}" --duration "$seconds" --timeout-ms 2000 \
    --source "$NET_CLIENT_SOURCES" --min-success 0 --json "$work/$name.json" > "$work/$name.txt" || true
  cpu1=$(server_cpu_ns)
  irq1=$(ksoftirqd_ns "$server_cpus")
  local stats
  stats=$(stop_server)
  sed 's/^/  /' "$work/$name.txt"
  echo "  server: ${stats:-no stats line}"
  local f="$work/$name.json"
  [ -s "$f" ] || { echo "  $name: no result"; return 0; }
  local ok cpu_us
  ok=$(json_number "$f" ok)
  cpu_us=$(awk -v t=$((cpu1 - cpu0 + irq1 - irq0)) -v ok="${ok:-0}" \
    'BEGIN { if (ok > 0) printf "%.2f", t / 1e3 / ok; else print 0 }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$proto" "$mode" "${name%-*}" "${name##*-}" \
    "$(json_number "$f" ok_per_s)" "$ok" "$(json_number "$f" total errors)" "$cpu_us" \
    "$(json_number "$f" p50 latency_us)" "$(json_number "$f" p99 latency_us)" \
    "$(json_number "$f" p99_9 latency_us)" "$(json_bool "$f" client_bound)" >> "$results"
}

for proto in "${proto_list[@]}"; do
  protocol_args "$proto"
  for ((round = 1; round <= rounds; round++)); do
    for io in ${io_modes:-default}; do
      for mode in ${steering_modes:-default}; do
        name=onepassd
        variant_args=()
        if [ "$mode" != default ]; then
          name+="@$mode"
          variant_args+=(--steering "$mode")
        fi
        if [ "$io" != default ]; then
          name+="@$io"
          variant_args+=(--io "$io")
        fi
        echo
        echo "== $proto: $name ($onepassd), round $round of $rounds"
        run_one "$proto" closed "$name-$round" "--concurrency $concurrency" "$onepassd" "${server_args[@]}" \
          "${variant_args[@]}" --listen "$NET_SERVER_IP:0" --workers "$n_server" --cpus "$server_cpus"
      done
    done
    if [ "$proto" = dnssec ] && [ "$round" = 1 ]; then
      # The reference answers as many bytes as onepassd did (its answer size, prefix excluded).
      answer_bytes=$(awk -v b="$(json_number "$work/$name-1.json" bytes_received)" \
        -v n="$(json_number "$work/$name-1.json" ok)" 'BEGIN { if (n > 0) printf "%d", b / n - 2; else print 0 }')
      echo "  (reference answers $answer_bytes bytes, as onepassd did)"
      reference_args+=(--dns-answer-bytes "$answer_bytes")
    fi
    echo
    echo "== $proto: reference ($reference), round $round of $rounds"
    run_one "$proto" closed "reference-$round" "--concurrency $concurrency" \
      "$reference" "${reference_args[@]}" --listen "$NET_SERVER_IP:0" --threads "$n_server" --cpus "$server_cpus"
  done
  if [ -n "$open_loop" ]; then
    rate=$(awk -F'\t' -v p="$proto" -v f="$open_loop" '$1 == p && $2 == "closed" && $3 == "reference" { r = r " " $5 }
      END { printf "%.0f", median(r) * f }'"$AWK_MEDIAN" "$results")
    for ((round = 1; round <= rounds; round++)); do
      echo
      echo "== $proto: open loop at $rate conn/s ($open_loop x the reference's median), round $round of $rounds"
      run_one "$proto" open "onepassd-open$round" "--rate $rate" \
        "$onepassd" "${server_args[@]}" --listen "$NET_SERVER_IP:0" --workers "$n_server" --cpus "$server_cpus"
      run_one "$proto" open "reference-open$round" "--rate $rate" \
        "$reference" "${reference_args[@]}" --listen "$NET_SERVER_IP:0" --threads "$n_server" --cpus "$server_cpus"
    done
  fi
done

# The table: one row per protocol, mode and server; ratios against the reference's row.
summary="$work/summary.jsonl"
table="$work/table.txt"
notes="$work/notes.txt"
: > "$notes"
awk -F'\t' -v summary="$summary" -v cpus="$server_cpus" -v clients="$client_cpus" -v nproc="$cores" '
  function minimum(list,   a, n, i, m) { n = split(list, a, " "); m = a[1]
    for (i = 2; i <= n; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
  function maximum(list,   a, n, i, m) { n = split(list, a, " "); m = a[1]
    for (i = 2; i <= n; i++) if (a[i] + 0 > m + 0) m = a[i]; return m }
  {
    k = $1 SUBSEP $2 SUBSEP $3
    if (!(k in runs)) order[++nk] = k
    runs[k]++; rate[k] = rate[k] " " $5; sum[k] += $5; errors[k] += $7; cpu[k] = cpu[k] " " $8
    p50[k] = p50[k] " " $9; p99[k] = p99[k] " " $10; p999[k] = p999[k] " " $11
    if ($12 == "true") bound[k] = 1
  }
  END {
    printf "%-7s %-6s %-13s %9s %19s %7s %7s %7s %8s %7s %6s %6s %s\n", "proto", "mode", "server",
      "conn/s", "[min-max]", "cpu us", "p50 us", "p99 us", "p99.9 us", "errors", "ratio", "cpu x", ""
    for (i = 1; i <= nk; i++) {
      k = order[i]; split(k, f, SUBSEP)
      r = SUBSEP; ref = f[1] SUBSEP f[2] SUBSEP "reference"
      ratio = (ref in sum && sum[ref] > 0 && runs[ref] > 0) ? (sum[k] / runs[k]) / (sum[ref] / runs[ref]) : 0
      c = median(cpu[k]); cref = (ref in cpu) ? median(cpu[ref]) : 0
      cx = cref > 0 ? c / cref : 0
      printf "%-7s %-6s %-13s %9.0f %19s %7.2f %7.0f %7.0f %8.0f %7d %6.3f %6.3f %s\n", f[1], f[2], f[3],
        median(rate[k]), sprintf("[%.0f-%.0f]", minimum(rate[k]), maximum(rate[k])), c,
        median(p50[k]), median(p99[k]), median(p999[k]), errors[k], ratio, cx,
        (k in bound) ? "CLIENT-BOUND" : ""
      printf "{\"proto\": \"%s\", \"mode\": \"%s\", \"server\": \"%s\", \"runs\": %d, " \
        "\"conn_per_s\": %.1f, \"conn_per_s_min\": %.1f, \"conn_per_s_max\": %.1f, " \
        "\"cpu_us_per_conn\": %.3f, \"p50_us\": %.1f, \"p99_us\": %.1f, \"p99_9_us\": %.1f, " \
        "\"errors\": %d, \"ratio\": %.4f, \"cpu_ratio\": %.4f, \"client_bound\": %s, " \
        "\"server_cpus\": \"%s\", \"client_cpus\": \"%s\", \"nproc\": %d}\n", f[1], f[2], f[3],
        runs[k], median(rate[k]), minimum(rate[k]), maximum(rate[k]), c, median(p50[k]),
        median(p99[k]), median(p999[k]), errors[k], ratio, cx, (k in bound) ? "true" : "false",
        cpus, clients, nproc > summary
    }
  }'"$AWK_MEDIAN" "$results" | tee "$table"
echo "(conn/s: median over rounds; ratio: onepassd / reference of the mean conn/s; cpu x: of the median CPU us per connection; latencies: medians over rounds; load now:$(cut -d' ' -f1-3 /proc/loadavg))"
if grep -q true <(cut -f12 "$results"); then
  echo "note: the client was the bottleneck in at least one run: the figures are lower bounds; give the client more CPUs (--client-cpus)" | tee -a "$notes"
fi
if [ -n "$results_dir" ]; then
  echo "bench: wrote $(write_result_file "$results_dir" "${result_name:-bench-${protos//,/-}}" \
    "bench.sh: $protos, server CPUs $server_cpus, client CPUs $client_cpus, --net $net" \
    "$command_line" "$table" "$notes")"
fi
if [ -n "$json_out" ]; then
  cp "$summary" "$json_out"
  echo "bench: wrote $json_out"
fi
if [ -n "$compare" ]; then
  echo
  echo "change against $compare (ratios are the figures that travel; a drop of more than 3% is flagged):"
  printf '%-7s %-6s %-10s %15s %15s %15s %17s %s\n' proto mode server "conn/s" "ratio" "cpu us" "p99.9 us" ""
  awk -v earlier="$compare" '
    function field(line, key,   m) {
      if (match(line, "\"" key "\": \"?[^,}\"]*")) { m = substr(line, RSTART, RLENGTH); sub(/.*: "?/, "", m); return m }
      return "" }
    BEGIN { while ((getline line < earlier) > 0) { k = field(line, "proto") " " field(line, "mode") " " field(line, "server"); old[k] = line } }
    {
      k = field($0, "proto") " " field($0, "mode") " " field($0, "server")
      if (!(k in old)) { printf "%-7s %-6s %-10s (not in the earlier run)\n", field($0, "proto"), field($0, "mode"), field($0, "server"); next }
      o = old[k]; flag = ""
      r1 = field($0, "ratio"); r0 = field(o, "ratio"); c1 = field($0, "cpu_ratio"); c0 = field(o, "cpu_ratio")
      if (field($0, "server") ~ /^onepassd/ && r0 > 0 && r1 < r0 * 0.97) flag = flag " REGRESSION(conn/s ratio)"
      if (field($0, "server") ~ /^onepassd/ && c0 > 0 && c1 > c0 * 1.03) flag = flag " REGRESSION(cpu ratio)"
      printf "%-7s %-6s %-10s %6.0f->%-7.0f %6.3f->%-7.3f %6.2f->%-7.2f %7.0f->%-8.0f%s\n", field($0, "proto"),
        field($0, "mode"), field($0, "server"), field(o, "conn_per_s"), field($0, "conn_per_s"),
        r0, r1, field(o, "cpu_us_per_conn"), field($0, "cpu_us_per_conn"), field(o, "p99_9_us"),
        field($0, "p99_9_us"), flag
    }' "$summary"
fi
