#!/usr/bin/env bash
# The README's first command: installs what is needed, builds the release binaries, and runs
# the main job (scripts/demo.sh): onepassd on its embedded default data for each protocol,
# driven by the bundled load tester, printing conn/s and latency.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build build/release -j"$(nproc)" --target onepassd onepass-load onepass-reference
exec scripts/demo.sh build/release "$@"
