# shellcheck shell=bash disable=SC2034 # globals here are read by the scripts that source this file
# Shared by onepass-rss and onepass-sysctl: where the system lives (--sysroot),
# messages, required tools, CPU lists ("0-3,8") and the kernel's hex CPU masks.
#
# Every path the scripts read or write goes through SYS, PROC, ETC or a state
# directory, so the tests can point them at a fake tree (tests/deploy/).

PROG=${PROG:-onepass}
SYSROOT=""   # prefix for /sys, /proc, /etc and /var/lib; "" is the real system
SYS=/sys
PROC=/proc
ETC=/etc
VARLIB=/var/lib

# Call after option parsing: --sysroot moves everything, --etc-root only /etc.
set_roots() {
  local sysroot=$1 etc_root=$2
  SYSROOT=${sysroot%/}
  SYS=$SYSROOT/sys
  PROC=$SYSROOT/proc
  VARLIB=$SYSROOT/var/lib
  if [ -n "$etc_root" ]; then ETC=${etc_root%/}; else ETC=$SYSROOT/etc; fi
}

# The path as the operator knows it (without the test prefix), for messages.
shown() {
  local p=$1
  if [ -n "$SYSROOT" ]; then p=${p#"$SYSROOT"}; fi
  printf '%s' "$p"
}

say() { printf '%s\n' "$*"; }
warn() { printf '%s: warning: %s\n' "$PROG" "$*" >&2; }
die() {
  printf '%s: %s\n' "$PROG" "$*" >&2
  exit 1
}
# For changes an operator must not miss (stopping irqbalance, refused writes).
loud() {
  printf '%s: !!! %s\n' "$PROG" "$*" >&2
}

# require_tool NAME PACKAGE [PATH]: one line saying what is missing and how to get it.
require_tool() {
  local name=$1 package=$2 path=${3:-$1}
  if ! command -v "$path" >/dev/null 2>&1; then
    die "$name not found: install it with 'apt-get install $package'"
  fi
}

# Applying changes the kernel and /etc: root only, unless a test tree is used.
require_root_to_change() {
  local what=$1
  if [ -z "$SYSROOT" ] && [ "$(id -u)" -ne 0 ]; then
    die "$what changes kernel settings: run it as root (sudo), or use plan/--dry-run to see what it would do"
  fi
}

# read_value FILE: the file's content on one line ("" if unreadable).
read_value() {
  local v=""
  if [ -r "$1" ]; then v=$(tr '\n' ' ' <"$1" 2>/dev/null) || v=""; fi
  v=${v%" "}
  printf '%s' "$v"
}

# cpulist_expand "0-3,8" -> "0 1 2 3 8" (order kept, duplicates dropped).
# Returns 1 on anything that is not a CPU list.
cpulist_expand() {
  local text=$1 item lo hi c out="" seen=" "
  text=${text//[[:space:]]/}
  [ -n "$text" ] || return 1
  local IFS=,
  for item in $text; do
    if [[ $item =~ ^([0-9]+)-([0-9]+)$ ]]; then
      lo=$((10#${BASH_REMATCH[1]}))
      hi=$((10#${BASH_REMATCH[2]}))
    elif [[ $item =~ ^[0-9]+$ ]]; then
      lo=$((10#$item))
      hi=$lo
    else
      return 1
    fi
    [ "$lo" -le "$hi" ] && [ "$hi" -lt 8192 ] || return 1
    for ((c = lo; c <= hi; c++)); do
      case $seen in *" $c "*) continue ;; esac
      seen+="$c "
      out+="$c "
    done
  done
  printf '%s' "${out% }"
}

# cpulist_format "0 1 2 3 8" -> "0-3,8" (runs of consecutive CPUs in the given order).
cpulist_format() {
  local out="" start="" prev="" c
  for c in $1; do
    if [ -n "$prev" ] && [ "$c" -eq $((prev + 1)) ]; then
      prev=$c
      continue
    fi
    if [ -n "$start" ]; then
      if [ "$start" = "$prev" ]; then out+="$start,"; else out+="$start-$prev,"; fi
    fi
    start=$c
    prev=$c
  done
  if [ -n "$start" ]; then
    if [ "$start" = "$prev" ]; then out+="$start"; else out+="$start-$prev"; fi
  fi
  printf '%s' "$out"
}

# mask_from_cpus "0 33" -> "2,00000001": the kernel's cpumask format (32-bit hex
# groups, most significant first, separated by commas).
mask_from_cpus() {
  local c max=0 ngroups g i words=() out=""
  for c in $1; do [ "$c" -gt "$max" ] && max=$c; done
  ngroups=$((max / 32 + 1))
  for ((i = 0; i < ngroups; i++)); do words[i]=0; done
  for c in $1; do
    g=$((c / 32))
    words[g]=$((words[g] | (1 << (c % 32))))
  done
  for ((i = ngroups - 1; i >= 0; i--)); do
    if [ "$i" -eq $((ngroups - 1)) ]; then
      out+=$(printf '%x' "${words[i]}")
    else
      out+=$(printf ',%08x' "${words[i]}")
    fi
  done
  printf '%s' "$out"
}

# cpus_from_mask "00000000,0000000f" -> "0 1 2 3" ("" for an empty mask).
cpus_from_mask() {
  local mask=${1//[[:space:]]/} groups=() n i g bit word out=""
  [ -n "$mask" ] || return 0
  IFS=, read -r -a groups <<<"$mask"
  n=${#groups[@]}
  for ((i = n - 1; i >= 0; i--)); do
    g=$((n - 1 - i))
    [[ ${groups[i]} =~ ^[0-9a-fA-F]+$ ]] || return 1
    word=$((16#${groups[i]}))
    for ((bit = 0; bit < 32; bit++)); do
      if (((word >> bit) & 1)); then out+="$((g * 32 + bit)) "; fi
    done
  done
  printf '%s' "${out% }"
}

# mask_as_list MASK -> "0-3" or "-" when empty: how masks are shown to people.
mask_as_list() {
  local cpus
  cpus=$(cpus_from_mask "$1") || {
    printf '%s' "$1"
    return 0
  }
  if [ -z "$cpus" ]; then printf -- '-'; else cpulist_format "$cpus"; fi
}

# The online CPUs, ascending, as "0 1 2 ...".
online_cpus() {
  local f=$SYS/devices/system/cpu/online d out=""
  if [ -r "$f" ]; then
    cpulist_expand "$(read_value "$f")"
    return
  fi
  for d in "$SYS"/devices/system/cpu/cpu[0-9]*; do
    [ -d "$d" ] && out+="${d##*/cpu} "
  done
  printf '%s' "$(tr ' ' '\n' <<<"$out" | sed '/^$/d' | sort -n | tr '\n' ' ' | sed 's/ $//')"
}

# physical_cores "0 1 4 5" -> the first CPU of each core among them (SMT siblings
# from topology/thread_siblings_list are dropped).
physical_cores() {
  local c sib kept=" " out="" s skip
  for c in $1; do
    sib=$(read_value "$SYS/devices/system/cpu/cpu$c/topology/thread_siblings_list")
    skip=0
    if [ -n "$sib" ]; then
      for s in $(cpulist_expand "$sib" || true); do
        case $kept in *" $s "*) skip=1 ;; esac
      done
    fi
    if [ "$skip" -eq 0 ]; then
      kept+="$c "
      out+="$c "
    fi
  done
  printf '%s' "${out% }"
}

# contains_word "LIST" WORD
contains_word() {
  case " $1 " in *" $2 "*) return 0 ;; esac
  return 1
}
