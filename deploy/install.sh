#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Installs onepassd and what runs it: the binary, the systemd unit
# (onepass@.service), the defaults files, the deploy scripts (onepass-rss,
# onepass-sysctl; for anycast hosts onepass-health-agent with its unit and
# onepass-bird-config with its BIRD template, not enabled) and the server
# sysctl profile (applied, originals saved).
# Every file it replaces is saved; --uninstall puts everything back.
#
#   deploy/install.sh [--binary PATH] [--prefix /usr/local] [--no-sysctl] [--dry-run]
#   deploy/install.sh --uninstall [--dry-run]          (same as --rollback)
#
# Options:
#   --binary PATH   onepassd to install (default: $ONEPASSD, else the newest
#                   build/*/server/onepassd)
#   --prefix DIR    where bin/, sbin/ and lib/onepass-deploy/ go (/usr/local)
#   --no-sysctl     do not apply deploy/sysctl/90-onepass.conf
#   --root DIR      install into a tree instead of / (tests, images)
#   --force         uninstall even though onepass-rss changes are still applied
#   --dry-run       print what would be done; change nothing
# The defaults files in /etc/default are installed only where absent: yours
# are never overwritten.
set -euo pipefail

PROG=onepass-install
HERE=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib/common.sh
. "$HERE/lib/common.sh"
# shellcheck source=lib/state.sh
. "$HERE/lib/state.sh"

usage() {
  sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit "${1:-0}"
}

find_binary() {
  local given=$1 newest="" f
  if [ -n "$given" ]; then
    [ -x "$given" ] || die "--binary $given is not an executable file"
    printf '%s' "$given"
    return
  fi
  if [ -n "${ONEPASSD:-}" ] && [ -x "$ONEPASSD" ]; then
    printf '%s' "$ONEPASSD"
    return
  fi
  for f in "$HERE"/../build/*/server/onepassd; do
    [ -x "$f" ] || continue
    if [ -z "$newest" ] || [ "$f" -nt "$newest" ]; then newest=$f; fi
  done
  [ -n "$newest" ] || die "onepassd not found: build it (cmake --preset release && cmake --build build/release --target onepassd) or pass --binary PATH"
  readlink -f "$newest"
}

# Our own tools with the same roots, so a test tree stays a test tree.
root_args() {
  ROOT_ARGS=()
  if [ -n "$SYSROOT" ]; then ROOT_ARGS+=(--sysroot "$SYSROOT"); fi
  if [ "$DRY_RUN" -eq 1 ]; then ROOT_ARGS+=(--dry-run); fi
}

real_systemd() { [ -z "$SYSROOT" ] && [ -d /run/systemd/system ]; }

do_install() {
  local binary=$1 prefix=$2 sysctl=$3 dest lib f tmp
  dest=$SYSROOT$prefix
  lib=$dest/lib/onepass-deploy
  if [ "$DRY_RUN" -eq 1 ]; then say "install (dry run: nothing is changed)"; else say "install"; fi
  state_open "$STATE_ROOT"
  install_file "$binary" "$dest/bin/onepassd" 0755
  install_file "$HERE/onepass-rss" "$lib/onepass-rss" 0755
  install_file "$HERE/onepass-sysctl" "$lib/onepass-sysctl" 0755
  install_file "$HERE/onepass-health-agent" "$lib/onepass-health-agent" 0755
  install_file "$HERE/onepass-bird-config" "$lib/onepass-bird-config" 0755
  for f in "$HERE"/bird/*; do install_file "$f" "$lib/bird/${f##*/}" 0644; done
  for f in "$HERE"/lib/*.sh; do install_file "$f" "$lib/lib/${f##*/}" 0644; done
  for f in "$HERE"/sysctl/*.conf; do install_file "$f" "$lib/sysctl/${f##*/}" 0644; done
  for f in "$HERE"/udp/*; do install_file "$f" "$lib/udp/${f##*/}" 0644; done
  install_file "$HERE/README.md" "$lib/README.md" 0644
  # The installed directory is a whole deploy/: its install.sh --uninstall works.
  install_file "$HERE/install.sh" "$lib/install.sh" 0755
  install_file "$HERE/systemd/onepass@.service" "$lib/systemd/onepass@.service" 0644
  install_file "$HERE/systemd/onepass-health-agent.service" "$lib/systemd/onepass-health-agent.service" 0644
  install_file "$HERE/systemd/onepass-anycast.conf" "$lib/systemd/onepass-anycast.conf" 0644
  for f in "$HERE"/default/*; do install_file "$f" "$lib/default/${f##*/}" 0644; done
  tmp=$(mktemp -d)
  for f in onepass-rss onepass-sysctl onepass-health-agent onepass-bird-config; do
    printf '#!/bin/sh\nexec %s/lib/onepass-deploy/%s "$@"\n' "$prefix" "$f" >"$tmp/$f"
    install_file "$tmp/$f" "$dest/sbin/$f" 0755
  done
  sed "s|/usr/local/bin/onepassd|$prefix/bin/onepassd|; s|/usr/local/lib/onepass-deploy|$prefix/lib/onepass-deploy|" \
    "$HERE/systemd/onepass@.service" >"$tmp/unit"
  install_file "$tmp/unit" "$ETC/systemd/system/onepass@.service" 0644
  sed "s|/usr/local/lib/onepass-deploy|$prefix/lib/onepass-deploy|g" \
    "$HERE/systemd/onepass-health-agent.service" >"$tmp/agent-unit"
  install_file "$tmp/agent-unit" "$ETC/systemd/system/onepass-health-agent.service" 0644
  rm -rf "$tmp"
  for f in "$HERE"/default/*; do
    if [ -e "$ETC/default/${f##*/}" ] && ! cmp -s "$f" "$ETC/default/${f##*/}"; then
      say "  keep   $(shown "$ETC/default/${f##*/}") (yours: not overwritten)"
    else
      install_file "$f" "$ETC/default/${f##*/}" 0644
    fi
  done
  if [ "$sysctl" -eq 1 ]; then
    root_args
    "$HERE/onepass-sysctl" apply server "${ROOT_ARGS[@]}" | sed 's/^/  /'
  fi
  if real_systemd && [ "$DRY_RUN" -eq 0 ]; then systemctl daemon-reload; fi
  say ""
  say "next: onepass-rss plan IFACE; onepass-rss apply IFACE; edit /etc/default/onepass-dns;"
  say "      systemctl enable --now onepass@dns   (or onepass@ocsp, onepass@whois)"
  [ "$CHANGE_FAILURES" -eq 0 ] || die "$CHANGE_FAILURES file(s) could not be installed; '$0 --uninstall' undoes the rest"
}

no_command_kinds() { return 0; }

do_uninstall() {
  local prefix=$1 force=$2 d lib
  lib=$SYSROOT$prefix/lib/onepass-deploy
  for d in "$VARLIB"/onepass-rss/*/; do
    [ -d "$d" ] || continue
    d=${d%/}
    if [ "$force" -eq 0 ]; then
      die "onepass-rss changes to ${d##*/} are still applied: run 'onepass-rss rollback ${d##*/}' first (or --force)"
    fi
    loud "leaving the onepass-rss changes to ${d##*/} in place (--force); their originals stay in $(shown "$d")"
  done
  [ "$(id -u)" -eq 0 ] || [ -n "$SYSROOT" ] || [ "$DRY_RUN" -eq 1 ] || die "uninstall changes /usr/local and /etc: run it as root"
  if [ -d "$VARLIB/onepass-sysctl/server" ]; then
    root_args
    "$HERE/onepass-sysctl" rollback server "${ROOT_ARGS[@]}" | sed 's/^/  /'
  fi
  STATE_DIR=$STATE_ROOT
  state_rollback no_command_kinds "" ""
  if [ "$DRY_RUN" -eq 0 ]; then
    for d in "$lib/lib" "$lib/sysctl" "$lib/systemd" "$lib/default" "$lib/bird" "$lib"; do rmdir "$d" 2>/dev/null || true; done
    if real_systemd; then systemctl daemon-reload; fi
  fi
}

main() {
  local binary="" prefix=/usr/local sysctl=1 root="" uninstall=0 force=0
  while [ $# -gt 0 ]; do
    case $1 in
      --binary) binary=${2:?--binary needs a path}; shift ;;
      --prefix) prefix=${2:?--prefix needs a directory}; shift ;;
      --no-sysctl) sysctl=0 ;;
      --root) root=${2:?--root needs a directory}; shift ;;
      --uninstall | --rollback) uninstall=1 ;;
      --force) force=1 ;;
      --dry-run) DRY_RUN=1 ;;
      -h | --help) usage 0 ;;
      *) die "unknown option $1 (see $0 --help)" ;;
    esac
    shift
  done
  case $prefix in /*) prefix=${prefix%/} ;; *) die "--prefix must be an absolute path" ;; esac
  set_roots "$root" ""
  STATE_ROOT=$VARLIB/onepass-install/state
  if [ "$uninstall" -eq 1 ]; then
    do_uninstall "$prefix" "$force"
    return
  fi
  [ "$DRY_RUN" -eq 1 ] || require_root_to_change "install"
  do_install "$(find_binary "$binary")" "$prefix" "$sysctl"
}

main "$@"
