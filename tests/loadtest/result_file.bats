#!/usr/bin/env bats
# shellcheck source-path=SCRIPTDIR/../..
# loadtest/bench_lib.sh write_result_file: the dated result file a benchmark writes
# (loadtest/README.md "Results").

setup() {
  # shellcheck source=loadtest/bench_lib.sh
  source "$BATS_TEST_DIRNAME/../../loadtest/bench_lib.sh"
  dir=$(mktemp -d)
  printf 'proto mode server conn/s\ndns closed onepassd 100\n' > "$dir/table.txt"
  printf 'note: the client was the bottleneck\n' > "$dir/notes.txt"
}

teardown() { rm -rf "$dir"; }

@test "named DATE-COMMIT-NAME.md, with the date, commit, machine, command, table and notes" {
  run write_result_file "$dir/out" bench-dns "bench.sh: dns" "loadtest/bench.sh --proto dns" \
    "$dir/table.txt" "$dir/notes.txt"
  [ "$status" -eq 0 ]
  file=$output
  commit=$(tree_commit)
  [ "$file" = "$dir/out/$(date -u +%F)-$commit-bench-dns.md" ]
  [[ "$commit" =~ ^([0-9a-f]{7,}(-dirty)?|nogit)$ ]]
  grep -qx '# bench.sh: dns' "$file"
  grep -qx -e "- commit: $commit" "$file"
  grep -q -e '^- machine: .*nproc [0-9]' "$file"
  grep -qx '    loadtest/bench.sh --proto dns' "$file"
  grep -qx '    dns closed onepassd 100' "$file"
  grep -qx 'note: the client was the bottleneck' "$file"
}

@test "a markdown table stays a table; ONEPASS_COMMIT names a copy without .git" {
  printf '| server | conn/s |\n|---|---|\n| zone | 100 |\n' > "$dir/table.md"
  ONEPASS_COMMIT=abc1234 run write_result_file "$dir/out" frontend "frontend" "cmd" "$dir/table.md"
  [ "$status" -eq 0 ]
  [ "$output" = "$dir/out/$(date -u +%F)-abc1234-frontend.md" ]
  grep -qx '| zone | 100 |' "$output"
  grep -qx -e '- commit: abc1234' "$output"
}

@test "command_as_run names the script as loadtest/NAME with its arguments" {
  run command_as_run /somewhere/loadtest/bench.sh --proto dns --rounds 3
  [ "$status" -eq 0 ]
  [[ "$output" == *"loadtest/bench.sh --proto dns --rounds 3" ]]
}
