# shellcheck shell=bash
# shellcheck disable=SC2034  # DNSDIST_ADDR is read by the sourcing scripts
# dnsdist as the reference DNS-over-TCP frontend in frontend-bench.sh (sourced, not run, after
# bench_lib.sh, whose stop_pid it uses): one backend, everything on loopback, no console, no
# web server, no security polling (the machine has no way out), pinned with taskset.

DNSDIST_PID=""
DNSDIST_ADDR=""

# start_dnsdist PREFIX CPUS BACKEND TCP_THREADS CACHE: writes PREFIX.conf, starts dnsdist on a
# free port of $DNSDIST_LISTEN_IP (default 127.0.0.1) pinned to CPUS, forwarding to BACKEND (ADDR:PORT) with TCP_THREADS TCP
# worker threads and, when CACHE is 1, a packet cache on the default pool; returns once it
# answers www.example.com A over TCP (10 s at most). Output in PREFIX.log.
start_dnsdist() {
  local attempt
  for ((attempt = 1; attempt <= 5; attempt++)); do
    try_start_dnsdist "$@" && return 0
    # A port taken between the check and dnsdist's bind: another one.
    grep -q 'Address already in use' "$1.log" 2>/dev/null || return 1
  done
  return 1
}

try_start_dnsdist() {
  local prefix=$1 cpus=$2 backend=$3 threads=$4 cache=$5 port tries
  local ip=${DNSDIST_LISTEN_IP:-127.0.0.1}
  port=$(free_local_port)
  {
    echo "setSecurityPollSuffix('')"
    echo "setLocal('$ip:$port')"
    # The health check asks the backend for its own zone's SOA, so a plain authoritative
    # server counts as up.
    echo "newServer({address='$backend', checkName='example.com.', checkType='SOA'})"
    echo "setMaxTCPClientThreads($threads)"
    if [ "$cache" = 1 ]; then
      # As onepassd's default: 10000 entries, TTLs capped at a day.
      echo "pc = newPacketCache(10000, {maxTTL=86400, minTTL=0})"
      echo "getPool(''):setCache(pc)"
    fi
  } > "$prefix.conf"
  taskset -c "$cpus" dnsdist --supervised --disable-syslog -C "$prefix.conf" > "$prefix.log" 2>&1 &
  DNSDIST_PID=$!
  DNSDIST_ADDR="$ip:$port"
  for ((tries = 0; tries < 100; tries++)); do
    if [ -n "$(kdig -p "$port" "@$ip" +tcp +short +timeout=1 +retry=0 www.example.com A 2>/dev/null)" ]; then
      return 0
    fi
    if ! kill -0 "$DNSDIST_PID" 2>/dev/null; then
      echo "bench: dnsdist exited:" >&2
      cat "$prefix.log" >&2
      DNSDIST_PID=""
      return 1
    fi
    sleep 0.1
  done
  echo "bench: dnsdist did not answer within 10 s:" >&2
  cat "$prefix.log" >&2
  stop_dnsdist
  return 1
}

# Stops the dnsdist started last (stop_pid: SIGTERM, then SIGKILL after 10 s).
stop_dnsdist() {
  stop_pid "$DNSDIST_PID"
  DNSDIST_PID=""
}
