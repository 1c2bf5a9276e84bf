#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer (ASan+UBSan) and runs each for N seconds
# (default 20) starting from its corpus in tests/fuzz/corpus/<target>/. Fails on any crash.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
cmake --preset fuzz >/dev/null
targets=$(grep -rhoE "onepass_cc_fuzzer\(NAME [a-z0-9_]+" tests/fuzz | sed "s/.*NAME //" | sort -u)
if [ -z "$targets" ]; then echo "fuzz: no fuzz targets yet"; exit 0; fi
# shellcheck disable=SC2086
cmake --build build/fuzz -j"$(nproc)" --target $targets
for t in $targets; do
  work=$(mktemp -d)
  cp -r "tests/fuzz/corpus/$t/." "$work/" 2>/dev/null || true
  echo "fuzz: $t for ${seconds}s"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  "$(find build/fuzz/tests/fuzz -type f -name "$t" -perm -u+x | head -n1)" "${dict[@]}" -max_total_time="$seconds" -max_len=4096 \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$work" 2>&1 | tail -n 3
  rm -rf "$work"
done
