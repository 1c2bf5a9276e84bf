# shellcheck shell=bash
# The one writer behind plan and apply, and the saved state behind rollback.
#
# plan and apply run the same code; DRY_RUN=1 makes every change_* function
# print what it would do and touch nothing. With DRY_RUN=0 each change first
# saves the original value in STATE_DIR (only the first time: a second apply
# keeps the oldest original), then writes. rollback replays the saved values.
#
# STATE_DIR layout:
#   manifest        one line per saved item: KIND<TAB>TARGET<TAB>ID
#   values/ID       the original value (whole file content for kind etc;
#                   ID "absent" means the file did not exist)
#   written/ID      sha256 of what apply wrote to an /etc file (conflict check)
#   created         when the first apply ran
# Kinds: file (a /sys or /proc value), etc (a whole file: under /etc, or one
# that install.sh put in place), dir (a directory apply created), and
# command kinds (channels, indir, flowhash, service) restored by a callback.

DRY_RUN=${DRY_RUN:-0}
STATE_DIR=""
CHANGE_FAILURES=0
CHANGE_COUNT=0

state_open() {
  STATE_DIR=$1
  if [ "$DRY_RUN" -eq 1 ]; then return 0; fi
  mkdir -p "$STATE_DIR/values" "$STATE_DIR/written" || die "cannot create state directory $(shown "$STATE_DIR")"
  if [ ! -f "$STATE_DIR/created" ]; then
    date -u '+%Y-%m-%dT%H:%M:%SZ' >"$STATE_DIR/created"
    : >"$STATE_DIR/manifest"
  else
    say "note: adding to the state saved at $(cat "$STATE_DIR/created") (its originals are kept)"
  fi
}

state_has() {
  local kind=$1 target=$2
  [ -f "$STATE_DIR/manifest" ] && awk -F'\t' -v k="$kind" -v t="$target" \
    '$1 == k && $2 == t { found = 1 } END { exit !found }' "$STATE_DIR/manifest"
}

# state_save KIND TARGET VALUE: remembers VALUE unless TARGET is already saved.
state_save() {
  local kind=$1 target=$2 value=$3 id
  [ "$DRY_RUN" -eq 1 ] && return 0
  state_has "$kind" "$target" && return 0
  id=$(($(wc -l <"$STATE_DIR/manifest") + 1))
  printf '%s' "$value" >"$STATE_DIR/values/$id"
  printf '%s\t%s\t%s\n' "$kind" "$target" "$id" >>"$STATE_DIR/manifest"
}

# state_save_etc PATH: keeps a copy of the whole file (or notes it was absent).
state_save_etc() {
  local path=$1 id
  [ "$DRY_RUN" -eq 1 ] && return 0
  state_has etc "$path" && return 0
  if [ -e "$path" ]; then
    id=$(($(wc -l <"$STATE_DIR/manifest") + 1))
    cp -p "$path" "$STATE_DIR/values/$id"
  else
    id=absent
  fi
  printf '%s\t%s\t%s\n' etc "$path" "$id" >>"$STATE_DIR/manifest"
}

# Comparison forms, so "00000001" and "1" or "0-1" and "0,1" count as equal.
normalize() {
  local how=$1 value=$2 cpus
  case $how in
    mask)
      cpus=$(cpus_from_mask "$value") || cpus=$value
      printf '%s' "$cpus"
      ;;
    list)
      cpus=$(cpulist_expand "$value") || cpus=$value
      printf '%s' "$(tr ' ' '\n' <<<"$cpus" | sort -n | tr '\n' ' ')"
      ;;
    *) printf '%s' "$value" | tr -s '[:space:]' ' ' | sed 's/^ //; s/ $//' ;;
  esac
}

# change_file PATH NEW HOW: one kernel value (sysfs, procfs). HOW: mask|list|text.
change_file() {
  local path=$1 new=$2 how=$3 cur
  if [ ! -e "$path" ]; then
    warn "$(shown "$path") does not exist: skipped"
    return 0
  fi
  if ! cur=$(cat "$path" 2>/dev/null); then
    say "  skip   $(shown "$path"): the kernel refuses to read it (XPS on a single-queue device does that)"
    return 0
  fi
  cur=$(read_value "$path")
  if [ "$(normalize "$how" "$cur")" = "$(normalize "$how" "$new")" ]; then
    say "  keep   $(shown "$path") = $cur"
    return 0
  fi
  say "  write  $(shown "$path") = $new   (was $cur)"
  CHANGE_COUNT=$((CHANGE_COUNT + 1))
  [ "$DRY_RUN" -eq 1 ] && return 0
  state_save file "$path" "$cur"
  if ! { printf '%s\n' "$new" >"$path"; } 2>/dev/null; then
    loud "the kernel refused $(shown "$path") = $new (kept $cur)"
    CHANGE_FAILURES=$((CHANGE_FAILURES + 1))
  fi
}

# change_etc PATH CONTENT_FILE: replaces a whole file under /etc; shows the diff.
change_etc() {
  local path=$1 content=$2 hash
  if [ -e "$path" ] && cmp -s "$path" "$content"; then
    say "  keep   $(shown "$path") (already as planned)"
    return 0
  fi
  say "  write  $(shown "$path"):"
  if [ -e "$path" ]; then
    diff -u "$path" "$content" | tail -n +3 | sed 's/^/           /' || true
  else
    sed 's/^/           + /' "$content"
  fi
  CHANGE_COUNT=$((CHANGE_COUNT + 1))
  [ "$DRY_RUN" -eq 1 ] && return 0
  state_save_etc "$path"
  ensure_dir "$(dirname "$path")"
  if cp "$content" "$path.onepass-new" && mv "$path.onepass-new" "$path"; then
    chmod 0644 "$path"
    hash=$(sha256sum <"$path" | cut -d' ' -f1)
    printf '%s\n' "$hash" >"$STATE_DIR/written/$(etc_id "$path")"
  else
    loud "could not write $(shown "$path")"
    CHANGE_FAILURES=$((CHANGE_FAILURES + 1))
  fi
}

# install_file SRC DEST MODE: like change_etc for any file (binaries too):
# prints one line instead of a diff.
install_file() {
  local src=$1 dest=$2 mode=$3 hash
  if [ -e "$dest" ] && cmp -s "$src" "$dest"; then
    say "  keep   $(shown "$dest") (same content)"
    return 0
  fi
  if [ -e "$dest" ]; then
    say "  write  $(shown "$dest") (replaces the one there: saved for rollback)"
  else
    say "  write  $(shown "$dest")"
  fi
  CHANGE_COUNT=$((CHANGE_COUNT + 1))
  [ "$DRY_RUN" -eq 1 ] && return 0
  state_save_etc "$dest"
  ensure_dir "$(dirname "$dest")"
  if cp "$src" "$dest.onepass-new" && chmod "$mode" "$dest.onepass-new" && mv "$dest.onepass-new" "$dest"; then
    hash=$(sha256sum <"$dest" | cut -d' ' -f1)
    printf '%s\n' "$hash" >"$STATE_DIR/written/$(etc_id "$dest")"
  else
    loud "could not write $(shown "$dest")"
    CHANGE_FAILURES=$((CHANGE_FAILURES + 1))
  fi
}

# Creates DIR, remembering the topmost directory it had to create, which
# rollback removes again once it is empty.
ensure_dir() {
  local dir=$1 top=""
  while [ ! -d "$dir" ]; do
    top=$dir
    dir=$(dirname "$dir")
  done
  [ -n "$top" ] || return 0
  state_save dir "$top" ""
  mkdir -p "$1"
}

# The manifest id of a saved /etc file (its content file, or "absent").
etc_id() {
  awk -F'\t' -v t="$1" '$1 == "etc" && $2 == t { id = $3 } END { print id }' "$STATE_DIR/manifest" |
    sed 's/^absent$/absent-'"$(printf '%s' "$1" | sha256sum | cut -c1-12)"'/'
}

# change_cmd KIND TARGET ORIGINAL DESCRIPTION -- COMMAND...: a change made by a
# tool (ethtool, systemctl); ORIGINAL is what the rollback callback gets back.
change_cmd() {
  local kind=$1 target=$2 original=$3 description=$4
  shift 5
  say "  run    $description"
  CHANGE_COUNT=$((CHANGE_COUNT + 1))
  [ "$DRY_RUN" -eq 1 ] && return 0
  state_save "$kind" "$target" "$original"
  if ! "$@"; then
    loud "failed: $description"
    CHANGE_FAILURES=$((CHANGE_FAILURES + 1))
    return 1
  fi
}

# Calls RESTORE_FN KIND TARGET VALUE_FILE for each saved item of the kinds given.
restore_kinds() {
  local restore_fn=$1 k kind target id failures=0
  shift
  for k in "$@"; do
    while IFS=$'\t' read -r kind target id; do
      [ "$kind" = "$k" ] || continue
      "$restore_fn" "$kind" "$target" "$STATE_DIR/values/$id" || failures=$((failures + 1))
    done <"$STATE_DIR/manifest"
  done
  return "$failures"
}

# state_rollback RESTORE_FN EARLY_KINDS LATE_KINDS: restores the command kinds
# in EARLY_KINDS first, in that order (through RESTORE_FN KIND TARGET
# VALUE_FILE), then every kernel value, then the /etc files, then LATE_KINDS
# (services that must reread /etc). Removes the state when all was restored.
state_rollback() {
  local restore_fn=$1 early=$2 late=$3 kind target id failures=0 cur_hash
  [ -f "$STATE_DIR/manifest" ] || die "nothing to roll back: no saved state in $(shown "$STATE_DIR")"
  say "rolling back the changes saved at $(cat "$STATE_DIR/created" 2>/dev/null || echo '?')"
  # shellcheck disable=SC2086 # kinds are single words
  restore_kinds "$restore_fn" $early || failures=$((failures + $?))
  while IFS=$'\t' read -r kind target id; do
    [ "$kind" = file ] || continue
    if [ ! -e "$target" ]; then
      warn "$(shown "$target") no longer exists: not restored"
      failures=$((failures + 1))
      continue
    fi
    say "  restore $(shown "$target") = $(cat "$STATE_DIR/values/$id")"
    [ "$DRY_RUN" -eq 1 ] && continue
    if ! { printf '%s\n' "$(cat "$STATE_DIR/values/$id")" >"$target"; } 2>/dev/null; then
      loud "the kernel refused $(shown "$target") = $(cat "$STATE_DIR/values/$id")"
      failures=$((failures + 1))
    fi
  done <"$STATE_DIR/manifest"
  while IFS=$'\t' read -r kind target id; do
    [ "$kind" = etc ] || continue
    local wid=$id
    [ "$id" = absent ] && wid=$(etc_id "$target")
    if [ -e "$target" ] && [ -f "$STATE_DIR/written/$wid" ]; then
      cur_hash=$(sha256sum <"$target" | cut -d' ' -f1)
      if [ "$cur_hash" != "$(cat "$STATE_DIR/written/$wid")" ]; then
        loud "$(shown "$target") was edited after apply: left as it is; the original is in $(shown "$STATE_DIR/values/$id")"
        failures=$((failures + 1))
        continue
      fi
    fi
    if [ "$id" = absent ]; then
      say "  remove $(shown "$target") (it did not exist before)"
      [ "$DRY_RUN" -eq 1 ] || rm -f "$target"
    else
      say "  restore $(shown "$target") (original content)"
      [ "$DRY_RUN" -eq 1 ] || cp -p "$STATE_DIR/values/$id" "$target"
    fi
  done <"$STATE_DIR/manifest"
  while IFS=$'\t' read -r kind target id; do
    [ "$kind" = dir ] || continue
    say "  remove $(shown "$target")/ (created by apply, if empty)"
    [ "$DRY_RUN" -eq 1 ] || find "$target" -depth -type d -empty -delete 2>/dev/null || true
    [ ! -e "$target" ] || [ "$DRY_RUN" -eq 1 ] || warn "$(shown "$target") is not empty: kept"
  done < <(tac "$STATE_DIR/manifest")
  # shellcheck disable=SC2086 # kinds are single words
  restore_kinds "$restore_fn" $late || failures=$((failures + $?))
  if [ "$DRY_RUN" -eq 1 ]; then
    say "dry run: nothing was changed"
  elif [ "$failures" -eq 0 ]; then
    rm -rf "$STATE_DIR"
    rmdir "$(dirname "$STATE_DIR")" 2>/dev/null || true
    say "rollback complete"
  else
    die "$failures item(s) could not be restored; the saved state is kept in $(shown "$STATE_DIR")"
  fi
}
