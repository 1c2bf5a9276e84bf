#!/usr/bin/env bash
# multi-load.sh: onepass-load from several client hosts (network namespaces
# here, or any command prefix such as ssh) at once against one target, and
# their JSON results merged into one report, so a multi-host run reads like
# a single one.
#
#   loadtest/multi-load.sh run --netns cli1 --netns cli2 [--via 'ssh load3'] \
#       --out merged.json -- build/release/loadtest/onepass-load \
#       --target 192.0.2.53:53 --proto dns --qname www.example.com --duration 10 ...
#   loadtest/multi-load.sh merge --out merged.json a.json b.json ...
#
# run: starts the same onepass-load command once per client, all at once,
#   each with --json (its own file) and its table in a log, waits for all
#   (each bounded by --timeout-s), then merges. A client: --netns NS
#   (ip netns exec NS ...) or --via 'PREFIX' (PREFIX ... runs the command; its
#   --json path must be readable here afterwards, e.g. a shared directory).
#   Give each client its own --source range if they share an address space.
# merge: merges JSON files written by onepass-load --json on separate hosts.
#
# Options:
#   --out FILE       the merged JSON (default: multi-load.json)
#   --dir DIR        run: where each client's JSON and log go (default: a new
#                    temporary directory, kept and named)
#   --timeout-s S    run: kill a client still running after S seconds (default 600)
#   --dry-run        run: print the commands, run nothing
#   -h, --help       this text
#
# The merged report: counts, errors by kind and bytes are sums; the rate is
# the sum of the clients' rates (they run at the same time); latency count,
# mean and max are exact; p50..p99.9 are the largest of the clients'
# percentiles, an upper bound (percentiles of separate histograms do not
# merge exactly; a client's own figures are listed under "clients").
# Exits 1 when any client failed to run or reported an error.
set -euo pipefail
# shellcheck source=loadtest/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"

PROG=multi-load.sh
die() {
  printf '%s: %s\n' "$PROG" "$*" >&2
  exit 2
}
usage() {
  header_usage "$0"
  exit "${1:-0}"
}

merge() { # merge OUT FILE... (prints the table, writes OUT)
  python3 - "$@" <<'PY'
import json, sys

out, files = sys.argv[1], sys.argv[2:]
runs = []
for f in files:
    with open(f) as fh:
        d = json.load(fh)
    if d.get("tool") != "onepass-load" or "completed" not in d:
        sys.exit(f"{f}: not a single onepass-load run (a --ramp result does not merge)")
    runs.append((f, d))

def total(key):
    return sum(d[key] for _, d in runs)

targets = sorted({d["settings"]["target"] for _, d in runs})
completed = total("completed")
ok = total("ok")
errors = {k: sum(d["errors"][k] for _, d in runs) for k in runs[0][1]["errors"]}
reasons = {}
for _, d in runs:
    for k, v in d["mismatch_reasons"].items():
        reasons[k] = reasons.get(k, 0) + v

def latency(key):
    parts = [d[key] for _, d in runs]
    count = sum(p["count"] for p in parts)
    merged = {"count": count}
    for q in ("p50", "p90", "p99", "p99_9"):
        merged[q] = max(p[q] for p in parts)
    merged["max"] = max(p["max"] for p in parts)
    merged["mean"] = round(sum(p["mean"] * p["count"] for p in parts) / count, 1) if count else 0.0
    merged["percentiles"] = "upper bound: the largest client's value"
    return merged

merged = {
    "tool": "onepass-load-merged",
    "targets": targets,
    "clients": [
        {"file": f, "settings": d["settings"], "wall_s": d["wall_s"],
         "achieved_conn_per_s": d["achieved_conn_per_s"], "completed": d["completed"], "ok": d["ok"],
         "errors_total": d["errors"]["total"], "latency_us": d["latency_us"],
         "client_bound": d["client"]["client_bound"], "notes": d["client"]["notes"]}
        for f, d in runs
    ],
    "requested_rate": total("requested_rate"),
    "concurrency": total("concurrency"),
    "wall_s": max(d["wall_s"] for _, d in runs),
    "achieved_conn_per_s": round(total("achieved_conn_per_s"), 1),
    "ok_per_s": round(total("ok_per_s"), 1),
    "started": total("started"),
    "completed": completed,
    "ok": ok,
    "success_ratio": round(ok / completed, 6) if completed else 1.0,
    "errors": errors,
    "mismatch_reasons": reasons,
    "mismatch_samples": [s for _, d in runs for s in d["mismatch_samples"]][:10],
    "latency_us": latency("latency_us"),
    "start_lag_us": latency("start_lag_us"),
    "late_starts": total("late_starts"),
    "unstarted": total("unstarted"),
    "inflight_cap_waits": total("inflight_cap_waits"),
    "bytes_sent": total("bytes_sent"),
    "bytes_received": total("bytes_received"),
    "client_bound": any(d["client"]["client_bound"] for _, d in runs),
}
with open(out, "w") as fh:
    json.dump(merged, fh, indent=1)
    fh.write("\n")

fmt = "{:<28} {:>10} {:>10} {:>8} {:>9} {:>9} {:>9}"
print(fmt.format("client", "conn/s", "ok", "errors", "p50 us", "p99 us", "max us"))
for f, d in runs:
    l = d["latency_us"]
    name = f.rsplit("/", 1)[-1]
    print(fmt.format(name[:28], f"{d['achieved_conn_per_s']:.0f}", d["ok"], d["errors"]["total"],
                     f"{l['p50']:.0f}", f"{l['p99']:.0f}", f"{l['max']:.0f}")
          + ("  client-bound" if d["client"]["client_bound"] else ""))
l = merged["latency_us"]
print(fmt.format(f"all {len(runs)} clients", f"{merged['achieved_conn_per_s']:.0f}", ok, errors["total"],
                 f"<={l['p50']:.0f}", f"<={l['p99']:.0f}", f"{l['max']:.0f}"))
if len(targets) > 1:
    print(f"note: the clients had different targets: {', '.join(targets)}")
if errors["total"]:
    print("errors by kind: " + ", ".join(f"{k}={v}" for k, v in errors.items() if k != "total" and v))
print(f"merged report: {out}")
sys.exit(1 if errors["total"] else 0)
PY
}

cmd=${1:-}
case $cmd in
  run | merge) shift ;;
  -h | --help) usage 0 ;;
  *) usage 2 ;;
esac

out=multi-load.json dir="" timeout_s=600 dry_run=0
clients=()
while [ $# -gt 0 ]; do
  case $1 in
    --netns) clients+=("ip netns exec ${2:?--netns needs a name}"); shift ;;
    --via) clients+=("${2:?--via needs a command prefix}"); shift ;;
    --out) out=${2:?--out needs a file}; shift ;;
    --dir) dir=${2:?--dir needs a directory}; shift ;;
    --timeout-s) timeout_s=${2:?}; shift ;;
    --dry-run) dry_run=1 ;;
    -h | --help) usage 0 ;;
    --) shift; break ;;
    *) if [ "$cmd" = merge ]; then break; fi; die "unknown argument '$1' (see --help)" ;;
  esac
  shift
done
command -v python3 >/dev/null || die "python3 not found: install it with 'apt-get install python3'"

if [ "$cmd" = merge ]; then
  [ $# -gt 0 ] || die "merge: give the JSON files to merge"
  merge "$out" "$@"
  exit
fi

[ ${#clients[@]} -gt 0 ] || die "run: give at least one client (--netns NS or --via 'PREFIX')"
[ $# -gt 0 ] || die "run: give the onepass-load command after --"
[[ $timeout_s =~ ^[0-9]+$ ]] || die "--timeout-s must be a number of seconds"
for a in "$@"; do
  [ "$a" != --json ] || die "run: leave --json out of the command: each client gets its own"
done
if [ "$dry_run" = 1 ]; then
  dir=${dir:-/tmp/multi-load.XXXXXX}
elif [ -z "$dir" ]; then
  dir=$(mktemp -d /tmp/multi-load.XXXXXX)
else
  mkdir -p "$dir"
fi

pids=() files=()
for i in "${!clients[@]}"; do
  json=$dir/client-$((i + 1)).json
  files+=("$json")
  # shellcheck disable=SC2206 # a prefix is words, split as the shell would
  prefix=(${clients[i]})
  if [ "$dry_run" = 1 ]; then
    printf 'client %d: %s timeout %s %s --json %s\n' $((i + 1)) "${clients[i]}" "$timeout_s" "$*" "$json"
    continue
  fi
  rm -f "$json"
  "${prefix[@]}" timeout "$timeout_s" "$@" --json "$json" >"$dir/client-$((i + 1)).log" 2>&1 &
  pids+=($!)
done
if [ "$dry_run" = 1 ]; then
  echo "dry run: nothing started; the merged report would go to $out"
  exit 0
fi
echo "started ${#pids[@]} clients; their JSON and logs in $dir"
failed=0
for i in "${!pids[@]}"; do
  rc=0
  wait "${pids[i]}" || rc=$?
  if [ ! -s "${files[i]}" ]; then
    echo "client $((i + 1)) (${clients[i]}) exited $rc and wrote no JSON; its log:"
    sed 's/^/  | /' "$dir/client-$((i + 1)).log"
    failed=1
  elif [ "$rc" -ne 0 ]; then
    echo "client $((i + 1)) (${clients[i]}) exited $rc (its errors are in the report)"
  fi
done
if [ "$failed" = 1 ]; then
  echo "$PROG: not every client produced a result: no merged report" >&2
  exit 1
fi
merge "$out" "${files[@]}"
