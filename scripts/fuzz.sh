#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer (ASan+UBSan) and runs each for N seconds
# (default 20) starting from its corpus in tests/fuzz/corpus/<target>/, as many at once as there
# are CPUs. Fails on any crash.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
cmake --preset fuzz >/dev/null
# The fuzz targets are those CMake knows (onepass_cc_fuzzer, cmake/OnepassHelpers.cmake): the
# target `fuzzers` builds them all and build/fuzz/fuzzers.tsv lists NAME, BINARY, CORPUS.
list=build/fuzz/fuzzers.tsv
if [ ! -s "$list" ]; then echo "fuzz: no fuzz targets yet"; exit 0; fi
cmake --build build/fuzz -j"$(nproc)" --target fuzzers
# One target: its run's last lines (the whole tail of a failure), printed as one block.
fuzz_one() {
  local t=$1 binary=$2 corpus=$3 work status=0 dict=()
  work=$(mktemp -d)
  cp -r "$corpus/." "$work/" 2>/dev/null || true
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  "$binary" "${dict[@]}" -max_total_time="$seconds" -max_len=4096 \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$work" > "$work.log" 2>&1 </dev/null ||
    status=$?
  {
    flock 9
    echo "fuzz: $t for ${seconds}s"
    if [ "$status" = 0 ]; then tail -n 3 "$work.log"; else tail -n 60 "$work.log"; fi
  } 9> "$lock"
  rm -rf "$work" "$work.log"
  echo "$status" > "$statuses/$t"
}
# The targets run side by side, one per CPU (each fuzzer is single-threaded): the same
# seconds per target in half the time on two cores.
lock=$(mktemp)
statuses=$(mktemp -d)
parallel=$(nproc)
targets=0
while IFS=$'\t' read -r t binary corpus; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  fuzz_one "$t" "$binary" "$corpus" &
  targets=$((targets + 1))
done <"$list"
wait
# Each target left its exit status; a missing one failed too.
failed=$(cat "$statuses"/* 2>/dev/null | grep -cvx 0 || true)
done_count=$(find "$statuses" -type f | wc -l)
rm -rf "$lock" "$statuses"
if [ "$failed" != 0 ] || [ "$done_count" != "$targets" ]; then
  echo "fuzz: $failed of $targets targets failed, $((targets - done_count)) did not finish (output above)" >&2
  exit 1
fi
