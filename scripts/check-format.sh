#!/usr/bin/env bash
# Fails if a C++ file of the tree is not formatted as .clang-format says (clang-format-14,
# the version Debian 12 ships: a newer one formats some constructs differently). Prints the
# files that fail; fix them with clang-format-14 -i FILE. Build folders are not looked at:
# the files are those git tracks, or, outside a git checkout, those outside build*/.
set -euo pipefail
cd "$(dirname "$0")/.."
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cc' '*.h' '*.cpp' '*.hpp')
else
  mapfile -t files < <(find . -path './build*' -prune -o -type f \( -name '*.cc' -o -name '*.h' \
    -o -name '*.cpp' -o -name '*.hpp' \) -print | sed 's|^\./||' | sort)
fi
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue  # deleted in the work tree, not yet committed
  if ! timeout 60 clang-format-14 --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ "${#bad[@]}" -gt 0 ]; then
  printf 'not formatted (clang-format-14 -i FILE):\n' >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "format: ${#files[@]} C++ files formatted"
