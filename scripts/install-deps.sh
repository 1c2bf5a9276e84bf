#!/usr/bin/env bash
# Installs every Debian 12 package onepass needs to build, test, benchmark and deploy.
# Idempotent; needs root (or sudo). Everything comes from Debian's archive but one npm package
# (a real RDAP client for the RDAP end-to-end test, pinned below), from the npm registry.
set -euo pipefail

# rdapper (https://github.com/jakejarvis/rdapper): an RDAP client library that takes its
# bootstrap data from the caller, so it can be pointed at a local server with no network.
rdapper_version=0.16.4
install_npm_packages() {
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  if ! command -v npm >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends npm >/dev/null
  fi
  if [ "$(npm ls -g --depth=0 rdapper 2>/dev/null | grep -o "rdapper@[0-9.]*")" = "rdapper@$rdapper_version" ]; then
    return 0
  fi
  echo "install-deps: npm install -g rdapper@$rdapper_version"
  $sudo npm install -g --no-audit --no-fund "rdapper@$rdapper_version" >/dev/null ||
    { echo "install-deps: npm install rdapper failed; is the npm registry reachable?" >&2; exit 1; }
}

packages=(
  # build
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev clang-format
  # libraries (README.md says why each one is there)
  libevent-dev libldns-dev libabsl-dev libssl-dev libidn2-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  # real protocol clients and peers for the end-to-end tests
  knot-dnsutils dnsutils ldnsutils nsd openssl curl whois netcat-openbsd
  # peers: Knot (zone-scale and performance comparisons), Unbound (a frontend backend),
  # dnsdist (the frontend benchmark's rival), BIND's signer (zones signed by another tool)
  knot unbound dnsdist bind9-utils
  # BIND 9.18's named: a DNS-over-TLS peer of loadtest/dot-bench.sh
  bind9
  # DNS over TLS: the scanner of tests/deploy/dot_testssl.bats, getdns's stub resolver client
  testssl.sh getdns-utils
  # DNS over TLS as stubs and resolvers use it (tests/integration/dns/dns_dot_resolvers_test.cc):
  # stubby, getdns's stub resolver daemon, and Knot Resolver (kresd) forwarding over TLS
  stubby knot-resolver
  # the io_uring worker loop (--io=uring)
  liburing-dev
  # TLS 1.3 engine interoperability (issue 39): NSS's tstclnt, Go's crypto/tls, BoringSSL,
  # GnuTLS's gnutls-cli
  libnss3-tools golang-go android-libboringssl-dev gnutls-bin
  # the AF_XDP path (--xdp): its XDP program's loader and AF_XDP sockets, xdp-loader to inspect
  libxdp-dev libbpf-dev xdp-tools
  # metrics (promtool, a Prometheus server scraping in a test) and a PROXY v2 balancer
  prometheus haproxy
  # deploy scripts and their tests
  bats shellcheck iproute2 ethtool procps systemd
  # anycast scale-out: BGP announcements and the SYN hold of a planned drain (tests/deploy/anycast.bats)
  bird2 nftables
  # benchmarks; GnuTLS and wolfSSL only for loadtest/tls_library_bench, the measured TLS
  # library choice (server/tls/README.md)
  linux-perf tcpdump python3 libgnutls28-dev libwolfssl-dev
  # peers of the load tester (tests/loadtest/peer_agreement.bats): dnsperf -m tcp; kxdpgun is in
  # knot-dnsutils
  dnsperf
  # the RDAP client of the RDAP end-to-end test (rdapper, from npm: install_npm_packages;
  # npm is in nodejs here, in Debian's own npm package elsewhere: command -v npm checks it)
  nodejs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  install_npm_packages
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
# The DNS servers among the packages (nsd, knot, unbound, dnsdist, named, stubby, kresd) would
# start system daemons on port 53 when installed; the tests start their own. policy-rc.d
# (invoke-rc.d(8)) tells the maintainer scripts not to start anything, for the length of this
# install only.
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# written by onepass scripts/install-deps.sh for one install\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 0755 "$policy"
  own_policy=1
fi
status=0
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?
[ -z "$own_policy" ] || $SUDO rm -f "$policy"
[ "$status" -eq 0 ] || { echo "install-deps: apt-get install failed ($status); is Debian's archive reachable?" >&2; exit "$status"; }
# A daemon started anyway (a policy-rc.d that was already there): stop it.
# (bird2's system daemon may run: the tests' BIRDs live in their own namespaces and sockets.)
if command -v systemctl >/dev/null 2>&1; then
  for unit in nsd knot unbound dnsdist named stubby kresd@1; do
    if systemctl is-active --quiet "$unit" 2>/dev/null; then $SUDO systemctl stop "$unit" || true; fi
  done
fi
install_npm_packages
echo "install-deps: done"
