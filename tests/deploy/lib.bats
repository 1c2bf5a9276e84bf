#!/usr/bin/env bats
# shellcheck source-path=SCRIPTDIR/../..
# The helpers under deploy/lib/: CPU lists, the kernel's cpumask format, and
# the queue an interrupt serves from the names real drivers give them.

setup() {
  load helpers
  # shellcheck source=deploy/lib/common.sh
  . "$DEPLOY/lib/common.sh"
  # shellcheck source=deploy/lib/nic.sh
  . "$DEPLOY/lib/nic.sh"
}

@test "CPU lists: expand, format, reject" {
  [ "$(cpulist_expand 0-3,8)" = "0 1 2 3 8" ]
  [ "$(cpulist_expand 3,1,1-2)" = "3 1 2" ]
  [ "$(cpulist_format "0 1 2 3 8 10 11")" = "0-3,8,10-11" ]
  [ "$(cpulist_format "3 2")" = "3,2" ]
  [ "$(cpulist_format "5")" = "5" ]
  for bad in "" "3-1" "a" "1,,2" "-1" "1-" "99999"; do
    run cpulist_expand "$bad"
    [ "$status" -eq 1 ] || { echo "accepted '$bad'"; return 1; }
  done
}

@test "cpumasks as the kernel writes them, beyond 32 CPUs" {
  [ "$(mask_from_cpus "0")" = 1 ]
  [ "$(mask_from_cpus "3")" = 8 ]
  [ "$(mask_from_cpus "0 1 2 3")" = f ]
  [ "$(mask_from_cpus "33 0")" = "2,00000001" ]
  [ "$(mask_from_cpus "64")" = "1,00000000,00000000" ]
  [ "$(cpus_from_mask "00000000,0000000f")" = "0 1 2 3" ]
  [ "$(cpus_from_mask "2,00000001")" = "0 33" ]
  [ "$(cpus_from_mask "00")" = "" ]
  [ "$(mask_as_list "00000000,00000000")" = "-" ]
  [ "$(mask_as_list "ff,00000000")" = "32-39" ]
  for c in 0 5 31 32 63 64 100 127; do
    [ "$(cpus_from_mask "$(mask_from_cpus "$c")")" = "$c" ]
  done
}

@test "the queue of an interrupt, from the names drivers use" {
  while read -r name queue; do
    got=$(irq_queue_of eth0 "$name")
    [ "$got" = "$queue" ] || { echo "$name: got $got, want $queue"; return 1; }
  done <<'NAMES'
eth0-TxRx-0 0
eth0-TxRx-12 12
ens1f0-TxRx-3 3
eth0-rx-2 2
eth0-tx-2 2
ena-Tx-Rx-5 5
mlx5_comp7@pci:0000:3b:00.0 7
mlx5_async0@pci:0000:3b:00.0 -
virtio2-input.3 3
virtio2-output.3 3
virtio2-config -
eth0 -
eth0-3 3
eth0-fp-4 4
i40e-0000:3b:00.0:misc -
NAMES
}

@test "a virtio NIC: interrupts listed on the parent PCI device, named virtioN-input.i" {
  ROOT=$BATS_TEST_TMPDIR/root
  fake_cpus "$ROOT"
  mkdir -p "$ROOT/sys/devices/pci0000:00/0000:00:03.0/msi_irqs" "$ROOT/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/queues/rx-0" "$ROOT/sys/class/net" "$ROOT/proc"
  ln -s ../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0 "$ROOT/sys/class/net/eth0"
  ln -s ../../../virtio2 "$ROOT/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/device"
  for irq in 30 31 32 33 34; do : >"$ROOT/sys/devices/pci0000:00/0000:00:03.0/msi_irqs/$irq"; done
  printf '%s\n' '           CPU0       CPU1' \
    ' 30:          0          0  PCI-MSIX-0000:00:03.0   0-edge      virtio2-config' \
    ' 31:         10          0  PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0' \
    ' 32:          0         12  PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0' \
    ' 33:          5          0  PCI-MSIX-0000:00:03.0   3-edge      virtio2-input.1' \
    ' 34:          0          0  PCI-MSIX-0000:00:03.0   4-edge      virtio2-output.1' \
    ' 40:          0          0  PCI-MSIX-0000:00:04.0   0-edge      nvme0q0' >"$ROOT/proc/interrupts"
  set_roots "$ROOT" ""
  run nic_irqs eth0
  echo "$output"
  [ "$output" = "$(printf '%s\n' '30 - virtio2-config' '31 0 virtio2-input.0' '32 0 virtio2-output.0' '33 1 virtio2-input.1' '34 1 virtio2-output.1')" ]
}
