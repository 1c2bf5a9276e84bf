# shellcheck shell=bash
# An nsd.conf for benchmarks: NSD as a peer or a backend on loopback, everything in one scratch
# folder, no chroot, no privilege drop, one server process, no remote control. Sourced by
# zone_scale.sh and frontend-bench.sh.

# write_nsd_conf FILE WORK_DIR PORT ZONE_NAME ZONE_FILE [EXTRA_SERVER_LINE...]
# ZONE_FILE is relative to WORK_DIR; each EXTRA_SERVER_LINE goes into the server: clause.
# NSD listens on $NSD_LISTEN_IP (default 127.0.0.1).
write_nsd_conf() {
  local file=$1 work=$2 port=$3 zone_name=$4 zone_file=$5
  shift 5
  {
    cat <<CONF
server:
  ip-address: ${NSD_LISTEN_IP:-127.0.0.1}@$port
  do-ip6: no
  username: ""
  chroot: ""
  zonesdir: "$work"
  pidfile: "$work/nsd.pid"
  database: ""
  zonelistfile: "$work/zone.list"
  xfrdfile: "$work/xfrd.state"
  xfrdir: "$work"
  server-count: 1
  verbosity: 1
CONF
    local line
    for line in "$@"; do printf '  %s\n' "$line"; done
    cat <<CONF
remote-control:
  control-enable: no
zone:
  name: $zone_name
  zonefile: $zone_file
CONF
  } > "$file"
}
