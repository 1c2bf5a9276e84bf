#!/usr/bin/env bash
# Installs every Debian 12 package onepass needs to build, test, benchmark and deploy.
# Idempotent; needs root (or sudo). Nothing is downloaded from anywhere but Debian's archive.
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev clang-format
  # libraries (README.md says why each one is there)
  libevent-dev libldns-dev libabsl-dev libssl-dev libidn2-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  # real protocol clients and peers for the end-to-end tests
  knot-dnsutils dnsutils ldnsutils nsd openssl curl whois netcat-openbsd
  # the DNS frontend: Unbound as a backend in its end-to-end test, dnsdist as the reference of
  # loadtest/frontend-bench.sh
  unbound dnsdist
  # metrics (promtool, a Prometheus server scraping in a test) and a PROXY v2 balancer
  prometheus haproxy
  # deploy scripts and their tests
  bats shellcheck iproute2 ethtool procps systemd
  # anycast scale-out: BGP announcements and the SYN hold of a planned drain (tests/deploy/anycast.bats)
  bird2 nftables
  # benchmarks
  linux-perf tcpdump python3
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian's nsd, unbound and dnsdist packages start a system daemon (port 53) on install; the
# tests and benchmarks start their own. (bird2's system daemon may run: the tests' BIRDs live
# in their own namespaces and sockets.)
for service in nsd unbound dnsdist; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$service" 2>/dev/null; then
    $SUDO systemctl stop "$service" || true
  fi
done
echo "install-deps: done"
