# shellcheck shell=bash
# The plan behind `onepass-rss plan` and `onepass-rss apply`: one code path;
# DRY_RUN=1 (plan) prints each change, DRY_RUN=0 (apply) also saves and makes
# it (lib/state.sh). Uses IFACE, IRQBALANCE_MODE, STATE_ROOT from onepass-rss.

describe_flowhash() {
  local letters=$1 out="" l
  for ((l = 0; l < ${#letters}; l++)); do
    case ${letters:l:1} in
      m) out+="L2 dst, " ;;
      v) out+="VLAN, " ;;
      t) out+="L3 proto, " ;;
      s) out+="src IP, " ;;
      d) out+="dst IP, " ;;
      f) out+="src port, " ;;
      n) out+="dst port, " ;;
      r) out+="nothing, " ;;
    esac
  done
  printf '%s' "${out%, }"
}

# ", bans: ..." from /etc/default/irqbalance, for show.
irqbalance_bans() {
  local f=$ETC/default/irqbalance cpus args
  [ -r "$f" ] || return 0
  cpus=$(sed -n 's/^IRQBALANCE_BANNED_CPULIST=//p' "$f" | tail -n 1 | tr -d '"')
  args=$(sed -n 's/^IRQBALANCE_ARGS=//p' "$f" | tail -n 1 | tr -d '"' | grep -o -- '--banirq=[0-9]*' | cut -d= -f2 | tr '\n' ',' | sed 's/,$//')
  printf '; banned CPUs %s, banned IRQs %s' "${cpus:--}" "${args:--}"
}

# choose_cpus IFACE OPT_CPUS LIMIT -> the CPUs for queues 0..N-1, in order.
choose_cpus() {
  local iface=$1 opt=$2 limit=$3 online local_cpus cpus c n=0 out=""
  online=$(online_cpus)
  local_cpus=$(nic_local_cpus "$iface")
  if [ -n "$opt" ]; then
    cpus=$(cpulist_expand "$opt") || die "--cpus $opt is not a CPU list like 0-3,8"
    for c in $cpus; do
      contains_word "$online" "$c" || die "CPU $c is not online (online: $(cpulist_format "$online"))"
      contains_word "$local_cpus" "$c" || warn "CPU $c is not on the NIC's NUMA node (its CPUs: $(cpulist_format "$local_cpus")): packets will cross the interconnect"
    done
    [ "$(physical_cores "$cpus")" = "$cpus" ] || warn "--cpus $opt puts two queues on SMT siblings of one core: they share its execution units"
    [ "$(wc -w <<<"$cpus")" -le "$limit" ] || die "--cpus lists $(wc -w <<<"$cpus") CPUs but $iface has at most $limit queues: list at most $limit"
    printf '%s' "$cpus"
    return
  fi
  cpus=$(physical_cores "$local_cpus")
  [ -n "$cpus" ] || die "found no online CPU for $iface"
  for c in $cpus; do
    [ "$n" -lt "$limit" ] || break
    out+="$c "
    n=$((n + 1))
  done
  if [ "$(wc -w <<<"$cpus")" -gt "$limit" ]; then
    warn "$iface has at most $limit queue(s): using $limit of the $(wc -w <<<"$cpus") local physical cores"
  fi
  printf '%s' "${out% }"
}

# Before a channel change the driver recreates its queues and interrupts:
# save every value we could need to restore while it still exists.
save_all_nic_values() {
  local iface=$1 f irq files=()
  [ "$DRY_RUN" -eq 1 ] && return 0
  files=("$(nic_dir "$iface")"/queues/rx-*/rps_cpus "$(nic_dir "$iface")"/queues/tx-*/xps_cpus)
  while read -r irq _ _; do
    if [ -n "$irq" ]; then files+=("$PROC/irq/$irq/smp_affinity_list"); fi
  done < <(nic_irqs "$iface")
  for f in "${files[@]}"; do
    # Only values the kernel lets us read (XPS of a single-queue device it does not).
    if cat "$f" >/dev/null 2>&1; then state_save file "$f" "$(read_value "$f")"; fi
  done
  return 0
}

# Replaces this interface's block in /etc/default/irqbalance (or adds it),
# merging with the bans already there. Prints the new content to stdout.
irqbalance_config() {
  local iface=$1 cpus=$2 irqs=$3 f=$ETC/default/irqbalance begin end kept args banned irq
  begin="# BEGIN onepass-rss $iface"
  end="# END onepass-rss $iface"
  kept=""
  [ -r "$f" ] && kept=$(sed "/^$begin/,/^$end/d" "$f")
  args=$(sed -n 's/^IRQBALANCE_ARGS=//p' <<<"$kept" | tail -n 1 | sed 's/^"//; s/"$//')
  banned=$(sed -n 's/^IRQBALANCE_BANNED_CPULIST=//p' <<<"$kept" | tail -n 1 | tr -d '"')
  if [ -n "$banned" ] && banned=$(cpulist_expand "$banned"); then
    for irq in $cpus; do contains_word "$banned" "$irq" || banned+=" $irq"; done
    cpus=$(tr ' ' '\n' <<<"$banned" | sort -n | tr '\n' ' ' | sed 's/ $//')
  fi
  for irq in $irqs; do
    case " $args " in *" --banirq=$irq "*) ;; *) args="${args:+$args }--banirq=$irq" ;; esac
  done
  [ -n "$kept" ] && printf '%s\n' "$kept"
  printf '%s (onepass-rss rollback %s removes this block)\n' "$begin" "$iface"
  printf '# irqbalance must not move the RSS queue interrupts, nor put other interrupts on their CPUs.\n'
  printf 'IRQBALANCE_BANNED_CPULIST=%s\n' "$(cpulist_format "$cpus")"
  printf 'IRQBALANCE_ARGS="%s"\n' "$args"
  printf '%s\n' "$end"
}

# /etc/default/onepass with ONEPASS_CPU_FLAGS set, other lines kept.
onepass_defaults() {
  local flags=$1 f=$ETC/default/onepass
  if [ -r "$f" ] && grep -q '^ONEPASS_CPU_FLAGS=' "$f"; then
    sed "s|^ONEPASS_CPU_FLAGS=.*|ONEPASS_CPU_FLAGS=\"$flags\"|" "$f"
    return
  fi
  if [ -r "$f" ]; then
    cat "$f"
  else
    printf '# Read by onepass@.service (EnvironmentFile=/etc/default/onepass).\n'
  fi
  printf '# Written by onepass-rss apply: one worker per RSS queue, on the CPU of that queue.\n'
  printf 'ONEPASS_CPU_FLAGS="%s"\n' "$flags"
}

step_irqbalance() {
  local iface=$1 cpus=$2 irqs=$3 pids f=$ETC/default/irqbalance real=0 tmp
  pids=$(irqbalance_pids)
  if [ -z "$SYSROOT" ] && [ "$ETC" = /etc ]; then real=1; fi
  if [ -z "$irqs" ]; then
    say "  keep   no queue interrupts to protect from irqbalance (virtual device)"
    return
  fi
  case $IRQBALANCE_MODE in
    leave)
      [ -z "$pids" ] || loud "irqbalance (pid $pids) runs and --irqbalance leave was given: it may move the queue interrupts again"
      say "  keep   irqbalance left alone (--irqbalance leave)"
      ;;
    stop)
      if [ -z "$pids" ]; then
        say "  keep   irqbalance is not running"
      else
        loud "stopping irqbalance: from now on NO interrupt on this host is rebalanced (rollback starts it again)"
        if [ "$real" -eq 1 ] && command -v systemctl >/dev/null 2>&1; then
          change_cmd service irqbalance stopped "systemctl stop irqbalance" -- systemctl stop irqbalance || true
        else
          say "  note   systemctl stop irqbalance (not run: not the real system, or no systemctl)"
        fi
      fi
      ;;
    ban)
      if [ "$real" -eq 1 ] && [ -n "$pids" ] && ! command -v systemctl >/dev/null 2>&1; then
        loud "irqbalance runs but systemctl is missing: restart irqbalance by hand after apply so it reads the bans"
      fi
      if [ -z "$pids" ] && [ ! -e "$f" ]; then
        say "  keep   irqbalance is neither installed nor running: nothing to ban"
        return
      fi
      tmp=$(mktemp)
      irqbalance_config "$iface" "$cpus" "$irqs" >"$tmp"
      change_etc "$f" "$tmp"
      rm -f "$tmp"
      if [ -n "$pids" ]; then
        if [ "$real" -eq 1 ] && command -v systemctl >/dev/null 2>&1; then
          change_cmd service irqbalance running "systemctl restart irqbalance (rereads the bans)" -- systemctl restart irqbalance || true
        else
          say "  note   systemctl restart irqbalance (not run: not the real system, or no systemctl)"
        fi
      fi
      ;;
  esac
}

plan_and_apply() {
  local iface=$1 opt_cpus=$2 rxq txq limit mode cpus n i cpu irqs="" irq q tmp
  nic_require "$iface"
  rxq=$(nic_queues "$iface" rx)
  txq=$(nic_queues "$iface" tx)
  mode=fixed
  if eth_channels "$iface"; then
    if [ -n "$CH_MAX_COMB" ] && [ "$CH_MAX_COMB" -gt 0 ]; then
      mode=combined
    elif [ -n "$CH_MAX_RX" ] && [ -n "$CH_MAX_TX" ] && [ "$CH_MAX_RX" -gt 0 ] && [ "$CH_MAX_TX" -gt 0 ]; then
      mode=rxtx
    fi
  fi
  case $mode in
    combined) limit=$CH_MAX_COMB ;;
    rxtx) limit=$((CH_MAX_RX < CH_MAX_TX ? CH_MAX_RX : CH_MAX_TX)) ;;
    fixed)
      limit=$(wc -w <<<"$rxq")
      [ "$(wc -w <<<"$txq")" -lt "$limit" ] && limit=$(wc -w <<<"$txq")
      ;;
  esac
  [ "$limit" -gt 0 ] || die "$iface has no receive queues in $(shown "$(nic_dir "$iface")/queues")"
  cpus=$(choose_cpus "$iface" "$opt_cpus" "$limit")
  n=$(wc -w <<<"$cpus")
  read -r -a cpu_of <<<"$cpus"

  if [ "$DRY_RUN" -eq 1 ]; then
    say "plan for $iface (dry run: nothing is changed): $n queue(s) on CPUs $(cpulist_format "$cpus")"
  else
    say "apply for $iface: $n queue(s) on CPUs $(cpulist_format "$cpus")"
    state_open "$STATE_ROOT/$iface"
  fi

  say "channels"
  local changed=0
  if { [ "$mode" = combined ] && [ "${CH_COMB:-0}" != "$n" ]; } ||
    { [ "$mode" = rxtx ] && { [ "${CH_RX:-0}" != "$n" ] || [ "${CH_TX:-0}" != "$n" ]; }; }; then
    loud "changing the channel count restarts $iface's queues: traffic stops for a moment (use a maintenance window)"
  fi
  case $mode in
    combined)
      if [ "${CH_COMB:-0}" != "$n" ]; then
        save_all_nic_values "$iface"
        change_cmd channels "$iface" "combined ${CH_COMB:-0}" "$ETHTOOL -L $iface combined $n   (was combined ${CH_COMB:-0})" -- "$ETHTOOL" -L "$iface" combined "$n" || die "cannot set $n channels on $iface: nothing else changed; run '$PROG rollback $iface'"
        changed=1
      else
        say "  keep   combined $n"
      fi
      ;;
    rxtx)
      if [ "${CH_RX:-0}" != "$n" ] || [ "${CH_TX:-0}" != "$n" ]; then
        save_all_nic_values "$iface"
        change_cmd channels "$iface" "rx ${CH_RX:-0} tx ${CH_TX:-0}" "$ETHTOOL -L $iface rx $n tx $n   (was rx ${CH_RX:-0} tx ${CH_TX:-0})" -- "$ETHTOOL" -L "$iface" rx "$n" tx "$n" || die "cannot set $n channels on $iface: nothing else changed; run '$PROG rollback $iface'"
        changed=1
      else
        say "  keep   rx $n tx $n"
      fi
      ;;
    fixed)
      say "  keep   $(wc -w <<<"$rxq") rx / $(wc -w <<<"$txq") tx queues (the driver does not let ethtool -L change them)"
      [ "$(wc -w <<<"$rxq")" -le "$n" ] || warn "RSS also delivers to queues $n..$(($(wc -w <<<"$rxq") - 1)), which no worker CPU serves: lower the queue count in the driver or add CPUs"
      ;;
  esac

  say "RSS"
  local expect
  expect=$(seq -s ' ' 0 $((n - 1)))
  if [ "$changed" -eq 1 ] && [ "$DRY_RUN" -eq 1 ]; then
    say "  keep   indirection table: the driver respreads its default table over queues 0-$((n - 1)) on the channel change (apply checks it)"
  elif eth_indir "$iface"; then
    if [ "$INDIR_QUEUES" = "$expect" ]; then
      say "  keep   indirection table: $INDIR_SIZE entries over queues $(cpulist_format "$INDIR_QUEUES")"
    else
      change_cmd indir "$iface" default "$ETHTOOL -X $iface equal $n   (table was over queues $(cpulist_format "$INDIR_QUEUES"))" -- "$ETHTOOL" -X "$iface" equal "$n" || true
    fi
  else
    say "  keep   indirection table: not reported by the driver"
  fi
  local hash flow
  # Both ports in the hash, or every connection from one client address (a
  # resolver, a load balancer) lands on one queue.
  for flow in tcp4 tcp6; do
    if [ "$n" -eq 1 ]; then
      say "  keep   $flow hash: one queue, nothing to spread"
    elif hash=$(eth_flowhash "$iface" "$flow") && [ "$hash" = r ]; then
      say "  keep   $flow hash: the driver reports no hash fields to choose (its RSS, if any, is fixed)"
    elif hash=$(eth_flowhash "$iface" "$flow"); then
      if [[ $hash == *s* && $hash == *d* && $hash == *f* && $hash == *n* ]]; then
        say "  keep   $flow hash on $(describe_flowhash "$hash")"
      else
        change_cmd flowhash "$flow" "$hash" "$ETHTOOL -N $iface rx-flow-hash $flow sdfn   (was $(describe_flowhash "$hash"))" -- "$ETHTOOL" -N "$iface" rx-flow-hash "$flow" sdfn || true
      fi
    else
      say "  keep   $flow hash: not reported by the driver (ethtool -n $iface rx-flow-hash $flow)"
    fi
  done

  local all_irqs
  all_irqs=$(nic_irqs "$iface")
  for ((i = 0; i < n; i++)); do
    while read -r irq q _; do
      if [ -n "$irq" ] && [ "$q" = "$i" ]; then irqs+="$irq "; fi
    done <<<"$all_irqs"
  done
  # irqbalance first: once it has read its bans it cannot move the
  # interrupts pinned next.
  say "irqbalance"
  step_irqbalance "$iface" "$cpus" "${irqs% }"

  say "queues: IRQ of queue i on CPU i, XPS: CPU i sends on queue i, no RPS"
  for ((i = 0; i < n; i++)); do
    cpu=${cpu_of[i]}
    local found=0
    while read -r irq q _; do
      if [ -z "$irq" ] || [ "$q" != "$i" ]; then continue; fi
      found=1
      change_file "$PROC/irq/$irq/smp_affinity_list" "$cpu" list
    done <<<"$all_irqs"
    if [ "$found" -eq 0 ]; then
      if [ "$changed" -eq 1 ] && [ "$DRY_RUN" -eq 1 ]; then
        say "  note   queue $i: its interrupt appears with the channel change; apply pins it to CPU $cpu"
      elif [ -n "$all_irqs" ]; then
        warn "queue $i of $iface has no interrupt named after it in $(shown "$PROC/interrupts"): pin it by hand to CPU $cpu"
      fi
    fi
    change_file "$(nic_dir "$iface")/queues/rx-$i/rps_cpus" 0 mask
    change_file "$(nic_dir "$iface")/queues/tx-$i/xps_cpus" "$(mask_from_cpus "$cpu")" mask
  done

  local flags
  flags="--cpus $(cpulist_format "$cpus")"
  say "onepassd"
  tmp=$(mktemp)
  onepass_defaults "$flags" >"$tmp"
  change_etc "$ETC/default/onepass" "$tmp"
  rm -f "$tmp"
  say ""
  say "server flags: $flags"
  if [ "$DRY_RUN" -eq 1 ]; then
    say "plan: $CHANGE_COUNT change(s); run '$PROG apply $iface${opt_cpus:+ --cpus $opt_cpus}' to make them"
  elif [ "$CHANGE_FAILURES" -gt 0 ]; then
    die "$CHANGE_FAILURES change(s) failed (see above); the originals are saved: '$PROG rollback $iface' restores them"
  else
    say "applied $CHANGE_COUNT change(s); originals saved in $(shown "$STATE_DIR"); '$PROG rollback $iface' restores them"
  fi
}
