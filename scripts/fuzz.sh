#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer (ASan+UBSan) and runs each for N seconds
# (default 20) starting from its corpus in tests/fuzz/corpus/<target>/. Fails on any crash.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
cmake --preset fuzz >/dev/null
# The fuzz targets are those CMake knows (onepass_cc_fuzzer, cmake/OnepassHelpers.cmake): the
# target `fuzzers` builds them all and build/fuzz/fuzzers.tsv lists NAME, BINARY, CORPUS.
list=build/fuzz/fuzzers.tsv
if [ ! -s "$list" ]; then echo "fuzz: no fuzz targets yet"; exit 0; fi
cmake --build build/fuzz -j"$(nproc)" --target fuzzers
while IFS=$'\t' read -r t binary corpus; do
  work=$(mktemp -d)
  cp -r "$corpus/." "$work/" 2>/dev/null || true
  echo "fuzz: $t for ${seconds}s"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  "$binary" "${dict[@]}" -max_total_time="$seconds" -max_len=4096 \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$work" 2>&1 </dev/null | tail -n 3
  rm -rf "$work"
done <"$list"
