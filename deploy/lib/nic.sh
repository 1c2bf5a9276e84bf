# shellcheck shell=bash disable=SC2034 # globals here are read by the scripts that source this file
# What a NIC looks like: queues, their interrupts, channels, RSS (ethtool).
# Reads only; every path goes through SYS and PROC (lib/common.sh).

ETHTOOL=${ONEPASS_ETHTOOL:-ethtool}

nic_require() {
  local iface=$1 all
  [ -n "$iface" ] || die "no interface given"
  if [ ! -d "$SYS/class/net/$iface" ]; then
    all=$(find "$SYS/class/net" -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null) || all=""
    all=${all% }
    die "interface $iface not found in $(shown "$SYS/class/net") (interfaces here: ${all:-none})"
  fi
}

nic_dir() { printf '%s' "$SYS/class/net/$1"; }

# nic_queues IFACE rx|tx -> "0 1 2 3"
nic_queues() {
  local d out=""
  for d in "$(nic_dir "$1")/queues/$2"-*; do
    [ -d "$d" ] && out+="${d##*-} "
  done
  tr ' ' '\n' <<<"$out" | sed '/^$/d' | sort -n | tr '\n' ' ' | sed 's/ $//'
}

nic_numa_node() {
  local n
  n=$(read_value "$(nic_dir "$1")/device/numa_node")
  case $n in "" | -1) printf 'unknown' ;; *) printf '%s' "$n" ;; esac
}

# The CPUs on the NIC's NUMA node (device/local_cpulist) that are online;
# every online CPU when the device does not say (virtual devices).
nic_local_cpus() {
  local f online local_cpus c out=""
  f=$(nic_dir "$1")/device/local_cpulist
  online=$(online_cpus)
  if [ -r "$f" ] && local_cpus=$(cpulist_expand "$(read_value "$f")"); then
    for c in $local_cpus; do contains_word "$online" "$c" && out+="$c "; done
    printf '%s' "${out% }"
  else
    printf '%s' "$online"
  fi
}

nic_driver() {
  local link
  link=$(readlink "$(nic_dir "$1")/device/driver" 2>/dev/null) || link=""
  if [ -n "$link" ]; then printf '%s' "${link##*/}"; else printf 'virtual'; fi
}

# The queue an interrupt serves, from its name in /proc/interrupts, or "-".
# Names seen in drivers: eth0-TxRx-3 (ixgbe, i40e, ice), eth0-rx-3/eth0-tx-3,
# mlx5_comp3@pci:0000:3b:00.0 (mlx5), virtio2-input.3/-output.3 (virtio_net),
# ena-Tx-Rx-3 / eth0-3 (generic).
irq_queue_of() {
  local iface=$1 name=$2 rest
  if [[ $name =~ [Tt][Xx][Rr][Xx]-([0-9]+)$ || $name =~ [-_][RrTt][Xx][-_]([0-9]+)$ ]]; then
    printf '%s' "${BASH_REMATCH[1]}"
  elif [[ $name =~ ^mlx[0-9]+_comp([0-9]+)@ ]]; then
    printf '%s' "${BASH_REMATCH[1]}"
  elif [[ $name =~ ^virtio[0-9]+-(input|output)\.([0-9]+)$ ]]; then
    printf '%s' "${BASH_REMATCH[2]}"
  elif [[ $name == "$iface"* ]]; then
    rest=${name#"$iface"}
    if [[ $rest =~ ^[-_.](.*[-_.])?([0-9]+)$ ]]; then
      printf '%s' "${BASH_REMATCH[2]}"
    else
      printf -- '-'
    fi
  else
    printf -- '-'
  fi
}

# nic_irqs IFACE -> lines "IRQ QUEUE NAME": the device's MSI vectors
# (device/msi_irqs, or the parent's for virtio), named from /proc/interrupts;
# without MSI, the /proc/interrupts lines that carry the interface's name.
nic_irqs() {
  local iface=$1 dev msi="" irqs="" irq name
  dev=$(nic_dir "$iface")/device
  if [ -d "$dev/msi_irqs" ]; then
    msi=$dev/msi_irqs
  elif [ -d "$dev/../msi_irqs" ]; then
    msi=$dev/../msi_irqs
  fi
  if [ -n "$msi" ]; then
    irqs=$(find "$msi" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -n | tr '\n' ' ')
  fi
  [ -r "$PROC/interrupts" ] || return 0
  awk -v irqs=" $irqs" -v iface="$iface" '
    NR > 1 {
      irq = $1; sub(":", "", irq)
      if (irq !~ /^[0-9]+$/) next
      if (irqs != " ") { if (index(irqs, " " irq " ") == 0) next }
      else if (index($NF, iface) == 0) next
      print irq, $NF
    }' "$PROC/interrupts" | while read -r irq name; do
    printf '%s %s %s\n' "$irq" "$(irq_queue_of "$iface" "$name")" "$name"
  done
}

# irqbalance_pids -> the pids of running irqbalance processes (from PROC).
irqbalance_pids() {
  local f out=""
  for f in "$PROC"/[0-9]*/comm; do
    [ -r "$f" ] || continue
    if [ "$(read_value "$f")" = irqbalance ]; then
      f=${f%/comm}
      out+="${f##*/} "
    fi
  done
  printf '%s' "${out% }"
}

# eth_channels IFACE: sets CH_MAX_{RX,TX,COMB} and CH_{RX,TX,COMB} from
# ethtool -l ("" where the NIC says n/a). Returns 1 when unsupported.
eth_channels() {
  local out section="" key value
  CH_MAX_RX="" CH_MAX_TX="" CH_MAX_COMB="" CH_RX="" CH_TX="" CH_COMB=""
  out=$("$ETHTOOL" -l "$1" 2>/dev/null) || return 1
  while IFS= read -r line; do
    case $line in
      Pre-set*) section=max ;;
      Current*) section=cur ;;
      *:*)
        key=${line%%:*}
        value=$(printf '%s' "${line#*:}" | tr -d '[:space:]')
        [[ $value =~ ^[0-9]+$ ]] || value=""
        case $section:$key in
          max:RX) CH_MAX_RX=$value ;;
          max:TX) CH_MAX_TX=$value ;;
          max:Combined) CH_MAX_COMB=$value ;;
          cur:RX) CH_RX=$value ;;
          cur:TX) CH_TX=$value ;;
          cur:Combined) CH_COMB=$value ;;
        esac
        ;;
    esac
  done <<<"$out"
}

# eth_flowhash IFACE FLOW -> the RSS hash fields of FLOW (tcp4, tcp6) as ethtool -N letters
# (s: IP SA, d: IP DA, f: src port, n: dst port, ...); returns 1 if unsupported.
eth_flowhash() {
  local out letters=""
  out=$("$ETHTOOL" -n "$1" rx-flow-hash "$2" 2>/dev/null) || return 1
  grep -q 'L2DA' <<<"$out" && letters+=m
  grep -q 'VLAN tag' <<<"$out" && letters+=v
  grep -q 'L3 proto' <<<"$out" && letters+=t
  grep -q 'IP SA' <<<"$out" && letters+=s
  # (ethtool prints the same words for IPv6 addresses.)
  grep -q 'IP DA' <<<"$out" && letters+=d
  grep -q 'L4 bytes 0 & 1' <<<"$out" && letters+=f
  grep -q 'L4 bytes 2 & 3' <<<"$out" && letters+=n
  printf '%s' "${letters:-r}"
}

# eth_indir IFACE: sets INDIR_SIZE, INDIR_QUEUES (the distinct queues the RSS
# indirection table points to, ascending) and INDIR_FUNC (toeplitz, xor...);
# returns 1 if unsupported.
eth_indir() {
  local out
  INDIR_SIZE=0 INDIR_QUEUES="" INDIR_FUNC=""
  out=$("$ETHTOOL" -x "$1" 2>/dev/null) || return 1
  local entries
  entries=$(awk '/indirection table/ { t = 1; next } t && /^ *[0-9]+:/ { for (i = 2; i <= NF; i++) print $i; next } t && !/^ *[0-9]+:/ { t = 0 }' <<<"$out")
  [ -n "$entries" ] || return 1
  INDIR_SIZE=$(wc -l <<<"$entries")
  INDIR_QUEUES=$(sort -n -u <<<"$entries" | tr '\n' ' ' | sed 's/ $//')
  INDIR_FUNC=$(awk '/RSS hash function:/ { f = 1; next } f && /: on/ { sub(":", "", $1); print $1; exit }' <<<"$out")
}
