#!/usr/bin/env bats
# scripts/check-docs.py on a small tree of its own: it passes when every path and flag a
# document names exists, and names the stale one when a file, a flag or a section is gone.
# shellcheck disable=SC2016  # the backticks are Markdown, written as they are

setup() {
  check="$BATS_TEST_DIRNAME/../../scripts/check-docs.py"
  root=$(mktemp -d)
  mkdir -p "$root/server" "$root/docs" "$root/loadtest/results"
  printf 'ABSL_FLAG(int, real_flag, 1, "a flag");\n' > "$root/server/main.cc"
  printf 'case $1 in\n  --rounds) rounds=$2; shift 2 ;;\nesac\n' > "$root/loadtest/bench.sh"
  cat > "$root/README.md" <<'DOC'
# demo
`server/main.cc` takes `--real-flag` (also `--real_flag=2`); `loadtest/bench.sh --rounds 3`.
    onepassd --real-flag 1 && cat my.zone
DOC
  cat > "$root/server/README.md" <<'DOC'
| `main.cc` | the flags |
DOC
}

teardown() { rm -rf "$root"; }

@test "passes when every named path and flag exists" {
  run "$check" --root "$root"
  [ "$status" -eq 0 ]
  [[ "$output" == *"every path, flag and section"* ]]
}

@test "a stale path is named with its document and line" {
  echo 'See `server/gone.cc` and docs/missing.md.' >> "$root/README.md"
  run "$check" --root "$root"
  [ "$status" -eq 1 ]
  [[ "$output" == *"README.md:4: no such file: server/gone.cc"* ]]
  [[ "$output" == *"README.md:4: no such file: docs/missing.md"* ]]
}

@test "a stale file name in a folder README is caught" {
  echo '| `gone.cc` | was here |' >> "$root/server/README.md"
  run "$check" --root "$root"
  [ "$status" -eq 1 ]
  [[ "$output" == *"server/README.md:2: no such file: gone.cc"* ]]
}

@test "a stale flag is named with its document and line" {
  echo 'Run it with `--stale-flag 5`.' >> "$root/docs/design.md"
  run "$check" --root "$root"
  [ "$status" -eq 1 ]
  [[ "$output" == *"docs/design.md:1: no such flag: --stale-flag"* ]]
}

@test "a section named in quotes after a document must be one of its headings" {
  printf '# Design\n## Limits, and why\n' > "$root/docs/design.md"
  echo 'See docs/design.md "Limits" and `docs/design.md` "Reloads".' >> "$root/README.md"
  run "$check" --root "$root"
  [ "$status" -eq 1 ]
  [[ "$output" == *'README.md:4: no such section: docs/design.md "Reloads"'* ]]
  [[ "$output" != *'"Limits"'* ]]
}

@test "a section a comment or a help text points to is checked too" {
  printf '# Design\n## Limits, and why\n' > "$root/docs/design.md"
  printf '// docs/design.md "Limits"\nABSL_FLAG(int, x, 1, "docs/design.md \\"Gone\\"");\n' > "$root/server/x.cc"
  run "$check" --root "$root"
  [ "$status" -eq 1 ]
  [[ "$output" == *'server/x.cc:2: no such section: docs/design.md "Gone"'* ]]
  [[ "$output" != *'x.cc:1'* ]]
}

@test "a section split over two lines, in a document or a comment, is checked" {
  printf '# Design\n## Limits, and why\n' > "$root/docs/design.md"
  printf 'See docs/design.md\n"Limits" and `docs/design.md`\n"Gone\naway".\n' >> "$root/README.md"
  printf '// docs/design.md "Limits,\n// and why"; docs/design.md\n// "Gone"\n' > "$root/server/x.cc"
  printf 'const char* k = "docs/design.md "\n    "\\"Gone too\\"";\n' >> "$root/server/x.cc"
  run "$check" --root "$root"
  [ "$status" -eq 1 ]
  [[ "$output" == *'README.md:5: no such section: docs/design.md "Gone away"'* ]]
  [[ "$output" == *'server/x.cc:2: no such section: docs/design.md "Gone"'* ]]
  [[ "$output" == *'server/x.cc:4: no such section: docs/design.md "Gone too"'* ]]
  [[ "$output" != *'"Limits'* ]]
}

@test "a section after a §, quoted or not, and across a line break" {
  printf '# Design\n## Limits, and why\n' > "$root/docs/design.md"
  printf 'See docs/design.md § Limits, and docs/design.md § "Limits".\n' >> "$root/README.md"
  printf 'See docs/operations.md\n§ Gone for more; docs/design.md § Limitless.\n' >> "$root/README.md"
  printf '# Running\n' > "$root/docs/operations.md"
  run "$check" --root "$root"
  [ "$status" -eq 1 ]
  [[ "$output" == *'README.md:5: no such section: docs/operations.md "Gone for more"'* ]]
  [[ "$output" == *'README.md:6: no such section: docs/design.md "Limitless"'* ]]
  [[ "$output" != *'"Limits"'* ]]
}

@test "a code block's comment line is no heading" {
  printf '# Design\n```\n# run it\n```\n' > "$root/docs/design.md"
  echo 'See docs/design.md "run it".' >> "$root/README.md"
  run "$check" --root "$root"
  [ "$status" -eq 1 ]
  [[ "$output" == *'README.md:4: no such section: docs/design.md "run it"'* ]]
}

@test "a backticked path broken across a line is one path" {
  printf 'Read `server/\nmain.cc` and `server/\ngone.cc`.\n' >> "$root/README.md"
  run "$check" --root "$root"
  [ "$status" -eq 1 ]
  [[ "$output" == *"README.md:5: no such file: server/gone.cc"* ]]
  [[ "$output" != *"main.cc"* ]]
}

@test "root-level files: every *.md at the root is a document, a root file it names must exist" {
  touch "$root/CMakeLists.txt"
  printf '# Notes\nSee CMakeLists.txt, README.md and CHANGELOG.md; `.clang-format`, not a `.key`.\n' \
    > "$root/NOTES.md"
  run "$check" --root "$root"
  [ "$status" -eq 1 ]
  [[ "$output" == *"NOTES.md:2: no such file: CHANGELOG.md"* ]]
  [[ "$output" == *"NOTES.md:2: no such file: .clang-format"* ]]
  [[ "$output" != *"CMakeLists.txt"* ]]
  [[ "$output" != *".key"* ]]
}

@test "a root-level build file's comments are checked for sections" {
  printf '# Design\n## Limits, and why\n' > "$root/docs/design.md"
  printf '# (docs/design.md "Limits") and (docs/design.md\n# "The io_uring worker")\n' \
    > "$root/CMakeLists.txt"
  run "$check" --root "$root"
  [ "$status" -eq 1 ]
  [[ "$output" == *'CMakeLists.txt:1: no such section: docs/design.md "The io_uring worker"'* ]]
}

@test "with binaries, flags come from their --help output" {
  bin="$root/build/x"
  mkdir -p "$bin/server" "$bin/loadtest"
  for b in server/onepassd loadtest/onepass-load loadtest/onepass-reference; do
    printf '#!/bin/sh\necho "  --from-help (default 1)"\n' > "$bin/$b"
    chmod +x "$bin/$b"
  done
  echo 'Also `--from-help`.' >> "$root/README.md"
  run "$check" --root "$root" --bin "$bin"
  # --real-flag is defined in the source but not in the binaries' --help: stale.
  [ "$status" -eq 1 ]
  [[ "$output" == *"no such flag: --real-flag"* ]]
  [[ "$output" != *"--from-help"* ]]
}

@test "result files are records and are not checked" {
  echo 'loadtest/bench.sh --old-flag' > "$root/loadtest/results/2026-01-01-abc1234-bench.md"
  run "$check" --root "$root"
  [ "$status" -eq 0 ]
}
