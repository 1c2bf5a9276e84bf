# shellcheck shell=bash
# A fake sysfs/procfs tree of a multi-queue NIC, shared by the bats tests
# (which build it) and fake-ethtool (which changes it as a driver would).
#
# Layout under ROOT, as the kernel shows it:
#   sys/devices/system/cpu/{online,cpuN/topology/thread_siblings_list}
#       8 CPUs, SMT pairs (i, i+4) as on a 4-core, 8-thread x86 machine
#   sys/class/net/IFACE/device/{numa_node,local_cpulist,driver,msi_irqs/N}
#   sys/class/net/IFACE/queues/{rx-i/rps_cpus,tx-i/xps_cpus}
#   proc/interrupts, proc/irq/N/smp_affinity_list
#   .fake-nic/IFACE/{max_combined,combined,indir,tcp4,tcp6}: what ethtool reports
#       (tcp4 hashes on addresses only, as some drivers default; tcp6 on ports too)
# IRQ 39 is the NIC's link interrupt ("eth0"); queue i has IRQ 40+i
# ("eth0-TxRx-i").

FAKE_NCPUS=8

fake_cpus() {
  local root=$1 c
  mkdir -p "$root/sys/devices/system/cpu"
  echo "0-$((FAKE_NCPUS - 1))" >"$root/sys/devices/system/cpu/online"
  for ((c = 0; c < FAKE_NCPUS; c++)); do
    mkdir -p "$root/sys/devices/system/cpu/cpu$c/topology"
    echo "$((c % 4)),$((c % 4 + 4))" >"$root/sys/devices/system/cpu/cpu$c/topology/thread_siblings_list"
  done
}

# fake_nic_layout ROOT IFACE N: queues and interrupts for N channels. Queues
# and IRQs that appear get the kernel's defaults; those beyond N vanish.
fake_nic_layout() {
  local root=$1 iface=$2 n=$3 net dev i d irq
  net=$root/sys/class/net/$iface
  dev=$net/device
  mkdir -p "$dev/msi_irqs" "$net/queues" "$root/proc/irq/39"
  for ((i = 0; i < n; i++)); do
    mkdir -p "$net/queues/rx-$i" "$net/queues/tx-$i" "$root/proc/irq/$((40 + i))"
    [ -e "$net/queues/rx-$i/rps_cpus" ] || echo 00 >"$net/queues/rx-$i/rps_cpus"
    [ -e "$net/queues/rx-$i/rps_flow_cnt" ] || echo 0 >"$net/queues/rx-$i/rps_flow_cnt"
    [ -e "$net/queues/tx-$i/xps_cpus" ] || echo 00 >"$net/queues/tx-$i/xps_cpus"
    [ -e "$root/proc/irq/$((40 + i))/smp_affinity_list" ] || echo "0-$((FAKE_NCPUS - 1))" >"$root/proc/irq/$((40 + i))/smp_affinity_list"
  done
  [ -e "$root/proc/irq/39/smp_affinity_list" ] || echo "0-$((FAKE_NCPUS - 1))" >"$root/proc/irq/39/smp_affinity_list"
  for d in "$net"/queues/rx-* "$net"/queues/tx-*; do
    [ "${d##*-}" -lt "$n" ] || rm -rf "$d"
  done
  for d in "$root"/proc/irq/*; do
    irq=${d##*/}
    if [ "$irq" -ge $((40 + n)) ] && [ "$irq" -lt 100 ]; then rm -rf "$d"; fi
  done
  rm -f "$dev"/msi_irqs/*
  : >"$dev/msi_irqs/39"
  {
    printf '           CPU0       CPU1       CPU2       CPU3       CPU4       CPU5       CPU6       CPU7\n'
    printf '  0:         35          0          0          0          0          0          0          0   IO-APIC   2-edge      timer\n'
    printf ' 39:          2          0          0          0          0          0          0          0   IR-PCI-MSI 524288-edge      %s\n' "$iface"
    for ((i = 0; i < n; i++)); do
      : >"$dev/msi_irqs/$((40 + i))"
      printf ' %d:     %6d          0          0          0          0          0          0          0   IR-PCI-MSI %d-edge      %s-TxRx-%d\n' $((40 + i)) $((1000 + i)) $((524289 + i)) "$iface" "$i"
    done
    printf 'NMI:          0          0          0          0          0          0          0          0   Non-maskable interrupts\n'
  } >"$root/proc/interrupts"
  echo "$n" >"$root/.fake-nic/$iface/combined"
}

# fake_nic ROOT IFACE QUEUES MAX [LOCAL_CPULIST]: a NIC with QUEUES channels of MAX.
fake_nic() {
  local root=$1 iface=$2 n=$3 max=$4 local_cpus=${5:-0-7} dev
  dev=$root/sys/class/net/$iface/device
  mkdir -p "$dev" "$root/.fake-nic/$iface" "$root/sys/bus/pci/drivers/ixgbe"
  echo 0 >"$dev/numa_node"
  echo "$local_cpus" >"$dev/local_cpulist"
  ln -s ../../../../bus/pci/drivers/ixgbe "$dev/driver"
  echo "$max" >"$root/.fake-nic/$iface/max_combined"
  echo default >"$root/.fake-nic/$iface/indir"
  echo sd >"$root/.fake-nic/$iface/tcp4"
  echo sdfn >"$root/.fake-nic/$iface/tcp6"
  fake_nic_layout "$root" "$iface" "$n"
}
